/**
 * docs/agents.md "Several approvers", run as written against the local
 * decision service: a real Mastra agent (the scripted model) suspends on its
 * `requireApproval` refund; the requester is removed from the set, the two
 * others approve, the refund runs once and the result names who approved
 * (test/readme/docs-samples.test.ts proves the sample is the page's code block).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { pendingDecisionOf } from '../agents/support/agent-env.js'
import type * as AgentApprovers from './samples/agent-approvers.js'
import { type SampleEnv, startSampleEnv } from './support/sample-env.js'

let s: SampleEnv

beforeAll(async () => {
  s = await startSampleEnv('docs-agent-approvers')
})

afterAll(async () => {
  await s?.close()
})

describe('docs/agents.md several approvers, as written', () => {
  it('never asks the requester; the refund runs once when the two others approve, and the result names them', async () => {
    s.app.authenticatedCustomer.id = 'controller'
    const answering = (async () => {
      for (const approver of ['cfo', 'treasurer']) {
        const decision = await pendingDecisionOf(s.env.client, approver)
        expect(decision.parameters).toMatchObject({ 'Approvals needed': '2 of 2, one denial declines' })
        await s.env.client.decisions.answer(decision.decisionId, 'yes')
      }
    })()
    const [sample] = await Promise.all([s.runSample<typeof AgentApprovers>('agent-approvers'), answering])
    expect(sample.output.finishReason).toBe('suspended')
    expect(s.app.seen.refunds).toEqual([{ orderId: 'order_1', amount: 48 }])
    expect(sample.approvals).toEqual([{ toolCallId: 'call_controller', approvedBy: ['cfo', 'treasurer'] }])
    const asked = await s.env.client.decisions.list({ externalId: 'controller', limit: 10 })
    expect(asked.decisions).toHaveLength(0)
    s.app.authenticatedCustomer.id = 'customer_readme'
  })
})
