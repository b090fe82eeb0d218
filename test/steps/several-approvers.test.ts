/**
 * Issue 41, phase 1: several approvers on the workflow step. Real parts: a
 * Mastra run on a LibSQL file, a SQLite review store, the local decision
 * service over loopback HTTP and the dispatcher. One decision per approver,
 * settled by the rule in the order the answers were given; the rest are
 * withdrawn; the protected step runs at most once.
 */
import { join } from 'node:path'
import type { Mastra } from '@mastra/core/mastra'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPusharyDispatcher } from '../../src/agents/dispatcher.js'
import { isPusharyValidationError } from '../../src/pushary/errors.js'
import type { PusharyWorkflowReview } from '../../src/store/review-schema.js'
import type { PusharyReviewStore } from '../../src/store/review-store.js'
import { createTestEnv, type TestEnv } from '../helpers/mastra.js'
import { runCli } from '../reliability/support/cli.js'
import { mastraOnFile, refundWorkflow, scratchReviewStore } from './support/refund-fixtures.js'

let env: TestEnv
let mastra: Mastra
let store: PusharyReviewStore
let reviewsFile: string
let refunds = 0

beforeAll(async () => {
  env = await createTestEnv('several-approvers')
  const scratch = scratchReviewStore('pushary-several-approvers-')
  store = scratch.store
  reviewsFile = join(scratch.dir, 'reviews.db')
  const workflow = refundWorkflow({
    id: 'refund-several',
    config: { client: env.client, store },
    approval: { id: 'approve' },
    onRefund: () => {
      refunds += 1
    },
  })
  mastra = mastraOnFile({ dir: scratch.dir, id: 'several', workflows: { workflow } })
}, 60_000)

afterAll(async () => {
  await store?.close()
  await env?.close()
})

async function start(op: string, extra: Record<string, unknown>) {
  const run = await mastra.getWorkflow('workflow').createRun()
  const started = await run.start({
    inputData: { operationId: op, question: `Refund ${op}?`, ...extra } as never,
  })
  const reviews = (await store.listByState('pending', { limit: 100 })).filter(
    (review): review is PusharyWorkflowReview =>
      review.runId === run.runId && review.target === 'workflow-step',
  )
  const byApprover = new Map(reviews.map((review) => [review.externalId, review.decisionId]))
  return { run, started, reviews, id: (externalId: string) => byApprover.get(externalId) as string }
}

async function runResult(runId: string) {
  return mastra.getWorkflow('workflow').getWorkflowRunById(runId)
}

async function countDecisions(externalId: string): Promise<number> {
  return (await env.client.decisions.list({ externalId, limit: 100 })).decisions.length
}

