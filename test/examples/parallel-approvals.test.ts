import { describe, expect, it } from 'vitest'
import { runExample } from './run-example.js'

describe('examples/parallel-approvals', () => {
  it('refunds exactly the approved items of a batch with mixed answers and prints item -> answer -> executed', async () => {
    const run = await runExample('examples/parallel-approvals/main.ts', [
      '--answers',
      'yes,no,yes,cancel,yes',
    ])
    expect(run.stdout).toMatch(/order-1\s+yes\s+yes/)
    expect(run.stdout).toMatch(/order-2\s+no\s+no/)
    expect(run.stdout).toMatch(/order-3\s+yes\s+yes/)
    expect(run.stdout).toMatch(/order-4\s+cancel\s+no/)
    expect(run.stdout).toMatch(/order-5\s+yes\s+yes/)
    expect(run.stdout).toContain('OK: 3 of 5 refunded, each once; declined items never ran.')
    expect(run.code).toBe(0)
  }, 180_000)
})
