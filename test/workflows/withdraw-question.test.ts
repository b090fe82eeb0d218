/**
 * Issue 37, finding 6: a question is withdrawn when the run that asked ended
 * without using it. Real Mastra runs on a LibSQL file, a SQLite review store
 * and the local decision service over loopback HTTP: the decision is
 * cancelled at the service (its approval link with it), the review ends
 * `stale` with the action `not_run`, and the history says why.
 */
import type { Mastra } from '@mastra/core/mastra'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPusharyDispatcher } from '../../src/agents/dispatcher.js'
import type { PusharyFallbackLink } from '../../src/steps/approval-delivery.js'
import type { PusharyReviewStore } from '../../src/store/review-store.js'
import { createTestEnv, type TestEnv } from '../helpers/mastra.js'
import { mastraOnFile, refundWorkflow, scratchReviewStore } from '../steps/support/refund-fixtures.js'

let env: TestEnv
let mastra: Mastra
let store: PusharyReviewStore
const links: PusharyFallbackLink[] = []
let refunds = 0

beforeAll(async () => {
  env = await createTestEnv('withdraw')
  const scratch = scratchReviewStore('pushary-withdraw-mastra-')
  store = scratch.store
  const failingFallback = refundWorkflow({
    id: 'refund-failing-fallback',
    config: { client: env.client, store },
    approval: {
      id: 'approve',
      onFallback: async (link) => {
        links.push(link)
        throw new Error('the mail relay refused the message')
      },
    },
    onRefund: () => {
      refunds += 1
    },
  })
  const plain = refundWorkflow({
    id: 'refund-plain',
    config: { client: env.client, store },
    approval: { id: 'approve' },
    onRefund: () => {
      refunds += 1
    },
  })
  mastra = mastraOnFile({ dir: scratch.dir, id: 'withdraw', workflows: { failingFallback, plain } })
}, 60_000)

afterAll(async () => {
  await store?.close()
  await env?.close()
})

describe('a question is withdrawn when the run that asked ended without it', () => {
  it('cancels the decision, and its link, when the step fails after delivering the link (onFallback throws)', async () => {
    const run = await mastra.getWorkflow('failingFallback').createRun()
    const started = await run.start({
      inputData: {
        operationId: 'refund:o-w1:v1',
        question: 'Refund order o-w1?',
        externalId: 'no_device_w1',
      },
    })
    expect(started.status).toBe('failed')
    const link = links.at(-1) as PusharyFallbackLink
    expect(link.decisionId).toBeTruthy()
    expect((await env.client.decisions.get(link.decisionId)).status).toBe('cancelled')
    // The link delivered before the failure no longer offers an answer.
    const page = await (await fetch(link.approvalUrl)).text()
    expect(page).not.toMatch(/<form[^>]*method="post"/i)
    expect(refunds).toBe(0)
  })

  it('reconcile withdraws the open question of a run cancelled while it waited, and ends its review stale', async () => {
    const run = await mastra.getWorkflow('plain').createRun()
    const started = await run.start({
      inputData: { operationId: 'refund:o-w2:v1', question: 'Refund order o-w2?', externalId: 'customer_w2' },
    })
    expect(started.status).toBe('suspended')
    const review = (await store.listByState('pending', { limit: 100 })).find((r) => r.runId === run.runId)
    expect(review).toBeDefined()
    const decisionId = String(review?.decisionId)
    await run.cancel()
    expect((await mastra.getWorkflow('plain').getWorkflowRunById(run.runId))?.status).toBe('canceled')

    const dispatcher = createPusharyDispatcher({ mastra, client: env.client, store })
    const report = await dispatcher.reconcile({ limit: 100 })
    expect(report.results.find((r) => r.decisionId === decisionId)).toMatchObject({
      status: 'stale',
      reasonCode: 'run_ended',
      actionOutcome: 'not_run',
    })
    expect((await env.client.decisions.get(decisionId)).status).toBe('cancelled')
    expect((await store.get(decisionId))?.state).toBe('stale')
    expect(await store.actionOf(decisionId)).toMatchObject({ outcome: 'not_run' })
    expect((await store.history(decisionId)).at(-1)?.reason).toMatch(/withdrawn/)
    // Withdrawn once: the next round finds nothing left to do for it.
    const again = await dispatcher.reconcile({ limit: 100 })
    expect(again.results.find((r) => r.decisionId === decisionId)).toBeUndefined()
    expect(refunds).toBe(0)
  })
})
