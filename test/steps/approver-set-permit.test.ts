/**
 * Issue 41: `withPusharyPermit` after several approvers. Real parts: a Mastra
 * run on a LibSQL file, a SQLite review store, the local decision service over
 * loopback HTTP (its platform routes issue the permits) and the dispatcher.
 * A 2-of-3 approved set spends exactly one permit, on the approval that
 * reached the quorum, for the approver who gave it; the action runs once and
 * its receipt is recorded; the permit's record names that decision and the
 * decisions that settled the set. A declined set spends nothing.
 */
import { join } from 'node:path'
import { createClient } from '@libsql/client'
import type { Mastra } from '@mastra/core/mastra'
import { createStep, createWorkflow } from '@mastra/core/workflows'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod/v4'
import { createPusharyDispatcher } from '../../src/agents/dispatcher.js'
import {
  type PusharyApprovalStepInput,
  pusharyApprovalStepInputSchema,
} from '../../src/steps/approval-schemas.js'
import { pusharyApprovalStep } from '../../src/steps/approval-step.js'
import { approverCardParameters } from '../../src/steps/approver-set.js'
import { pusharyGate } from '../../src/steps/gate-step.js'
import { PUSHARY_APPROVED_CONTEXT_KEY, withPusharyPermit } from '../../src/steps/permit-step.js'
import { workflowBindingContext } from '../../src/steps/workflow-binding.js'
import type { PusharyWorkflowReview } from '../../src/store/review-schema.js'
import type { PusharyReviewStore } from '../../src/store/review-store.js'
import { createTestEnv, type TestEnv } from '../helpers/mastra.js'
import { runCli } from '../reliability/support/cli.js'
import { mastraOnFile, scratchReviewStore } from './support/refund-fixtures.js'

let env: TestEnv
let mastra: Mastra
let store: PusharyReviewStore
let reviewsFile: string
/** Every run of the protected action, with the permit it was handed. */
const paid: { runId: string; permit: { permitId: string; decisionId: string; settledBy?: string[] } }[] = []

beforeAll(async () => {
  env = await createTestEnv('approver-set-permit')
  const scratch = scratchReviewStore('pushary-approver-set-permit-')
  store = scratch.store
  reviewsFile = join(scratch.dir, 'reviews.db')
  const config = { client: env.client, store }
  const pay = withPusharyPermit(config, {
    id: 'pay',
    approvalStepId: 'approve',
    outputSchema: z.object({ paid: z.literal(true), permitId: z.string() }),
    initSchema: pusharyApprovalStepInputSchema,
    // From the run's own input, as the approvers were shown it.
    action: ({ initData }) => ({
      toolName: 'payment.send',
      toolTarget: initData.subject?.toolTarget,
      parameters: initData.subject?.parameters,
    }),
    execute: async ({ runId, permit }) => {
      paid.push({ runId, permit })
      return { paid: true as const, permitId: permit.permitId }
    },
    summary: (output) => `paid under ${output.permitId}`,
  })
  const workflow = createWorkflow({
    id: 'payment-permit',
    inputSchema: pusharyApprovalStepInputSchema,
    outputSchema: z.unknown(),
    options: { autoRestartActiveRuns: false },
  })
    .then(pusharyApprovalStep(config, { id: 'approve' }))
    .then(pusharyGate())
    .then(pay)
    .commit()
  // A step in the approval step's place that claims a settled set it cannot
  // prove: what the permit step must not take on trust.
  const claimsSet = createStep({
    id: 'approve',
    inputSchema: z.unknown(),
    outputSchema: z.unknown(),
    execute: async ({ requestContext, getInitData }) => {
      const claimed = (getInitData() as { claimed: { settledBy: string[]; rule: unknown } }).claimed
      requestContext.set(
        PUSHARY_APPROVED_CONTEXT_KEY as never,
        { approve: claimed.settledBy.at(-1) } as never,
      )
      return { status: 'answered', value: 'yes', approved: true, approvers: [], ...claimed }
    },
  })
  const unproven = createWorkflow({
    id: 'payment-unproven-set',
    inputSchema: z.unknown(),
    outputSchema: z.unknown(),
    options: { autoRestartActiveRuns: false },
  })
    .then(claimsSet)
    .then(pusharyGate() as never)
    .then(pay as never)
    .commit()
  mastra = mastraOnFile({ dir: scratch.dir, id: 'approver-set-permit', workflows: { workflow, unproven } })
}, 60_000)