describe('several approvers on the workflow step', () => {
  it('approves 2 of 3 once, runs the refund once and withdraws the third question', async () => {
    const before = refunds
    const { run, started, reviews, id } = await start('refund:2of3', {
      approvers: { externalIds: ['alice_a', 'bob_a', 'carol_a'], required: 2 },
    })
    expect(started.status).toBe('suspended')
    expect(reviews).toHaveLength(3)
    // The card says how many are needed and who else is asked.
    const card = await env.client.decisions.get(id('alice_a'))
    expect(card.question).toBe('Refund refund:2of3?')
    // Its context tells the service the set's rule: the reviewer page says why a question is withdrawn.
    expect(JSON.parse(card.context ?? '{}')).toMatchObject({ approversRequired: 2, approversVeto: true })
    const dispatcher = createPusharyDispatcher({ mastra, client: env.client, store })

    await env.client.decisions.answer(id('alice_a'), 'yes')
    const first = await dispatcher.resumeDecision(id('alice_a'))
    expect(first).toMatchObject({ status: 'resumed', runStatus: 'suspended' })
    expect(refunds).toBe(before)
    expect((await store.get(id('alice_a')))?.state).toBe('completed')
    expect(await store.actionOf(id('alice_a'))).toBeNull()

    await env.client.decisions.answer(id('bob_a'), 'yes')
    const second = await dispatcher.resumeDecision(id('bob_a'))
    expect(second).toMatchObject({ status: 'resumed', actionOutcome: 'ran' })
    expect(refunds).toBe(before + 1)

    // The third question left carol's phone; her review says why.
    expect((await env.client.decisions.get(id('carol_a'))).status).toBe('cancelled')
    expect((await store.get(id('carol_a')))?.state).toBe('stale')
    expect((await store.history(id('carol_a'))).at(-1)?.reason).toMatch(/withdrawn.*approved.*settled by/)
    expect((await store.history(id('bob_a'))).at(-1)?.reason).toMatch(
      new RegExp(`settled by ${id('alice_a')} \\(alice_a\\), ${id('bob_a')} \\(bob_a\\)`),
    )

    const output = (await runResult(run.runId))?.steps?.approve as { output?: Record<string, unknown> }
    expect(output?.output).toMatchObject({
      approved: true,
      rule: { required: 2, veto: true },
      settledBy: [id('alice_a'), id('bob_a')],
    })
    // A later answer to the withdrawn question is refused by the service and changes nothing.
    await expect(env.client.decisions.answer(id('carol_a'), 'yes')).rejects.toThrow()
    expect((await env.client.decisions.get(id('carol_a'))).status).toBe('cancelled')
    // `reviews show` on the first approver's decision prints the whole set.
    const shown = await runCli(['reviews', 'show', id('alice_a'), '--db', reviewsFile])
    expect(shown.code).toBe(0)
    expect(shown.stdout).toMatch(/approvers {2}2 of 3 required, one denial declines/)
    expect(shown.stdout).toMatch(new RegExp(`carol_a {2}${id('carol_a')} {2}stale {2}".*withdrawn`))
    expect(shown.stdout).toMatch(new RegExp(`bob_a {2}${id('bob_a')} {2}completed {2}".*settled by`))
    // Nothing runs twice: every duplicate and reconcile leaves the count alone.
    await dispatcher.resumeDecision(id('bob_a'))
    await dispatcher.resumeDecision(id('alice_a'))
    await dispatcher.reconcile({ limit: 100 })
    expect(refunds).toBe(before + 1)
  })

  it('declines on one denial (veto): the refund never runs and the other questions are withdrawn', async () => {
    const before = refunds
    const { run, id } = await start('refund:veto', {
      approvers: { externalIds: ['alice_v', 'bob_v', 'carol_v'], required: 2 },
    })
    const dispatcher = createPusharyDispatcher({ mastra, client: env.client, store })
    await env.client.decisions.answer(id('alice_v'), 'yes')
    await dispatcher.resumeDecision(id('alice_v'))
    await env.client.decisions.answer(id('bob_v'), 'no')
    const denied = await dispatcher.resumeDecision(id('bob_v'))
    expect(denied).toMatchObject({ status: 'resumed', actionOutcome: 'not_run' })
    expect(refunds).toBe(before)
    expect((await env.client.decisions.get(id('carol_v'))).status).toBe('cancelled')
    expect((await store.get(id('carol_v')))?.state).toBe('stale')
    expect((await runResult(run.runId))?.result).toMatchObject({ outcome: 'declined', reason: 'denied' })
  })

  it('settles in the order the answers were given: an answer after the quorum is recorded and changes nothing', async () => {
    const before = refunds
    const { id } = await start('refund:late', {
      approvers: { externalIds: ['alice_l', 'bob_l', 'carol_l'], required: 2 },
    })
    // All three answer before any worker runs; carol's no comes last.
    await env.client.decisions.answer(id('alice_l'), 'yes')
    await env.client.decisions.answer(id('bob_l'), 'yes')
    await new Promise((resolve) => setTimeout(resolve, 5))
    await env.client.decisions.answer(id('carol_l'), 'no')
    const dispatcher = createPusharyDispatcher({ mastra, client: env.client, store })
    // The late denial is the first one a worker happens to resume.
    const late = await dispatcher.resumeDecision(id('carol_l'))
    expect(late).toMatchObject({ status: 'resumed', actionOutcome: 'ran' })
    expect(refunds).toBe(before + 1)
    await dispatcher.reconcile({ limit: 100 })
    expect(refunds).toBe(before + 1)
    for (const name of ['alice_l', 'bob_l']) {
      expect((await store.get(id(name)))?.state).toBe('completed')
      expect((await store.history(id(name))).at(-1)?.reason).toMatch(/counted/)
    }
    // Carol's late answer is kept, with its time, in the record.
    const carol = (await store.history(id('carol_l'))).at(-1)?.reason
    expect(carol).toMatch(/carol_l: answered no at .*\(late, changes nothing\)/)
    expect((await store.get(id('carol_l')))?.state).toBe('completed')
  })

  it('removes the requester from the set, and refuses a quorum the requester makes impossible before asking anyone', async () => {
    const before = await countDecisions('dana_r')
    const refused = await start('refund:self', {
      approvers: { externalIds: ['dana_r', 'erin_r'], required: 2 },
      requestedBy: 'dana_r',
    })
    expect(refused.started.status).toBe('failed')
    expect(refused.reviews).toHaveLength(0)
    expect(await countDecisions('dana_r')).toBe(before)
    expect(await countDecisions('erin_r')).toBe(0)

    // Removed from a set that still has enough approvers: only the others are asked.
    const asked = await start('refund:self-ok', {
      approvers: { externalIds: ['dana_r', 'erin_r', 'finn_r'], required: 2 },
      requestedBy: 'dana_r',
    })
    expect(asked.started.status).toBe('suspended')
    expect(asked.reviews.map((review) => review.externalId).sort()).toEqual(['erin_r', 'finn_r'])
    expect(await countDecisions('dana_r')).toBe(before)
  })

  it('refuses the impossible quorum with a typed error naming the field', async () => {
    const run = await mastra.getWorkflow('workflow').createRun()
    const result = await run.start({
      inputData: {
        operationId: 'refund:self-typed',
        question: 'Refund?',
        approvers: { externalIds: ['gus_r', 'hana_r'], required: 2 },
        requestedBy: 'gus_r',
      } as never,
    })
    expect(result.status).toBe('failed')
    const error = (result as { error?: unknown }).error
    expect(String((error as Error)?.message ?? error)).toMatch(/approvers\.required/)
    expect(await countDecisions('hana_r')).toBe(0)
    const { pusharyApprovalStep } = await import('../../src/steps/approval-step.js')
    let thrown: unknown
    try {
      pusharyApprovalStep(
        { client: env.client, store },
        { approvers: { externalIds: ['a', 'a'] }, requestedBy: 'b' },
      )
    } catch (error) {
      thrown = error
    }
    expect(isPusharyValidationError(thrown)).toBe(true)
    expect(thrown).toMatchObject({ field: 'opts.approvers.externalIds' })
  })
})
