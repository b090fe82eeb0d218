/**
 * Escalation of several approvers, in one process (the cross-process and
 * crash cases are test/reliability/approver-escalation.test.ts): the rule's
 * checks, nothing asked before the delay, a tier asked at once when every
 * question asked so far ended undecided, and what each card says. Real parts:
 * a Mastra run on a LibSQL file, the SQLite review store, the local decision
 * service over loopback HTTP, the dispatcher.
 */
import type { Mastra } from '@mastra/core/mastra'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPusharyDispatcher } from '../../src/agents/dispatcher.js'
import { isPusharyValidationError } from '../../src/pushary/errors.js'
import { pusharyApprovalStep } from '../../src/steps/approval-step.js'
import { approverSetRule } from '../../src/steps/approver-set.js'
import type { PusharyWorkflowReview } from '../../src/store/review-schema.js'
import type { PusharyReviewStore } from '../../src/store/review-store.js'
import { createTestEnv, type TestEnv } from '../helpers/mastra.js'
import { mastraOnFile, refundWorkflow, scratchReviewStore } from './support/refund-fixtures.js'

let env: TestEnv
let mastra: Mastra
let store: PusharyReviewStore
let refunds = 0

beforeAll(async () => {
  env = await createTestEnv('approver-escalation-step')
  const scratch = scratchReviewStore('pushary-approver-escalation-')
  store = scratch.store
  const workflow = refundWorkflow({
    id: 'refund-escalation',
    config: { client: env.client, store },
    approval: { id: 'approve' },
    onRefund: () => {
      refunds += 1
    },
  })
  mastra = mastraOnFile({ dir: scratch.dir, id: 'escalation', workflows: { workflow } })
}, 60_000)

afterAll(async () => {
  await store?.close()
  await env?.close()
})

async function start(op: string, approvers: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const run = await mastra.getWorkflow('workflow').createRun()
  const started = await run.start({
    inputData: { operationId: op, question: `Refund ${op}?`, approvers, ...extra } as never,
  })
  return { run, started }
}

async function reviewsOf(runId: string): Promise<PusharyWorkflowReview[]> {
  return (await store.listByState('pending', { limit: 1000 })).filter(
    (review): review is PusharyWorkflowReview => review.runId === runId && review.target === 'workflow-step',
  )
}

async function decisionsFor(externalId: string) {
  return (await env.client.decisions.list({ externalId, limit: 100 })).decisions
}

function refusal(run: () => unknown): { field?: string; message: string } {
  try {
    run()
  } catch (error) {
    if (isPusharyValidationError(error)) return { field: error.field, message: error.message }
    throw error
  }
  throw new Error('not refused')
}

describe('the escalation rule', () => {
  it('defaults required to the first approvers and counts every tier toward it', () => {
    expect(
      approverSetRule(
        { externalIds: ['a'], escalation: [{ afterSeconds: 60, externalIds: ['b'] }] },
        undefined,
        'x',
      ),
    ).toEqual({
      externalIds: ['a', 'b'],
      required: 1,
      veto: true,
      escalation: [{ afterSeconds: 60, externalIds: ['b'] }],
    })
    expect(
      approverSetRule(
        { externalIds: ['a', 'b'], escalation: [{ afterSeconds: 60, externalIds: ['c'] }] },
        undefined,
        'x',
      )?.required,
    ).toBe(2)
    // The requester leaves every tier; a tier it empties is dropped.
    expect(
      approverSetRule(
        {
          externalIds: ['a'],
          escalation: [
            { afterSeconds: 60, externalIds: ['req'] },
            { afterSeconds: 120, externalIds: ['c'] },
          ],
        },
        'req',
        'x',
      ),
    ).toMatchObject({
      externalIds: ['a', 'c'],
      required: 1,
      escalation: [{ afterSeconds: 120, externalIds: ['c'] }],
    })
  })

  it('refuses a set that cannot work, naming the field, before anyone is asked', () => {
    const tiers = (...t: [number, string[]][]) =>
      t.map(([afterSeconds, externalIds]) => ({ afterSeconds, externalIds }))
    expect(
      refusal(() =>
        approverSetRule(
          { externalIds: ['a'], escalation: tiers([600, ['b']], [600, ['c']]) },
          undefined,
          'approvers',
        ),
      ),
    ).toMatchObject({ field: 'approvers.escalation.1.afterSeconds', message: /later than the one before/ })
    expect(
      refusal(() =>
        approverSetRule({ externalIds: ['a'], escalation: tiers([60, ['a']]) }, undefined, 'approvers'),
      ),
    ).toMatchObject({ field: 'approvers.escalation.0.externalIds', message: /named twice/ })
    expect(
      refusal(() =>
        approverSetRule({ externalIds: ['req'], escalation: tiers([60, ['b']]) }, 'req', 'approvers'),
      ),
    ).toMatchObject({ field: 'requestedBy', message: /nobody is asked first/ })
    expect(
      refusal(() =>
        approverSetRule(
          { externalIds: ['a'], required: 3, escalation: tiers([60, ['b']]) },
          undefined,
          'approvers',
        ),
      ),
    ).toMatchObject({ field: 'approvers.required', message: /3 approvals are required but only 2/ })
    expect(
      refusal(() =>
        approverSetRule({ externalIds: ['a'], escalation: tiers([0, ['b']]) }, undefined, 'approvers'),
      ),
    ).toMatchObject({ field: 'approvers.escalation.0.afterSeconds' })
    // In the step's options: refused when the step is built.
    expect(
      refusal(() =>
        pusharyApprovalStep(
          { client: env.client },
          { id: 'x', approvers: { externalIds: ['a'], escalation: tiers([60, ['a']]) } },
        ),
      ),
    ).toMatchObject({ field: 'opts.approvers.escalation.0.externalIds' })
  })
})

