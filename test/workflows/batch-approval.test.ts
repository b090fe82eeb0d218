import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPusharyDispatcher } from '../../src/agents/dispatcher.js'
import type { PusharyWorkflowReview } from '../../src/store/review-schema.js'
import { batchChildRunId } from '../../src/workflows/batch-children.js'
import { batchParentReviewId, settleBatchParent } from '../../src/workflows/batch-parent.js'
import { createTestEnv, listEffects, runFixture, type TestEnv } from '../helpers/mastra.js'
import { buildApp, type TestApp } from './fixtures/app.js'

let env: TestEnv
let app: TestApp

beforeAll(async () => {
  env = await createTestEnv('batch')
  app = buildApp(env)
})

afterAll(async () => {
  await app?.close()
  await env?.close()
})

type RunView = { status: string; result?: unknown }

function workflow(id: string) {
  return app.mastra.getWorkflowById(id as never) as unknown as {
    createRun(): Promise<{ runId: string; start(p: { inputData: unknown }): Promise<{ status: string }> }>
    getWorkflowRunById(id: string): Promise<RunView | null>
  }
}

function shuffle<T>(items: T[], seed: number): T[] {
  const copy = [...items]
  let state = seed
  for (let index = copy.length - 1; index > 0; index--) {
    state = (state * 1103515245 + 12345) % 2147483648
    const other = state % (index + 1)
    ;[copy[index], copy[other]] = [copy[other] as T, copy[index] as T]
  }
  return copy
}

async function childReviews(parentRunId: string): Promise<PusharyWorkflowReview[]> {
  const pending = await app.store.listByState('pending', { limit: 1000 })
  return pending
    .filter((review): review is PusharyWorkflowReview => review.target === 'workflow-step')
    .filter((review) => review.parent?.runId === parentRunId)
    .sort((a, b) => (a.parent?.itemIndex ?? 0) - (b.parent?.itemIndex ?? 0))
}

