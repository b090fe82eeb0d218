/**
 * Escalation of several approvers (issue 41) across processes. "Ask alice; if
 * the set is still undecided after 2 s, ask bob too" on the workflow approval
 * step, gated, in front of a protected `pay` step that writes a row to
 * `effects.db`. The process that asked exits; the timer lives in the run's
 * snapshot. Later, fresh processes run `reconcile` (two at once) and the next
 * tier is asked exactly once (one decision for bob at the service); the first
 * approval decides and the other question is withdrawn. A process killed in
 * the middle of asking the tier (after bob's decision was created, and after
 * his review was saved) is recovered without asking bob twice.
 *
 * Same app as the several-approvers crash test
 * (`test/reliability/fixtures/approver-set-host.ts`), each phase its own OS
 * process: Mastra on a LibSQL file, the SQLite review store, the local
 * decision service over loopback HTTP.
 */
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PusharyWorkflowReview } from '../../src/store/review-schema.js'
import type { PusharyReviewStore } from '../../src/store/review-store.js'
import { createSqliteReviewStore } from '../../src/store/sqlite-store.js'
import { createTestEnv, runFixture, type TestEnv } from '../helpers/mastra.js'
import { allReviews, effectCounts } from './support/scenario.js'

const HOST = 'test/reliability/fixtures/approver-set-host.ts'
/** Only waited for here; that nothing is asked before it is test/steps/approver-escalation.test.ts. */
const DELAY_S = 2

let env: TestEnv
let store: PusharyReviewStore

beforeAll(async () => {
  env = await createTestEnv('approver-escalation')
  store = createSqliteReviewStore({ url: `file:${join(env.dir, 'reviews.db')}` })
})

afterAll(async () => {
  await store?.close()
  await env?.close()
})

function host<T = unknown>(args: string[], crash?: string): Promise<T> {
  return runFixture<T>([args[0] as string, env.dir, ...args.slice(1)], {
    script: HOST,
    ...(crash ? { env: { PUSHARY_TEST_SET_CRASH: crash } } : {}),
  })
}

async function reviewsOf(runId: string): Promise<PusharyWorkflowReview[]> {
  return (await allReviews(store)).filter(
    (review): review is PusharyWorkflowReview => review.target === 'workflow-step' && review.runId === runId,
  )
}

