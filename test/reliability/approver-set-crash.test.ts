/**
 * Several approvers (issue 41) under SIGKILL. A 2-of-3 set on the workflow
 * approval step, gated, in front of a protected `pay` step that writes a row
 * to `effects.db`; Mastra on LibSQL, the SQLite review store, the local
 * decision service over loopback HTTP. Two approvers say yes; the resume of
 * the second one (the one that reaches the quorum) runs in a child process
 * that is killed at one point of settling the set
 * (`test/reliability/fixtures/approver-set-host.ts`). Then fresh processes
 * do what a worker or operator does: reconcile, `dispatcher.recover` what is
 * left, reconcile again.
 *
 * Expected at every point: the payment ran at most once (never twice); every
 * member review ends terminal (`completed` or `stale`, or `uncertain` with a
 * reason an operator can act on); the third approver's decision is cancelled
 * at the service.
 */
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PusharyWorkflowReview } from '../../src/store/review-schema.js'
import type { PusharyReviewStore } from '../../src/store/review-store.js'
import { createSqliteReviewStore } from '../../src/store/sqlite-store.js'
import { createTestEnv, runFixture, type TestEnv } from '../helpers/mastra.js'
import { nodeScript } from '../helpers/node-script.js'
import { runCli } from './support/cli.js'
import { allDecisions, allReviews, decisionBinding, effectCounts } from './support/scenario.js'

const HOST = 'test/reliability/fixtures/approver-set-host.ts'
const APPROVERS = ['alice', 'bob', 'carol'] as const

let env: TestEnv
let store: PusharyReviewStore

