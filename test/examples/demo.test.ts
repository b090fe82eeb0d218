import { describe, expect, it } from 'vitest'
import { runExample } from './run-example.js'

const demo = (...args: string[]) => runExample('examples/refund-workflow/main.ts', ['--fresh', ...args])

describe('refund demo (npm run demo)', () => {
  it('executes the workflow refund exactly once when answered approve, and none when answered deny', async () => {
    const [approved, denied] = await Promise.all([demo('--answer', 'approve'), demo('--answer', 'deny')])
    expect(approved.stdout).toContain('/review/dec_')
    expect(approved.stdout).toContain('Outcome: approved; refund executed once')
    expect(approved.code).toBe(0)
    expect(denied.stdout).toContain('Outcome: declined (denied); refunds executed for')
    expect(denied.stdout).toMatch(/refunds executed for order-[a-z0-9]+: 0/)
    expect(denied.code).toBe(0)
  }, 180_000)

  it('declines a workflow choice or text answered "yes" as not approved, without a refund', async () => {
    const [select, input] = await Promise.all([demo('--answer', 'select'), demo('--answer', 'input')])
    for (const run of [select, input]) {
      expect(run.stdout).toMatch(
        /Outcome: declined \(not_approved\); refunds executed for order-[a-z0-9]+: 0/,
      )
      expect(run.code).toBe(0)
    }
  }, 180_000)

  it('runs the agent refund once on approve and never on deny (--agent)', async () => {
    const [approved, denied] = await Promise.all([
      demo('--agent', '--answer', 'approve'),
      demo('--agent', '--answer', 'deny'),
    ])
    expect(approved.stdout).toContain('asked by an agent')
    expect(approved.stdout).toContain('Outcome: approved; refund executed once')
    expect(approved.code).toBe(0)
    expect(denied.stdout).toMatch(/Outcome: declined \(denied\); refunds executed for order-[a-z0-9]+: 0/)
    expect(denied.code).toBe(0)
  }, 180_000)

  it('keeps an agent question answered "yes" as data, never a refund (--agent select and input)', async () => {
    const [select, input] = await Promise.all([
      demo('--agent', '--answer', 'select'),
      demo('--agent', '--answer', 'input'),
    ])
    for (const run of [select, input]) {
      expect(run.stdout).toMatch(
        /Outcome: answered "yes" \(data, never approval\); refunds executed for order-[a-z0-9]+: 0/,
      )
      expect(run.code).toBe(0)
    }
  }, 180_000)

  it('refuses an unknown --answer with exit code 2', async () => {
    const run = await demo('--answer', 'maybe')
    expect(run.stdout).toContain('--answer must be approve, deny, select or input')
    expect(run.code).toBe(2)
  }, 180_000)
})