describe('escalation on the workflow step', () => {
  it('asks nobody new before the delay, however often reconcile runs', async () => {
    const { run, started } = await start('refund:early', {
      externalIds: ['alice_e1'],
      escalation: [{ afterSeconds: 3600, externalIds: ['bob_e1'] }],
    })
    expect(started.status).toBe('suspended')
    const dispatcher = createPusharyDispatcher({ mastra, client: env.client, store })
    for (let round = 0; round < 3; round++) await dispatcher.reconcile({ limit: 1000 })
    expect(await decisionsFor('bob_e1')).toHaveLength(0)
    expect((await reviewsOf(run.runId)).map((review) => review.externalId)).toEqual(['alice_e1'])
    // Alice's card names who comes next and when.
    const alice = (await reviewsOf(run.runId))[0] as PusharyWorkflowReview
    expect((await env.client.decisions.get(alice.decisionId)).parameters).toMatchObject({
      'Approvals needed': '1 of 2, one denial declines',
      'Also asked': 'then bob_e1 if undecided after 1 h',
    })
    // A dispatcher whose clock is past the delay wakes the run; the step checks the time itself.
    const later = createPusharyDispatcher({
      mastra,
      client: env.client,
      store,
      now: () => new Date(Date.now() + 3_700_000),
    })
    const woken = await later.resumeDecision(alice.decisionId)
    expect(woken).toMatchObject({ status: 'pending', reason: /woken for its escalation/ })
    expect(await decisionsFor('bob_e1')).toHaveLength(0)
    expect((await store.get(alice.decisionId))?.state).toBe('pending')
  })

  it('asks the next tier at once when every question so far ended undecided', async () => {
    const before = refunds
    const { run } = await start('refund:no-veto', {
      externalIds: ['alice_e2'],
      veto: false,
      escalation: [{ afterSeconds: 3600, externalIds: ['bob_e2'] }],
    })
    const alice = (await reviewsOf(run.runId))[0] as PusharyWorkflowReview
    const dispatcher = createPusharyDispatcher({ mastra, client: env.client, store })
    await env.client.decisions.answer(alice.decisionId, 'no')
    expect(await dispatcher.resumeDecision(alice.decisionId)).toMatchObject({
      status: 'resumed',
      runStatus: 'suspended',
    })
    const bob = await decisionsFor('bob_e2')
    expect(bob).toHaveLength(1)
    expect((await env.client.decisions.get(bob[0]?.decisionId as string)).parameters).toMatchObject({
      'Approvals needed': '1 of 2',
      'Also asked': 'alice_e2',
    })
    await env.client.decisions.answer(bob[0]?.decisionId as string, 'yes')
    expect(await dispatcher.resumeDecision(bob[0]?.decisionId as string)).toMatchObject({
      status: 'resumed',
      actionOutcome: 'ran',
    })
    expect(refunds).toBe(before + 1)
    const output = (await mastra.getWorkflow('workflow').getWorkflowRunById(run.runId))?.steps?.approve as {
      output?: Record<string, unknown>
    }
    expect(output?.output).toMatchObject({
      approved: true,
      settledBy: [bob[0]?.decisionId],
      approvers: [
        { externalId: 'alice_e2', status: 'answered', approved: false },
        { externalId: 'bob_e2', status: 'answered', approved: true },
      ],
    })
    expect((await store.get(alice.decisionId))?.state).toBe('completed')
  })
})