beforeAll(async () => {
  env = await createTestEnv('approver-set-crash')
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

interface Point {
  crash: 'before-cancel' | 'after-cancel' | 'after-effect' | 'before-finish' | 'before-stale-finish'
  stage: string
  /** Who ends it: recovery alone, or an operator (a review `uncertain` because the payment may have run). */
  settledBy: 'recovery' | 'operator'
  /** How bob's review (the resume that was killed) ends. */
  bobEnds: RegExp
}

const POINTS: readonly Point[] = [
  {
    crash: 'before-cancel',
    stage: 'the step decided the quorum, before the third decision is cancelled',
    settledBy: 'recovery',
    bobEnds: /recovered: the restarted approval step settled the approvers' set and the run finished/,
  },
  {
    crash: 'after-cancel',
    stage: 'after the cancel, before the protected step and the review endings',
    settledBy: 'recovery',
    bobEnds: /recovered: the restarted approval step settled the approvers' set and the run finished/,
  },
  {
    crash: 'after-effect',
    stage: 'inside the protected step, after its side effect',
    settledBy: 'operator',
    bobEnds: /payment found in the ledger/,
  },
  {
    crash: 'before-finish',
    stage: 'after the run finished, before the first review ending is written',
    settledBy: 'recovery',
    bobEnds: /recovered: the approval step had returned before the crash/,
  },
  {
    crash: 'before-stale-finish',
    stage: "at the withdrawn member's ending, after its claim (paid, the settling member ended)",
    settledBy: 'recovery',
    bobEnds: /the approvers' set was approved .*settled by/,
  },
]

/** `PUSHARY_SET_CRASH_POINTS=after-effect,after-save-1` runs only those points, of either phase (replaying one while debugging). */
const ONLY = (process.env.PUSHARY_SET_CRASH_POINTS ?? '').split(',').filter(Boolean)

/** Starts a run, alice says yes and is resumed, bob says yes; returns the run and each approver's decision. */
async function quorumAnswered(
  name: string,
): Promise<{ runId: string; op: string; ids: Record<string, string> }> {
  const tag = randomUUID().slice(0, 8)
  const runId = `set-${name}-${tag}`
  const op = `pay:${tag}`
  const input = {
    operationId: op,
    question: `Pay invoice ${tag}?`,
    approvers: { externalIds: APPROVERS.map((name) => `${name}-${tag}`), required: 2 },
  }
  expect(await host(['start', JSON.stringify({ input, runId })])).toMatchObject({ status: 'suspended' })
  const reviews = await reviewsOf(runId)
  expect(reviews).toHaveLength(3)
  const ids = Object.fromEntries(
    APPROVERS.map((name) => [
      name,
      reviews.find((review) => review.externalId === `${name}-${tag}`)?.decisionId as string,
    ]),
  )
  await env.client.decisions.answer(ids.alice as string, 'yes')
  expect(await host(['resume', JSON.stringify([ids.alice])])).toMatchObject([
    { status: 'resumed', runStatus: 'suspended' },
  ])
  await env.client.decisions.answer(ids.bob as string, 'yes')
  return { runId, op, ids }
}

/** Drives one run to the kill of bob's resume (the one that reaches the quorum) at `point`. */
async function crashAt(point: Point): Promise<{ runId: string; op: string; ids: Record<string, string> }> {
  const answered = await quorumAnswered(point.crash)
  await expect(host(['resume', JSON.stringify([answered.ids.bob])], point.crash)).rejects.toThrow(/SIGKILL/)
  return answered
}

/** A review still waiting: `pending`, or `resuming` (a claim a crash may have left). */
function open(review: PusharyWorkflowReview): boolean {
  return review.state === 'pending' || review.state === 'resuming'
}

/** The operator's part (docs/operations.md): settle an `uncertain` review from the business records. */
async function operatorSettles(review: PusharyWorkflowReview, paid: number): Promise<void> {
  const result = await runCli([
    'reviews',
    'recover',
    review.decisionId,
    paid > 0 ? 'completed' : 'stale',
    '--reason',
    paid > 0 ? 'payment found in the ledger' : 'no payment in the ledger',
    '--db',
    join(env.dir, 'reviews.db'),
  ])
  expect(result.code, result.stderr).toBe(0)
}

describe('several approvers: SIGKILL while the quorum settles, then fresh processes recover', () => {
  it('never pays twice, ends every member review and withdraws the third question', async () => {
    const summary: string[] = []
    for (const point of POINTS.filter((entry) => ONLY.length === 0 || ONLY.includes(entry.crash))) {
      const { runId, op, ids } = await crashAt(point)
      const label = point.stage
      expect((await effectCounts(env.dir)).get(op) ?? 0, label).toBeLessThanOrEqual(1)

      // What a worker does after a restart: reconcile, recover what is left, reconcile.
      await host(['reconcile'])
      for (let round = 0; round < 3; round++) {
        const left = (await reviewsOf(runId)).filter(open).map((review) => review.decisionId)
        if (left.length === 0) break
        await host(['recover', JSON.stringify(left)])
        await host(['reconcile'])
      }
      const paid = (await effectCounts(env.dir)).get(op) ?? 0
      expect(paid, label).toBeLessThanOrEqual(1)

      // After recovery: every member is terminal, or `uncertain` with a reason
      // the operator acts on; a member still open only waits behind such a
      // sibling (a run's resumes are serialized while one is uncertain).
      const recovered = await reviewsOf(runId)
      const uncertain = recovered.filter((review) => review.state === 'uncertain')
      for (const review of uncertain) {
        expect((await store.history(review.decisionId)).at(-1)?.reason, label).toMatch(
          /confirm them, then store\.recover/,
        )
      }
      for (const review of recovered.filter(open)) {
        expect(uncertain.length, `${label}: ${review.externalId} left ${review.state}`).toBeGreaterThan(0)
      }
      for (const review of uncertain) await operatorSettles(review, paid)
      // The next reconcile ends a member that waited behind the uncertain one.
      if (uncertain.length > 0) await host(['reconcile'])

      const final = await reviewsOf(runId)
      const stateOf = (name: string) => final.find((review) => review.decisionId === ids[name])?.state
      expect(paid, `${label}: an approved set pays exactly once`).toBe(1)
      expect(stateOf('alice'), label).toBe('completed')
      expect(stateOf('bob'), label).toBe('completed')
      expect(stateOf('carol'), label).toBe('stale')
      expect((await store.history(ids.bob as string)).at(-1)?.reason, label).toMatch(point.bobEnds)
      expect((await store.history(ids.carol as string)).at(-1)?.reason, label).toMatch(
        /withdrawn \(cancelled at the service\).*settled by/,
      )
      expect((await env.client.decisions.get(ids.carol as string)).status, label).toBe('cancelled')
      // One payment, one review that records it (never a withdrawn member).
      const outcomes = await Promise.all(final.map((review) => store.actionOf(review.decisionId)))
      const recording = outcomes.filter((action) => action?.outcome === 'ran').length
      expect(recording, `${label}: reviews recording the payment`).toBeLessThanOrEqual(1)
      if (point.settledBy === 'recovery') expect(recording, label).toBe(1)
      expect((await store.actionOf(ids.carol as string))?.outcome ?? null, label).toBeNull()
      summary.push(
        `${point.crash}: paid ${paid}; settled by ${uncertain.length > 0 ? 'operator' : 'recovery'}`,
      )
      expect(uncertain.length > 0 ? 'operator' : 'recovery', label).toBe(point.settledBy)
    }
    console.log(`approver-set crash points:\n${summary.join('\n')}`)
  }, 300_000)
})

describe('several approvers: a recover while a live worker settles the set', () => {
  it('does not restart the run under the live resume (the payment runs once)', async () => {
    const { runId, op, ids } = await quorumAnswered('live')
    // Bob's resume is alive, held inside the approval step at its first cancel.
    const hold = join(env.dir, `hold-${runId}`)
    const live = spawn(
      process.execPath,
      [...nodeScript(HOST), 'resume', env.dir, JSON.stringify([ids.bob])],
      {
        env: { ...process.env, PUSHARY_TEST_SET_HOLD_CANCEL: hold },
        stdio: 'ignore',
      },
    )
    const exited = new Promise<number | null>((resolve) => live.on('close', resolve))
    while (!existsSync(`${hold}.held`)) await new Promise((resolve) => setTimeout(resolve, 50))
    // Meanwhile someone recovers carol's review, still pending, from another process.
    const [carol] = await host<{ status: string; reason?: string }[]>([
      'recover',
      JSON.stringify([ids.carol]),
    ])
    expect(carol).toMatchObject({ status: 'busy' })
    expect(carol?.reason).toMatch(/approver bob-.* is resuming and holds the run; recover that decision/)
    expect((await effectCounts(env.dir)).get(op) ?? 0).toBe(0)
    writeFileSync(hold, '')
    expect(await exited).toBe(0)

    expect((await effectCounts(env.dir)).get(op) ?? 0).toBe(1)
    const final = await reviewsOf(runId)
    expect(final.map((review) => [review.externalId?.split('-')[0], review.state]).sort()).toEqual([
      ['alice', 'completed'],
      ['bob', 'completed'],
      ['carol', 'stale'],
    ])
    expect((await env.client.decisions.get(ids.carol as string)).status).toBe('cancelled')
  }, 120_000)
})

/**
 * SIGKILL in the first pass: after some approvers' decisions were created
 * but before every member review was saved, or after all were saved but
 * before Mastra persisted the suspension. Then what an operator does
 * (docs/operations.md): reconcile, `dispatcher.recover` every decision of
 * the run that is not settled (its pending reviews, and the decisions the
 * service holds for the run without a review), reconcile again. Alice and
 * bob approve whatever reaches their phones (`early`: right after the
 * crash, before any recovery; else only after the first recovery); carol
 * never answers.
 *
 * Expected: no decision of the run is left open at the service without a
 * review that resumes or withdraws it; the payment ran at most once (here
 * exactly once: the quorum approves); every decision has a member review and
 * every member review ends terminal: alice and bob `completed`, carol
 * `stale` with her decision cancelled.
 */
interface FirstPassPoint {
  crash: `after-create-${number}` | `after-save-${number}`
  stage: string
  early: boolean
}

const FIRST_PASS: readonly FirstPassPoint[] = [
  { crash: 'after-create-1', stage: "after alice's decision was created", early: true },
  { crash: 'after-create-2', stage: "after alice's and bob's decisions were created", early: false },
  { crash: 'after-create-2', stage: "after alice's and bob's decisions were created", early: true },
  { crash: 'after-save-1', stage: "after alice's review was saved", early: false },
  { crash: 'after-save-1', stage: "after alice's review was saved", early: true },
  { crash: 'after-save-3', stage: 'after every review was saved, before the suspension', early: false },
  { crash: 'after-save-3', stage: 'after every review was saved, before the suspension', early: true },
]

/** The decisions the service holds for one run (by the binding in their context). */
async function decisionsOf(runId: string) {
  return (await allDecisions(env.client)).filter((decision) => decisionBinding(decision)?.runId === runId)
}

/** Alice and bob approve every question of the run still open on their phones. */
async function approversAnswer(runId: string, tag: string): Promise<void> {
  for (const decision of await decisionsOf(runId)) {
    if (decision.status !== 'pending') continue
    if (decision.externalId === `alice-${tag}` || decision.externalId === `bob-${tag}`) {
      await env.client.decisions.answer(decision.decisionId, 'yes')
    }
  }
}

/** What an operator recovers: open reviews of the run, and decisions of the run without a review. */
async function unsettledOf(runId: string): Promise<string[]> {
  const reviews = await reviewsOf(runId)
  const ids = new Set(reviews.filter(open).map((review) => review.decisionId))
  for (const decision of await decisionsOf(runId)) {
    if (!reviews.some((review) => review.decisionId === decision.decisionId)) ids.add(decision.decisionId)
  }
  return [...ids]
}

describe('several approvers: SIGKILL in the first pass, then fresh processes recover', () => {
  for (const point of FIRST_PASS.filter((entry) => ONLY.length === 0 || ONLY.includes(entry.crash))) {
    const label = `${point.stage}${point.early ? ', answered before recovery' : ''}`
    it(`${label}: no question left open without a review, paid once, a true record`, async () => {
      const tag = randomUUID().slice(0, 8)
      const runId = `set-first-${point.crash}-${tag}`
      const op = `pay:${tag}`
      const input = {
        operationId: op,
        question: `Pay invoice ${tag}?`,
        approvers: { externalIds: APPROVERS.map((name) => `${name}-${tag}`), required: 2 },
      }
      await expect(host(['start', JSON.stringify({ input, runId })], point.crash)).rejects.toThrow(/SIGKILL/)
      expect((await decisionsOf(runId)).length).toBeGreaterThan(0)
      if (point.early) await approversAnswer(runId, tag)

      await host(['reconcile'])
      for (let round = 0; round < 3; round++) {
        const left = await unsettledOf(runId)
        if (left.length === 0) break
        await host(['recover', JSON.stringify(left)])
        await approversAnswer(runId, tag)
        await host(['reconcile'])
      }
      const paid = (await effectCounts(env.dir)).get(op) ?? 0
      expect(paid, 'payments').toBeLessThanOrEqual(1)

      const decisions = await decisionsOf(runId)
      const final = await reviewsOf(runId)
      // No question left on a phone that nothing would resume or withdraw.
      for (const decision of decisions.filter((entry) => entry.status === 'pending')) {
        const review = final.find((entry) => entry.decisionId === decision.decisionId)
        expect(review?.state, `${decision.externalId} is open with no pending review`).toBe('pending')
      }
      expect(paid, 'the quorum approved: the payment runs once').toBe(1)
      // The record: one review per decision asked, each ended, one of them with the payment.
      expect(decisions.map((decision) => decision.externalId).sort()).toEqual(
        APPROVERS.map((name) => `${name}-${tag}`),
      )
      for (const decision of decisions) {
        const review = final.find((entry) => entry.decisionId === decision.decisionId)
        expect(review, `${decision.externalId} (${decision.status}) has no review`).toBeDefined()
      }
      const stateOf = (name: string) => final.find((review) => review.externalId === `${name}-${tag}`)?.state
      expect(stateOf('alice')).toBe('completed')
      expect(stateOf('bob')).toBe('completed')
      expect(stateOf('carol')).toBe('stale')
      expect(decisions.find((decision) => decision.externalId === `carol-${tag}`)?.status).toBe('cancelled')
      const actions = await Promise.all(final.map((review) => store.actionOf(review.decisionId)))
      expect(
        actions.filter((action) => action?.outcome === 'ran'),
        'the member review that records the payment',
      ).toHaveLength(1)
    }, 120_000)
  }
})