describe('linear multi-item approval (one child run per item)', () => {
  it('completes 100 items answered in random order across two processes, each resolved once', async () => {
    const count = 100
    const items = Array.from({ length: count }, (_, index) => ({
      operationId: `batch-${index}`,
      question: `Refund item ${index}?`,
    }))
    const run = await workflow('refund-batch').createRun()
    expect((await run.start({ inputData: items })).status).toBe('suspended')
    const children = await childReviews(run.runId)
    expect(children).toHaveLength(count)
    expect(new Set(children.map((review) => review.decisionId)).size).toBe(count)
    expect(children.map((review) => review.runId)).toEqual(
      items.map((item, index) =>
        batchChildRunId(
          { workflowId: 'refund-batch', runId: run.runId, stepId: 'pushary-approval-batch' },
          index,
          item,
        ),
      ),
    )

    // Even items approved, odd denied; answered and resumed in random order.
    const order = shuffle(children, 7)
    for (const review of order) {
      await env.client.decisions.answer(
        review.decisionId,
        (review.parent?.itemIndex ?? 1) % 2 === 0 ? 'yes' : 'no',
      )
    }
    const ids = order.map((review) => review.decisionId)
    const halves = [ids.filter((_, index) => index % 2 === 0), ids.filter((_, index) => index % 2 === 1)]
    const results = await Promise.all(
      halves.map((half) =>
        runFixture<{ status: string }[]>(['resume-decisions', env.dir, JSON.stringify(half)]),
      ),
    )
    expect(
      results
        .flat()
        .map((result) => result.status)
        .filter((status) => status !== 'resumed'),
    ).toEqual([])

    const state = await workflow('refund-batch').getWorkflowRunById(run.runId)
    expect(state?.status).toBe('success')
    const refunded = (await listEffects(env.dir))
      .filter((effect) => effect.kind === 'refund-item' && effect.key.startsWith('batch-'))
      .map((effect) => effect.key)
    const expected = items.filter((_, index) => index % 2 === 0).map((item) => item.operationId)
    expect([...refunded].sort()).toEqual([...expected].sort())
    expect(new Set(refunded).size).toBe(refunded.length)
    for (const review of children) expect((await app.store.get(review.decisionId))?.state).toBe('completed')
    // Settling again is a no-op.
    const again = await settleBatchParent({
      mastra: app.mastra,
      store: app.store,
      parent: { workflowId: 'refund-batch', runId: run.runId, stepId: 'pushary-approval-batch' },
    })
    expect(again.status).toBe('already_settled')
  })

  it('completes 1,000 items resumed one by one in random order, each resolved once', async () => {
    const count = 1000
    const items = Array.from({ length: count }, (_, index) => ({
      operationId: `big-${index}`,
      question: `Refund big item ${index}?`,
    }))
    const run = await workflow('refund-batch').createRun()
    expect((await run.start({ inputData: items })).status).toBe('suspended')
    const children = await childReviews(run.runId)
    expect(children).toHaveLength(count)
    for (const review of children) {
      await env.client.decisions.answer(
        review.decisionId,
        (review.parent?.itemIndex ?? 1) % 10 === 0 ? 'yes' : 'no',
      )
    }
    const statuses = new Map<string, number>()
    for (const review of shuffle(children, 11)) {
      const result = await app.dispatcher.resumeDecision(review.decisionId)
      statuses.set(result.status, (statuses.get(result.status) ?? 0) + 1)
    }
    expect(Object.fromEntries(statuses)).toEqual({ resumed: count })
    expect((await workflow('refund-batch').getWorkflowRunById(run.runId))?.status).toBe('success')
    const refunded = (await listEffects(env.dir)).filter((effect) => effect.key.startsWith('big-'))
    expect(refunded).toHaveLength(count / 10)
    expect(new Set(refunded.map((effect) => effect.key)).size).toBe(count / 10)
  }, 180_000)

  it('re-suspends the parent when resumed before every item is settled, and returns answers in input order', async () => {
    const items = [0, 1, 2].map((index) => ({ operationId: `early-${index}`, question: `Refund ${index}?` }))
    const run = await workflow('refund-batch').createRun()
    expect((await run.start({ inputData: items })).status).toBe('suspended')
    const children = await childReviews(run.runId)
    await env.client.decisions.answer(children[2]!.decisionId, 'yes')
    const first = await app.dispatcher.resumeDecision(children[2]!.decisionId)
    expect(first.status).toBe('resumed')
    expect(first.status === 'resumed' && first.parent).toMatchObject({ status: 'waiting', openIndex: 0 })
    // A premature parent resume cannot inject answers: it re-reads the children and waits again.
    const parentRun = await (
      app.mastra.getWorkflowById('refund-batch' as never) as unknown as {
        createRun(o: { runId: string }): Promise<{
          resume(p: { step: string; resumeData: unknown }): Promise<{ status: string }>
        }>
      }
    ).createRun({ runId: run.runId })
    expect(
      (await parentRun.resume({ step: 'pushary-approval-batch', resumeData: { settled: true } })).status,
    ).toBe('suspended')
    await env.client.decisions.cancel(children[0]!.decisionId)
    await env.client.decisions.answer(children[1]!.decisionId, 'no')
    await app.dispatcher.resumeDecision(children[0]!.decisionId)
    const last = await app.dispatcher.resumeDecision(children[1]!.decisionId)
    expect(last.status === 'resumed' && last.parent?.status).toBe('resumed')
    const state = await workflow('refund-batch').getWorkflowRunById(run.runId)
    expect(state?.status).toBe('success')
    const steps = (state as unknown as { steps: Record<string, { output?: unknown }> }).steps
    expect(steps['pushary-approval-batch']?.output).toEqual([
      { status: 'cancelled', value: null, approved: false },
      { status: 'answered', value: 'no', approved: false },
      { status: 'answered', value: 'yes', approved: true },
    ])
    expect(steps['pushary-gate-items']?.output).toEqual([
      { index: 2, answer: { status: 'answered', value: 'yes', approved: true } },
    ])
    const keys = (await listEffects(env.dir))
      .map((effect) => effect.key)
      .filter((key) => key.startsWith('early-'))
    expect(keys).toEqual(['early-2'])
  })

  it('settles a parent whose last child finished before the parent could be resumed, on the next reconcile', async () => {
    const items = [0, 1].map((index) => ({ operationId: `late-${index}`, question: `Refund late ${index}?` }))
    const run = await workflow('refund-batch').createRun()
    expect((await run.start({ inputData: items })).status).toBe('suspended')
    const children = await childReviews(run.runId)
    for (const review of children) await env.client.decisions.answer(review.decisionId, 'yes')
    // The parent looks busy (as while its first pass is still persisting) when the children finish.
    const storage = await app.mastra.getStorage()!.getStore('workflows')
    await storage!.updateWorkflowState({
      workflowName: 'refund-batch',
      runId: run.runId,
      opts: { status: 'running' },
    })
    const impatient = createPusharyDispatcher({
      mastra: app.mastra,
      client: env.client,
      store: app.store,
      conflictTimeoutMs: 200,
    })
    const outcomes = []
    for (const review of children) outcomes.push(await impatient.resumeDecision(review.decisionId))
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['resumed', 'resumed'])
    expect(outcomes[1]?.status === 'resumed' && outcomes[1].parent?.status).toBe('deferred')
    expect((await workflow('refund-batch').getWorkflowRunById(run.runId))?.status).toBe('running')

    await storage!.updateWorkflowState({
      workflowName: 'refund-batch',
      runId: run.runId,
      opts: { status: 'suspended' },
    })
    const report = await app.dispatcher.reconcile({ limit: 100 })
    expect(report.parents).toContainEqual(
      expect.objectContaining({ status: 'resumed', runStatus: 'success' }),
    )
    expect((await workflow('refund-batch').getWorkflowRunById(run.runId))?.status).toBe('success')
    const keys = (await listEffects(env.dir))
      .map((effect) => effect.key)
      .filter((key) => key.startsWith('late-'))
    expect(keys.sort()).toEqual(['late-0', 'late-1'])
  })

  it('is left unclaimed and unresumed by reconcile while an item is open, and resumed by it once every item is settled', async () => {
    const items = [0, 1, 2].map((index) => ({
      operationId: `idle-${index}`,
      question: `Refund idle ${index}?`,
    }))
    const run = await workflow('refund-batch').createRun()
    expect((await run.start({ inputData: items })).status).toBe('suspended')
    const parent = { workflowId: 'refund-batch', runId: run.runId, stepId: 'pushary-approval-batch' }
    const reviewId = batchParentReviewId(parent)
    const storage = await app.mastra.getStorage()!.getStore('workflows')
    const parentRow = async () =>
      (await storage!.getWorkflowRunById({ runId: run.runId, workflowName: 'refund-batch' }))?.updatedAt
    const before = await parentRow()
    const children = await childReviews(run.runId)
    await env.client.decisions.answer(children[0]!.decisionId, 'yes')
    await app.dispatcher.resumeDecision(children[0]!.decisionId)

    const history = await app.store.history(reviewId)
    for (let round = 0; round < 2; round++) {
      const report = await app.dispatcher.reconcile({ limit: 1000 })
      expect(report.parents).toContainEqual({
        workflowId: 'refund-batch',
        runId: run.runId,
        status: 'waiting',
        openIndex: 1,
      })
    }
    // Never claimed, and the parent run (whose snapshot holds every item) never rewritten.
    expect(await app.store.history(reviewId)).toEqual(history)
    expect((await app.store.get(reviewId))?.state).toBe('pending')
    expect(await parentRow()).toEqual(before)

    for (const review of children.slice(1)) await env.client.decisions.answer(review.decisionId, 'no')
    // The round resumes the answered items; the last one settles the parent.
    await app.dispatcher.reconcile({ limit: 1000 })
    expect((await workflow('refund-batch').getWorkflowRunById(run.runId))?.status).toBe('success')
    expect((await app.store.get(reviewId))?.state).toBe('completed')
    const keys = (await listEffects(env.dir))
      .map((effect) => effect.key)
      .filter((key) => key.startsWith('idle-'))
    expect(keys).toEqual(['idle-0'])
  })

  it('settles, reading it fresh, a parent replaced under the same run ID while this process remembered its old batch', async () => {
    const run = await workflow('refund-batch').createRun()
    const first = [0, 1].map((index) => ({ operationId: `swap-${index}`, question: `Refund swap ${index}?` }))
    expect((await run.start({ inputData: first })).status).toBe('suspended')
    const old = await childReviews(run.runId)
    await env.client.decisions.answer(old[0]!.decisionId, 'yes')
    const answered = await app.dispatcher.resumeDecision(old[0]!.decisionId)
    // This process now remembers the batch [swap-0, swap-1] with item 1 open.
    expect(answered.status === 'resumed' && answered.parent).toMatchObject({
      status: 'waiting',
      openIndex: 1,
    })

    const storage = await app.mastra.getStorage()!.getStore('workflows')
    await storage!.deleteWorkflowRunById({ workflowName: 'refund-batch', runId: run.runId })
    const replaced = await (
      app.mastra.getWorkflowById('refund-batch' as never) as unknown as {
        createRun(o: {
          runId: string
        }): Promise<{ start(p: { inputData: unknown }): Promise<{ status: string }> }>
      }
    ).createRun({ runId: run.runId })
    // Same count (a parent's review is bound to it), other items.
    const second = [0, 1].map((index) => ({
      operationId: `swap-new-${index}`,
      question: `Refund new ${index}?`,
    }))
    expect((await replaced.start({ inputData: second })).status).toBe('suspended')
    const fresh = (await childReviews(run.runId)).filter(
      (review) => !old.some((before) => before.decisionId === review.decisionId),
    )
    expect(fresh).toHaveLength(2)
    for (const review of fresh) {
      await env.client.decisions.answer(review.decisionId, 'yes')
      const done = await app.dispatcher.resumeDecision(review.decisionId)
      // The dispatcher's path scans with the remembered batch, whose item 1 is still open.
      expect(done.status === 'resumed' && done.parent?.status).toBe('waiting')
    }

    // Reconcile's fallback (and recovery) settle with the parent read fresh.
    const settled = await settleBatchParent({
      mastra: app.mastra,
      store: app.store,
      parent: { workflowId: 'refund-batch', runId: run.runId, stepId: 'pushary-approval-batch' },
    })
    expect(settled).toMatchObject({ status: 'resumed', runStatus: 'success' })
    expect((await workflow('refund-batch').getWorkflowRunById(run.runId))?.status).toBe('success')
    // The old batch's last item, answered late, cannot run the replaced parent again.
    await env.client.decisions.answer(old[1]!.decisionId, 'yes')
    const late = await app.dispatcher.resumeDecision(old[1]!.decisionId)
    expect(late.status === 'resumed' && late.parent?.status).toBe('already_settled')
    const keys = (await listEffects(env.dir))
      .map((effect) => effect.key)
      .filter((key) => key.startsWith('swap-'))
    expect(keys.sort()).toEqual(['swap-new-0', 'swap-new-1'])
  })
})