afterAll(async () => {
  await store?.close()
  await env?.close()
})

function paymentInput(op: string, names: string[]): PusharyApprovalStepInput {
  return {
    operationId: op,
    question: `Pay supplier for ${op}?`,
    type: 'confirm',
    approvers: { externalIds: names, required: 2 },
    subject: {
      toolName: 'payment.send',
      toolTarget: `supplier ${op}`,
      parameters: { amountMinor: 1_200_000 },
    },
  }
}

async function start(op: string, names: string[]) {
  const run = await mastra.getWorkflow('workflow').createRun()
  const started = await run.start({ inputData: paymentInput(op, names) })
  expect(started.status).toBe('suspended')
  const reviews = (await store.listByState('pending', { limit: 100 })).filter(
    (review): review is PusharyWorkflowReview =>
      review.runId === run.runId && review.target === 'workflow-step',
  )
  expect(reviews).toHaveLength(names.length)
  const byApprover = new Map(reviews.map((review) => [review.externalId, review.decisionId]))
  return { runId: run.runId, id: (externalId: string) => byApprover.get(externalId) as string }
}

/** The permits the service issued on these decisions, read from its own table. */
async function servicePermits(decisionIds: string[]) {
  const db = createClient({ url: `file:${join(env.dir, 'service.db')}` })
  try {
    const rows = await db.execute({
      sql: `SELECT authorization_id, execution_state, authority FROM permits WHERE authorization_id IN (${decisionIds.map(() => '?').join(', ')})`,
      args: decisionIds,
    })
    return rows.rows.map((row) => ({
      authorizationId: String(row.authorization_id),
      executionState: String(row.execution_state),
      authority: JSON.parse(String(row.authority)) as Record<string, unknown>,
    }))
  } finally {
    db.close()
  }
}