async function decisionsFor(externalId: string) {
  return (await env.client.decisions.list({ externalId, limit: 100 })).decisions
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Starts "ask alice; after DELAY_S ask bob" in its own process, which then exits. */
async function started(name: string, delayS = DELAY_S) {
  const tag = randomUUID().slice(0, 8)
  const runId = `esc-${name}-${tag}`
  const alice = `alice-${tag}`
  const bob = `bob-${tag}`
  const input = {
    operationId: `pay:${tag}`,
    question: `Pay invoice ${tag}?`,
    approvers: { externalIds: [alice], escalation: [{ afterSeconds: delayS, externalIds: [bob] }] },
  }
  expect(await host(['start', JSON.stringify({ input, runId })])).toMatchObject({ status: 'suspended' })
  // The timer started inside that process, before it exited.
  const at = Date.now()
  const reviews = await reviewsOf(runId)
  expect(reviews.map((review) => review.externalId)).toEqual([alice])
  return { runId, op: input.operationId, alice, bob, aliceId: reviews[0]?.decisionId as string, at, delayS }
}

async function untilDue(run: { at: number; delayS: number }): Promise<void> {
  await sleep(Math.max(0, run.at + run.delayS * 1000 + 200 - Date.now()))
}

/** Bob approves; a fresh process reconciles; the payment ran once and alice's question left her phone. */
async function bobApprovesAndItEnds(run: Awaited<ReturnType<typeof started>>): Promise<void> {
  const bobDecisions = await decisionsFor(run.bob)
  expect(bobDecisions).toHaveLength(1)
  const bobId = bobDecisions[0]?.decisionId as string
  await env.client.decisions.answer(bobId, 'yes')
  await host(['reconcile'])
  await host(['reconcile'])
  expect((await effectCounts(env.dir)).get(run.op) ?? 0).toBe(1)
  expect((await env.client.decisions.get(run.aliceId)).status).toBe('cancelled')
  const reviews = await reviewsOf(run.runId)
  expect(Object.fromEntries(reviews.map((review) => [review.externalId, review.state]))).toEqual({
    [run.alice]: 'stale',
    [run.bob]: 'completed',
  })
  expect((await store.history(bobId)).at(-1)?.reason).toMatch(/approved \(1 of 2 required/)
  expect((await store.history(run.aliceId)).at(-1)?.reason).toMatch(/withdrawn/)
}

describe('escalation of several approvers across processes', () => {
  it('asks the next tier once, after the delay, from whichever processes reconcile', async () => {
    const run = await started('once')
    await untilDue(run)
    // Two workers reconcile at the same moment, then a third later.
    await Promise.all([host(['reconcile']), host(['reconcile'])])
    await host(['reconcile'])
    expect(await decisionsFor(run.bob)).toHaveLength(1)
    const reviews = await reviewsOf(run.runId)
    expect(reviews.map((review) => [review.externalId, review.state]).sort()).toEqual([
      [run.alice, 'pending'],
      [run.bob, 'pending'],
    ])
    // Bob's card says who else is asked; alice's said bob comes later.
    const bobCard = await env.client.decisions.get((await decisionsFor(run.bob))[0]?.decisionId as string)
    expect(bobCard.parameters).toMatchObject({
      'Approvals needed': '1 of 2, one denial declines',
      'Also asked': run.alice,
    })
    expect((await env.client.decisions.get(run.aliceId)).parameters).toMatchObject({
      'Also asked': `then ${run.bob} if undecided after ${DELAY_S} s`,
    })
    expect((await effectCounts(env.dir)).get(run.op) ?? 0).toBe(0)
    await bobApprovesAndItEnds(run)
  })

  it('a resume killed while bob (asked by the escalation) settles the set is recovered: the restart re-asks both tiers, pays once', async () => {
    const run = await started('settle-crash')
    await untilDue(run)
    await host(['reconcile'])
    const bobDecisions = await decisionsFor(run.bob)
    expect(bobDecisions).toHaveLength(1)
    const bobId = bobDecisions[0]?.decisionId as string
    await env.client.decisions.answer(bobId, 'yes')
    // Bob's resume settles the set and is killed before it withdraws alice's
    // question; Mastra had already dropped the step's suspend payload (where
    // the escalation's state lives) when the resume started.
    const killed = await host(['resume', JSON.stringify([bobId])], 'before-cancel').catch(
      (error: Error) => error.message,
    )
    expect(JSON.stringify(killed)).toMatch(/SIGKILL/)
    expect((await effectCounts(env.dir)).get(run.op) ?? 0).toBe(0)

    // The restart reads from the service that bob's tier was asked, asks
    // alice and bob again (the same decisions) and settles.
    const [recovered] = await host<{ status: string; actionOutcome?: string }[]>([
      'recover',
      JSON.stringify([bobId]),
    ])
    expect(recovered).toMatchObject({ actionOutcome: 'ran' })
    await host(['reconcile'])
    expect((await effectCounts(env.dir)).get(run.op) ?? 0).toBe(1)
    expect(await decisionsFor(run.bob)).toHaveLength(1)
    expect((await env.client.decisions.get(run.aliceId)).status).toBe('cancelled')
    const reviews = await reviewsOf(run.runId)
    expect(Object.fromEntries(reviews.map((review) => [review.externalId, review.state]))).toEqual({
      [run.alice]: 'stale',
      [run.bob]: 'completed',
    })
    expect((await store.actionOf(bobId))?.outcome).toBe('ran')
  })

  for (const crash of ['after-create-1', 'after-save-1'] as const) {
    it(`a reconcile killed while asking the tier (${crash}) is recovered without asking bob twice`, async () => {
      const run = await started(crash)
      await untilDue(run)
      const killed = await host(['reconcile'], crash).catch((error: Error) => error.message)
      expect(JSON.stringify(killed)).toMatch(/SIGKILL/)
      expect(await decisionsFor(run.bob)).toHaveLength(1)
      // The operator's (or the next worker's) recovery after the claim's lease.
      await host(['recover', JSON.stringify([run.aliceId])])
      await host(['reconcile'])
      await host(['reconcile'])
      expect(await decisionsFor(run.bob)).toHaveLength(1)
      const states = (await reviewsOf(run.runId)).map((review) => [review.externalId, review.state])
      expect(states.sort()).toEqual([
        [run.alice, 'pending'],
        [run.bob, 'pending'],
      ])
      await bobApprovesAndItEnds(run)
    })
  }
})
