import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createPusharyClient } from '../../src/pushary/client.js'
import { createPusharyDevServer } from '../../src/server/dev-server.js'
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

  it('documents every flag with --help and exits 0', async () => {
    for (const flag of ['--help', '-h']) {
      const run = await runExample('examples/refund-workflow/main.ts', [flag])
      expect(run.code).toBe(0)
      expect(run.stdout).toMatch(/^Usage: npm run demo -- \[options\]/)
      for (const documented of [
        '--answer <answer>',
        '--agent',
        '--model <p/name>',
        '--expire',
        '--fresh',
        '--port <n>',
        '--public-url <url>',
        '--timeout <s>',
        '--help, -h',
        'Ctrl-C cancels the questions',
      ]) {
        expect(run.stdout).toContain(documented)
      }
    }
    const unknown = await runExample('examples/refund-workflow/main.ts', ['--bogus'])
    expect(unknown.code).toBe(2)
    expect(unknown.stdout).toContain('Usage: npm run demo')
  }, 180_000)

  it.each([
    ['the workflow', []],
    ['the agent', ['--agent']],
  ])(
    'cancels the question %s opened when interrupted with Ctrl-C, then exits 130',
    async (_path, args) => {
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', 'examples/refund-workflow/main.ts', '--fresh', ...args],
        {
          cwd: process.cwd(),
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      )
      let output = ''
      const closed = new Promise<number | null>((resolveClosed) => child.once('close', resolveClosed))
      const seen = (pattern: RegExp) =>
        new Promise<RegExpExecArray>((resolveSeen, reject) => {
          const check = () => {
            const match = pattern.exec(output)
            if (match) resolveSeen(match)
          }
          child.stdout.on('data', check)
          void closed.then(() => reject(new Error(`the demo ended before ${pattern}:\n${output}`)))
        })
      child.stdout.on('data', (chunk) => {
        output += chunk
      })
      child.stderr.on('data', (chunk) => {
        output += chunk
      })
      const timer = setTimeout(() => child.kill('SIGKILL'), 170_000)
      try {
        // The interactive demo: link the phone the way a person does (the link's form post)...
        const [, link] = await seen(/tap "Link this phone"\):\n {2}(http\S+)\n/)
        const tapped = await fetch(link as string, { method: 'POST', redirect: 'manual' })
        expect(tapped.status).toBe(303)
        // ...then, once the question is on the phone, press Ctrl-C.
        const [, decisionId] = await seen(/reviewer link {2}http\S+\/review\/(dec_\w+)/)
        child.kill('SIGINT')
        expect(await closed, output).toBe(130)
        expect(output).toContain('Interrupted: cancelling the questions this demo opened')
        expect(output).toContain(`${decisionId} cancelled`)

        // The demo's own service, reopened on its database: the question is cancelled there.
        const [, dataDir] = /\(data in (\S+)\)/.exec(output) ?? []
        const service = await createPusharyDevServer({ dbPath: join(dataDir as string, 'demo.db'), port: 0 })
        try {
          const client = createPusharyClient({ baseUrl: service.baseUrl, apiKey: service.apiKey })
          expect((await client.decisions.get(decisionId as string)).status).toBe('cancelled')
          const pending = await client.decisions.list({ status: 'pending' })
          expect(pending.decisions).toEqual([])
        } finally {
          await service.close()
        }
      } finally {
        clearTimeout(timer)
      }
    },
    180_000,
  )
})