describe('withPusharyPermit after several approvers', () => {
  it('spends one permit on the approval that reached 2 of 3, for that approver, runs the payment once and records the receipt', async () => {
    const { runId, id } = await start('pay:2of3', ['alice_p', 'bob_p', 'carol_p'])
    const dispatcher = createPusharyDispatcher({ mastra, client: env.client, store })
    await env.client.decisions.answer(id('alice_p'), 'yes')
    expect(await dispatcher.resumeDecision(id('alice_p'))).toMatchObject({ runStatus: 'suspended' })
    expect(paid.filter((entry) => entry.runId === runId)).toHaveLength(0)

    await env.client.decisions.answer(id('bob_p'), 'yes')
    const settled = await dispatcher.resumeDecision(id('bob_p'))
    expect(settled).toMatchObject({ status: 'resumed', runStatus: 'success', actionOutcome: 'ran' })

    // The action ran once, handed the permit of bob's approval and the set behind it.
    const runs = paid.filter((entry) => entry.runId === runId)
    expect(runs).toHaveLength(1)
    const settledBy = [id('alice_p'), id('bob_p')]
    expect(runs[0]?.permit).toMatchObject({ decisionId: id('bob_p'), settledBy })

    // Exactly one permit at the service, on bob's decision, issued to bob, with its receipt.
    const issued = await servicePermits([id('alice_p'), id('bob_p'), id('carol_p')])
    expect(issued).toHaveLength(1)
    expect(issued[0]).toMatchObject({
      authorizationId: id('bob_p'),
      executionState: 'succeeded',
      authority: { kind: 'human', approverExternalId: 'bob_p' },
    })

    // The record: bob's review keeps the permit, the action it was spent for and the set.
    const permit = await store.permitOf(id('bob_p'))
    expect(permit).toMatchObject({
      permitId: runs[0]?.permit.permitId,
      action: { toolName: 'payment.send', toolTarget: 'supplier pay:2of3', externalId: 'bob_p' },
      settledBy,
    })
    expect(permit?.action.parameters).toMatchObject({ amountMinor: 1_200_000 })
    expect(await store.permitOf(id('alice_p'))).toBeNull()
    expect(await store.permitOf(id('carol_p'))).toBeNull()

    // `reviews show` on any member names the decision the permit was spent on and the set.
    const onBob = await runCli(['reviews', 'show', id('bob_p'), '--db', reviewsFile])
    expect(onBob.code).toBe(0)
    expect(onBob.stdout).toContain(
      `permit     ${permit?.permitId} spent on decision ${id('bob_p')} (bob_p) for payment.send supplier pay:2of3 at ${permit?.consumedAt}; the approvers' set was settled by ${id('alice_p')} (alice_p), ${id('bob_p')} (bob_p)`,
    )
    const onAlice = await runCli(['reviews', 'show', id('alice_p'), '--db', reviewsFile])
    expect(onAlice.stdout).toContain(`permit     none on this decision`)
    expect(onAlice.stdout).toMatch(
      new RegExp(`bob_p {2}${id('bob_p')} {2}completed {2}".*" {2}permit ${permit?.permitId}`),
    )
    const json = await runCli(['reviews', 'show', id('bob_p'), '--db', reviewsFile, '--json'])
    expect(JSON.parse(json.stdout)).toMatchObject({ permit: { permitId: permit?.permitId, settledBy } })

    // A duplicate resume and a reconcile spend nothing more and run nothing again.
    await dispatcher.resumeDecision(id('bob_p'))
    await dispatcher.reconcile({ limit: 100 })
    expect(paid.filter((entry) => entry.runId === runId)).toHaveLength(1)
    expect(await servicePermits([id('alice_p'), id('bob_p'), id('carol_p')])).toHaveLength(1)
  })

  it('after an escalation, spends the permit of the approver asked by the tier, whose card names the tier after theirs', async () => {
    // Alice first; bob if undecided after 1 h, carol after 2 h. Alice says
    // no (no veto), so bob is asked at once; his yes settles the set.
    const run = await mastra.getWorkflow('workflow').createRun()
    const started = await run.start({
      inputData: {
        ...paymentInput('pay:escalated', []),
        approvers: {
          externalIds: ['alice_x'],
          veto: false,
          escalation: [
            { afterSeconds: 3600, externalIds: ['bob_x'] },
            { afterSeconds: 7200, externalIds: ['carol_x'] },
          ],
        },
      },
    })
    expect(started.status).toBe('suspended')
    const reviewOf = async (externalId: string) =>
      (await store.listByState('pending', { limit: 100 })).find(
        (review) =>
          review.target === 'workflow-step' && review.runId === run.runId && review.externalId === externalId,
      )?.decisionId as string
    const alice = await reviewOf('alice_x')
    const dispatcher = createPusharyDispatcher({ mastra, client: env.client, store })
    await env.client.decisions.answer(alice, 'no')
    expect(await dispatcher.resumeDecision(alice)).toMatchObject({
      status: 'resumed',
      runStatus: 'suspended',
    })
    const bob = await reviewOf('bob_x')
    expect(bob).toBeDefined()
    // What bob's card showed: the tier after his.
    expect((await env.client.decisions.get(bob)).parameters).toMatchObject({
      'Approvals needed': '1 of 3',
      'Also asked': 'alice_x; then carol_x if undecided after 2 h',
    })
    await env.client.decisions.answer(bob, 'yes')
    expect(await dispatcher.resumeDecision(bob)).toMatchObject({
      status: 'resumed',
      runStatus: 'success',
      actionOutcome: 'ran',
    })
    const runs = paid.filter((entry) => entry.runId === run.runId)
    expect(runs).toHaveLength(1)
    expect(runs[0]?.permit).toMatchObject({ decisionId: bob, settledBy: [bob] })
    expect(await servicePermits([alice, bob])).toMatchObject([
      { authorizationId: bob, executionState: 'succeeded', authority: { approverExternalId: 'bob_x' } },
    ])
    // The action presented the card bob saw, tier text included.
    expect((await store.permitOf(bob))?.action.parameters).toMatchObject({
      'Also asked': 'alice_x; then carol_x if undecided after 2 h',
    })
    expect((await env.client.decisions.list({ externalId: 'carol_x', limit: 10 })).decisions).toEqual([])
  })

  it('spends no permit and runs nothing when the set is declined', async () => {
    const { runId, id } = await start('pay:veto', ['alice_d', 'bob_d', 'carol_d'])
    const dispatcher = createPusharyDispatcher({ mastra, client: env.client, store })
    await env.client.decisions.answer(id('alice_d'), 'yes')
    await dispatcher.resumeDecision(id('alice_d'))
    await env.client.decisions.answer(id('bob_d'), 'no')
    const declined = await dispatcher.resumeDecision(id('bob_d'))
    expect(declined).toMatchObject({ status: 'resumed', actionOutcome: 'not_run' })
    const run = await mastra.getWorkflow('workflow').getWorkflowRunById(runId)
    expect(run?.result).toMatchObject({ outcome: 'declined', reason: 'denied' })
    expect(paid.filter((entry) => entry.runId === runId)).toHaveLength(0)
    const ids = [id('alice_d'), id('bob_d'), id('carol_d')]
    expect(await servicePermits(ids)).toEqual([])
    for (const decisionId of ids) expect(await store.permitOf(decisionId)).toBeNull()
  })

  it('refuses to spend an approval the service does not show settled the set: nothing is spent, nothing runs', async () => {
    const rule = { externalIds: ['alice_u', 'bob_u', 'carol_u'], required: 2, veto: true }
    const subject = {
      toolName: 'payment.send',
      toolTarget: 'supplier pay:unproven',
      parameters: { amountMinor: 5 },
    }
    const question = { question: 'Pay supplier for pay:unproven?', type: 'confirm' as const }
    // Only bob approved (alice has not answered); the step claims bob alone,
    // then alice and bob, settled the set.
    for (const claim of [['bob_u'], ['alice_u', 'bob_u']]) {
      const run = await mastra.getWorkflow('unproven').createRun()
      // The set's three decisions, asked for this very run and step, as the approval step asks them.
      const ids: Record<string, string> = {}
      for (const externalId of rule.externalIds) {
        const binding = {
          workflowId: 'payment-unproven-set',
          runId: run.runId,
          stepId: 'approve',
          operationId: 'pay:unproven',
          externalId,
          question,
          approverSet: { required: 2 },
        }
        const created = await env.client.decisions.create({
          ...question,
          ...subject,
          parameters: approverCardParameters(rule, externalId, subject.parameters),
          externalId,
          context: workflowBindingContext(binding),
        })
        ids[externalId] = created.decisionId
      }
      await env.client.decisions.answer(ids.bob_u as string, 'yes')
      const claimed = { settledBy: claim.map((name) => ids[name]), rule }
      const result = await run.start({
        inputData: { operationId: 'pay:unproven', ...question, subject, claimed },
      })
      expect(result.status).toBe('failed')
      expect(String((result as { error?: { message?: string } }).error?.message)).toMatch(
        claim.length === 1
          ? /before the action: the set was asked for 2 approvals/
          : /before the action: decision .* of the set did not approve/,
      )
      expect(paid.filter((entry) => entry.runId === run.runId)).toHaveLength(0)
      expect(await servicePermits(Object.values(ids))).toEqual([])
      // The service alone would have issued it: bob's approval is spendable for this action.
      const direct = await env.client.consumeAuthorization({
        authorizationId: ids.bob_u as string,
        toolName: subject.toolName,
        toolTarget: subject.toolTarget,
        externalId: 'bob_u',
        parameters: approverCardParameters(rule, 'bob_u', subject.parameters),
      })
      expect(direct.status).toBe('permitted')
    }
  })
})
