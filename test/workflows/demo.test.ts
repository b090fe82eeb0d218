import { spawn } from 'node:child_process'
import { describe, expect, it } from 'vitest'

function runDemo(args: readonly string[]): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'examples/refund-workflow/main.ts', '--fresh', ...args],
      {
        cwd: process.cwd(),
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    let stdout = ''
    child.stdout.on('data', (chunk) => {
      stdout += chunk
    })
    child.stderr.on('data', (chunk) => {
      stdout += chunk
    })
    child.on('close', (code) => resolve({ code, stdout }))
  })
}

describe('refund demo', () => {
  it('executes the refund exactly once when answered approve, and none when answered deny', async () => {
    const [approved, denied] = await Promise.all([
      runDemo(['--answer', 'approve']),
      runDemo(['--answer', 'deny']),
    ])
    expect(approved.stdout).toContain('/review/dec_')
    expect(approved.stdout).toContain('Outcome: approved; refund executed once')
    expect(approved.code).toBe(0)
    expect(denied.stdout).toContain('Outcome: declined (denied); refunds executed for')
    expect(denied.stdout).toMatch(/refunds executed for order-[a-z0-9]+: 0/)
    expect(denied.code).toBe(0)
  }, 180_000)
})
