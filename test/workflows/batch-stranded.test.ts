/**
 * A multi-item parent killed while its batch step fans out (before Mastra
 * persisted its suspension) is found through its own `batch-parent` review
 * and restarted once by `dispatcher.recover`; a parent that is merely slow
 * keeps its claim alive and is never taken over. Real Mastra on LibSQL
 * files, the SQLite review store, the local decision service over loopback,
 * and separate OS processes for the crashes and the racing recoverers.
 */
import { randomUUID } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isPusharyValidationError } from '../../src/pushary/errors.js'
import type { PusharyDispatchResult } from '../../src/resume/dispatch-types.js'
import { pusharyApprovalBatchStep } from '../../src/workflows/approval-workflows.js'
import { batchParentReviewId } from '../../src/workflows/batch-parent.js'
import { thrown } from '../helpers/errors.js'
import { createTestEnv, runFixture, type TestEnv, waitFor } from '../helpers/mastra.js'
import { allDecisions, belongsTo, decisionBinding, effectCounts } from '../reliability/support/scenario.js'
import { buildApp, CLAIM_LEASE_MS, type TestApp } from './fixtures/app.js'

let env: TestEnv
let app: TestApp

beforeAll(async () => {
  env = await createTestEnv('batch-stranded')
  app = buildApp(env)
})

afterAll(async () => {
  await app?.close()
  await env?.close()
})

const WORKFLOW_ID = 'refund-batch'

interface Batch {
  runId: string
  ops: string[]
  reviewId: string
  release: string
}

function newBatch(name: string): Batch {
  const tag = randomUUID().slice(0, 8)
  const runId = `${name}-${tag}`
  return {
    runId,
    ops: [`${name}-${tag}-0`, `${name}-${tag}-1`],
    reviewId: batchParentReviewId({ workflowId: WORKFLOW_ID, runId, stepId: 'pushary-approval-batch' }),
    release: join(env.dir, `release-${tag}`),
  }
}

function startArgs(batch: Batch): string[] {
  const input = batch.ops.map((op) => ({ operationId: op, question: `Refund ${op}?` }))
  return ['start', env.dir, JSON.stringify({ workflowId: WORKFLOW_ID, input, runId: batch.runId })]
}

async function killed(args: string[], crash: Record<string, string>): Promise<void> {
  await expect(runFixture(args, { env: crash })).rejects.toThrow(/SIGKILL/)
}

async function runStatus(runId: string): Promise<string | undefined> {
  const workflow = app.mastra.getWorkflowById(WORKFLOW_ID as never) as unknown as {
    getWorkflowRunById(id: string): Promise<{ status: string } | null>
  }
  return (await workflow.getWorkflowRunById(runId))?.status
}

/** Answers the batch's asked items: the first approved, the second denied. */
async function answerItems(batch: Batch): Promise<number> {
  let answered = 0
  for (const decision of await allDecisions(env.client)) {
    const binding = decisionBinding(decision)
    if (!binding || !belongsTo(binding, batch.runId) || decision.status !== 'pending') continue
    await env.client.decisions.answer(
      decision.decisionId,
      binding.operationId === batch.ops[0] ? 'yes' : 'no',
    )
    answered++
  }
  return answered
}

/** Answers the items, reconciles, and checks the approved item ran exactly once and the denied one never. */
async function answerAndFinish(batch: Batch): Promise<void> {
  expect(await answerItems(batch)).toBe(2)
  await app.dispatcher.reconcile({ limit: 1000 })
  expect(await runStatus(batch.runId)).toBe('success')
  const counts = await effectCounts(env.dir)
  expect(counts.get(batch.ops[0] as string) ?? 0).toBe(1)
  expect(counts.get(batch.ops[1] as string) ?? 0).toBe(0)
  expect((await app.store.get(batch.reviewId))?.state).toBe('completed')
}

/** Waits until the claim's time stopped moving for a whole lease (its holder is gone). */
async function leaseRanOut(reviewId: string): Promise<void> {
  await waitFor(
    async () => {
      const claim = await app.store.claimState(reviewId)
      return claim && Date.now() - Date.parse(claim.since) > CLAIM_LEASE_MS + 250 ? true : undefined
    },
    60_000,
    100,
  )
}

