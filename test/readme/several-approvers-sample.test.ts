/**
 * docs/workflows.md "Several approvers", run as written against the local
 * decision service: the requester is removed from the set, 2 of the 3
 * approvers approve, the payment runs once and the third question is
 * withdrawn (test/readme/docs-samples.test.ts proves the sample is the page's
 * code block).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPusharyDispatcher, type PusharyWorkflowReview } from '../../src/index.js'
import type * as SeveralApprovers from './samples/several-approvers.js'
import { type SampleEnv, startSampleEnv } from './support/sample-env.js'

let s: SampleEnv

beforeAll(async () => {
  s = await startSampleEnv('docs-several-approvers')
})

afterAll(async () => {
  await s?.close()
})

describe('docs/workflows.md several approvers, as written', () => {
  it('never asks the requester: the two others are asked, and the payment runs once when both approve', async () => {
    s.app.authenticatedCustomer.id = 'controller'
    const sample = await s.runSample<typeof SeveralApprovers>('several-approvers')
    const reviews = (await sample.store.listByState('pending', { limit: 100 })).filter(
      (review): review is PusharyWorkflowReview =>
        review.target === 'workflow-step' && review.runId === sample.run.runId,
    )
    // The requester (here the controller) is not asked.
    expect(reviews.map((review) => review.externalId).sort()).toEqual(['cfo', 'treasurer'])
    const id = (who: string) => reviews.find((review) => review.externalId === who)?.decisionId as string
    const dispatcher = createPusharyDispatcher({
      mastra: sample.mastra,
      client: sample.client,
      store: sample.store,
    })
    await s.env.client.decisions.answer(id('cfo'), 'yes')
    await dispatcher.resumeDecision(id('cfo'))
    expect(sample.payments).toHaveLength(0)
    await s.env.client.decisions.answer(id('treasurer'), 'yes')
    expect(await dispatcher.resumeDecision(id('treasurer'))).toMatchObject({ actionOutcome: 'ran' })
    expect(sample.payments).toHaveLength(1)
    s.app.authenticatedCustomer.id = 'customer_readme'
    await sample.store.close()
  })
})
