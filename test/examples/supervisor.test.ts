import { describe, expect, it } from 'vitest'
import { runExample } from './run-example.js'

describe('examples/supervisor', () => {
  it("approves the sub-agent's refund at the supervisor once on approve, and never on deny", async () => {
    const [approved, denied] = await Promise.all([
      runExample('examples/supervisor/main.ts', ['--answer', 'approve']),
      runExample('examples/supervisor/main.ts', ['--answer', 'deny']),
    ])
    expect(approved.stdout).toContain('asked: "Refund 20 EUR for order_1?"')
    expect(approved.stdout).toContain(
      'Outcome: approved at the supervisor (issueRefund); refunds executed: 1',
    )
    expect(approved.code).toBe(0)
    expect(denied.stdout).toContain('Outcome: declined at the supervisor (issueRefund); refunds executed: 0')
    expect(denied.code).toBe(0)
  }, 180_000)
})