describe('a multi-item parent killed while fanning out', () => {
  it('is restarted by exactly one of three simultaneous recoverers, and the approved item runs once', async () => {
    const batch = newBatch('stranded-race')
    // Killed right after claiming its own review, before asking any item.
    await killed(startArgs(batch), { PUSHARY_TEST_CRASH_AFTER_CLAIM: '1' })
    expect(await runStatus(batch.runId)).toBe('running')
    expect((await app.store.get(batch.reviewId))?.state).toBe('resuming')
    const history = await app.store.history(batch.reviewId)
    expect(history.at(-1)).toMatchObject({ event: 'CLAIM', reason: expect.stringMatching(/fanning out 2/) })

    await leaseRanOut(batch.reviewId)
    // Every recoverer's restart would wait at its first question; only the
    // winner gets there, so the two others must have answered by then.
    const answered: PusharyDispatchResult[] = []
    const racers = [0, 1, 2].map(() =>
      runFixture<PusharyDispatchResult[]>(['recover-once', env.dir, JSON.stringify([batch.reviewId])], {
        env: { PUSHARY_TEST_HOLD_CREATE: batch.release },
      }).then(([result]) => {
        answered.push(result as PusharyDispatchResult)
        return result as PusharyDispatchResult
      }),
    )
    await waitFor(async () => (answered.length >= 2 ? true : undefined), 120_000, 100)
    expect(answered.map((result) => result.status)).toEqual(['busy', 'busy'])
    writeFileSync(batch.release, '')
    const results = await Promise.all(racers)
    const winners = results.filter((result) => result.status === 'parent')
    expect(winners).toHaveLength(1)
    expect(winners[0]).toMatchObject({ parent: { status: 'waiting' } })
    const events = (await app.store.history(batch.reviewId)).map((entry) => entry.event)
    expect(events.filter((event) => event === 'RECLAIM')).toHaveLength(1)
    expect(await runStatus(batch.runId)).toBe('suspended')
    expect((await app.store.get(batch.reviewId))?.state).toBe('pending')

    await answerAndFinish(batch)
  }, 300_000)

  it('is left alone by reconcile and restarted by recover when killed after releasing its claim, before its suspension was persisted', async () => {
    const batch = newBatch('stranded-released')
    // The fan-out's release is the first `finish` of that process.
    await killed(startArgs(batch), { PUSHARY_TEST_CRASH_AFTER_FINISH: '1' })
    expect(await runStatus(batch.runId)).toBe('running')
    expect((await app.store.get(batch.reviewId))?.state).toBe('pending')
    const before = await app.store.history(batch.reviewId)

    const report = await app.dispatcher.reconcile({ limit: 1000 })
    expect(report.results).toContainEqual(
      expect.objectContaining({
        decisionId: batch.reviewId,
        status: 'parent',
        parent: expect.objectContaining({ status: 'deferred', reason: expect.stringMatching(/recover/) }),
      }),
    )
    // Reconcile claimed nothing: the parent's history is as the crash left it.
    expect(await app.store.history(batch.reviewId)).toEqual(before)

    const recovered = await app.dispatcher.recover(batch.reviewId)
    expect(recovered).toMatchObject({ status: 'parent', parent: { status: 'waiting' } })
    expect(await runStatus(batch.runId)).toBe('suspended')
    const reasons = (await app.store.history(batch.reviewId)).map((entry) => entry.reason)
    expect(reasons).toContainEqual(expect.stringMatching(/never suspended/))
    expect(reasons.at(-1)).toMatch(/waits on its items again/)

    await answerAndFinish(batch)
  }, 300_000)
})

describe('a multi-item parent that is slow, not dead', () => {
  it('keeps its fan-out claim alive, so recovery answers busy however long it takes and never takes it over', async () => {
    const batch = newBatch('slow-fanout')
    const starting = runFixture<{ status: string }>(startArgs(batch), {
      env: { PUSHARY_TEST_HOLD_CREATE: batch.release },
    })
    await waitFor(
      async () => ((await app.store.claimState(batch.reviewId))?.state === 'resuming' ? true : undefined),
      120_000,
      100,
    )
    // Three leases pass while the fan-out is held at its first question.
    const attempts: PusharyDispatchResult[] = []
    for (let index = 0; index < 6; index++) {
      await new Promise((resolve) => setTimeout(resolve, CLAIM_LEASE_MS / 2))
      attempts.push(await app.dispatcher.recover(batch.reviewId))
    }
    expect(attempts.map((attempt) => attempt.status)).toEqual(Array(6).fill('busy'))
    for (const attempt of attempts) expect(attempt).toMatchObject({ reason: expect.stringMatching(/alive/) })
    expect((await app.store.history(batch.reviewId)).map((entry) => entry.event)).toEqual([null, 'CLAIM'])
    expect(await runStatus(batch.runId)).toBe('running')

    writeFileSync(batch.release, '')
    expect((await starting).status).toBe('suspended')
    expect((await app.store.get(batch.reviewId))?.state).toBe('pending')
    await answerAndFinish(batch)
  }, 300_000)
})

describe('the batch step is built with the store its fan-out is claimed in', () => {
  it('refuses to build without the store or with a bad claim lease, naming the field', () => {
    const missing = thrown(() => pusharyApprovalBatchStep({ childWorkflowId: 'approval-item' } as never))
    expect(isPusharyValidationError(missing) && missing.field).toBe('opts.store')
    const lease = thrown(() =>
      pusharyApprovalBatchStep({ childWorkflowId: 'approval-item', store: app.store, claimLeaseMs: 1.5 }),
    )
    expect(isPusharyValidationError(lease) && lease.field).toBe('opts.claimLeaseMs')
  })
})
