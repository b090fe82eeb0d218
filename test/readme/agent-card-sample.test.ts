/**
 * The agent card sample of docs/agents.md ("What the reviewer sees"), run as
 * written: a real Mastra agent driven by the scripted model, the local
 * decision service over loopback HTTP. The decisions it opened are read back
 * from the service: each names the agent, says what the tool does (the
 * configured text, else the tool's own description) and carries the risk.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Decision } from '../../src/index.js'
import { waitFor } from '../helpers/mastra.js'
import type * as AgentCard from './samples/agent-card.js'
import { type SampleEnv, startSampleEnv } from './support/sample-env.js'

let s: SampleEnv

beforeAll(async () => {
  s = await startSampleEnv('docs-agent-card')
})

afterAll(async () => {
  await s?.close()
})

/** The customer's decisions on the service, each read in full. */
async function decisionsOf(externalId: string): Promise<Decision[]> {
  const { decisions } = await s.env.client.decisions.list({ externalId, limit: 20 })
  return Promise.all(decisions.map((listed) => s.env.client.decisions.get(listed.decisionId!)))
}

describe('docs/agents.md agent card sample, as written', () => {
  it('shows the agent name, what the tool does and its risk on the deferred and the blocking card', async () => {
    const customer = 'oncall_card'
    // The on-call person approves the refund the resolver asks about (the restart stays open).
    const refundAnswered = waitFor(async () => {
      const refund = (await decisionsOf(customer)).find(
        (decision) => decision.toolName === 'issueRefund' && decision.status === 'pending',
      )
      if (refund) await s.env.client.decisions.answer(refund.decisionId, 'yes')
      return refund
    })
    const sample = await s.runSample<typeof AgentCard>('agent-card')
    await refundAnswered
    expect(sample.session.customerId).toBe(customer)

    const decisions = await decisionsOf(customer)
    const restart = decisions.find((decision) => decision.toolName === 'restartService')
    const refund = decisions.find((decision) => decision.toolName === 'issueRefund')
    expect(decisions).toHaveLength(2)
    expect(restart).toMatchObject({ agentName: 'Ops bot', status: 'pending' })
    expect(restart?.presentation).toMatchObject({
      effect: 'Restarts one production service (about a minute of errors)',
      risk: 'high',
    })
    expect(refund).toMatchObject({ agentName: 'Ops bot', status: 'answered' })
    expect(refund?.presentation).toMatchObject({
      effect: 'Refunds an order in full to the original payment method.',
      risk: 'medium',
    })
    // Only the approved refund ran; the restart waits for its answer.
    expect(sample.outcome.allApproved).toBe(true)
    expect(sample.ran).toEqual(['refund o-1'])
  }, 90_000)
})
