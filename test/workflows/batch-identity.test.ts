/**
 * A batch child belongs to exactly one parent workflow, run, step and item;
 * a parent's own resume is claimed and recoverable; reconcile pages through
 * everything. Real Mastra on LibSQL files and the local decision service.
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPusharyDispatcher } from '../../src/agents/dispatcher.js'
import type { PusharyReview, PusharyWorkflowReview } from '../../src/store/review-schema.js'
import { batchParentReviewId } from '../../src/workflows/batch-parent.js'
import { createTestEnv, listEffects, runFixture, type TestEnv } from '../helpers/mastra.js'
import { buildApp, type TestApp } from './fixtures/app.js'

let env: TestEnv
let app: TestApp

beforeAll(async () => {
  env = await createTestEnv('batch-identity')
  app = buildApp(env)
})

afterAll(async () => {
  await app?.close()
  await env?.close()
})

type Workflow = {
  createRun(o?: {
    runId?: string
  }): Promise<{ runId: string; start(p: { inputData: unknown }): Promise<{ status: string }> }>
  getWorkflowRunById(id: string): Promise<{ status: string } | null>
}
const workflow = (id: string) => app.mastra.getWorkflowById(id as never) as unknown as Workflow

async function childrenOf(parentRunId: string, stepId?: string): Promise<PusharyWorkflowReview[]> {
  const all: PusharyReview[] = []
  for (const state of ['pending', 'completed'] as const)
    all.push(...(await app.store.listByState(state, { limit: 1000 })))
  return all
    .filter((review): review is PusharyWorkflowReview => review.target === 'workflow-step')
    .filter(
      (review) =>
        review.parent?.runId === parentRunId && (stepId === undefined || review.parent.stepId === stepId),
    )
    .sort((a, b) => (a.parent?.itemIndex ?? 0) - (b.parent?.itemIndex ?? 0))
}

async function effectsTagged(tag: string) {
  return (await listEffects(env.dir)).filter((effect) => effect.key.includes(tag))
}

describe('batch children belong to one parent step and item', () => {
  it('asks the deletion items of a second batch step instead of reusing the refund answers', async () => {
    const tag = randomUUID()
    const items = [0, 1].map((index) => ({
      operationId: `two-${tag}-${index}`,
      question: `Refund ${index}?`,
    }))
    const run = await workflow('two-batches').createRun()
    expect((await run.start({ inputData: items })).status).toBe('suspended')
    for (const child of await childrenOf(run.runId, 'approve-refunds')) {
      await env.client.decisions.answer(child.decisionId, 'yes')
      expect((await app.dispatcher.resumeDecision(child.decisionId)).status).toBe('resumed')
    }
    // The run now waits on the deletion questions: nothing was deleted unasked.
    expect((await workflow('two-batches').getWorkflowRunById(run.runId))?.status).toBe('suspended')
    expect(await effectsTagged(tag)).toEqual([])
    const deletions = await childrenOf(run.runId, 'approve-deletions')
    expect(deletions.map((review) => review.question.question)).toEqual(
      items.map((item) => `Delete the account behind ${item.operationId}?`),
    )
    await env.client.decisions.answer(deletions[0]?.decisionId as string, 'no')
    await env.client.decisions.answer(deletions[1]?.decisionId as string, 'yes')
    for (const review of deletions) await app.dispatcher.resumeDecision(review.decisionId)
    expect((await workflow('two-batches').getWorkflowRunById(run.runId))?.status).toBe('success')
    expect((await effectsTagged(tag)).map((effect) => effect.key)).toEqual([`delete:two-${tag}-1`])
  })

  it("never lets a workflow started with another workflow's run ID act on that workflow's answers", async () => {
    const tag = randomUUID()
    const items = [0, 1].map((index) => ({
      operationId: `shared-${tag}-${index}`,
      question: `Refund ${index}?`,
    }))
    const runId = randomUUID()
    const first = await workflow('refund-batch').createRun({ runId })
    expect((await first.start({ inputData: items })).status).toBe('suspended')
    for (const child of await childrenOf(runId)) {
      await env.client.decisions.answer(child.decisionId, 'yes')
      await app.dispatcher.resumeDecision(child.decisionId)
    }
    expect((await workflow('refund-batch').getWorkflowRunById(runId))?.status).toBe('success')

    const second = await workflow('other-batch').createRun({ runId })
    expect((await second.start({ inputData: items })).status).toBe('suspended')
    expect((await effectsTagged(tag)).filter((effect) => effect.kind === 'delete-item')).toEqual([])
    const asked = (await childrenOf(runId)).filter((review) => review.parent?.workflowId === 'other-batch')
    expect(asked).toHaveLength(2)
  })
})

describe('the parent resume is claimed like any review', () => {
  it('leaves a parent that died inside its protected foreach uncertain, and nothing runs twice', async () => {
    const tag = randomUUID()
    const items = [0, 1].map((index) => ({
      operationId: `parent-${tag}-${index}`,
      question: `Refund ${index}?`,
    }))
    const run = await workflow('refund-batch').createRun()
    expect((await run.start({ inputData: items })).status).toBe('suspended')
    const children = await childrenOf(run.runId)
    for (const child of children) await env.client.decisions.answer(child.decisionId, 'yes')
    expect((await app.dispatcher.resumeDecision(children[0]?.decisionId as string)).status).toBe('resumed')
    // The last child's process resumes the parent and dies after the first refund.
    await expect(
      runFixture(['resume-decisions', env.dir, JSON.stringify([children[1]?.decisionId])], {
        env: { PUSHARY_TEST_CRASH_AFTER_REFUND_ITEM: `parent-${tag}-0` },
      }),
    ).rejects.toThrow(/SIGKILL/)
    const reviewId = batchParentReviewId({
      workflowId: 'refund-batch',
      runId: run.runId,
      stepId: 'pushary-approval-batch',
    })
    expect((await app.store.get(reviewId))?.state).toBe('resuming')

    await runFixture(['reconcile', env.dir, JSON.stringify({ limit: 1000 })])
    await runFixture(['restart-all', env.dir])
    const [recovered] = await runFixture<{ status: string }[]>([
      'recover',
      env.dir,
      JSON.stringify([reviewId]),
    ])
    expect(recovered?.status).toBe('uncertain')
    expect((await effectsTagged(tag)).map((effect) => effect.key)).toEqual([`parent-${tag}-0`])
  })
})

describe('a batch item whose review went stale', () => {
  it('settles the parent without an operator, that item not approved', async () => {
    const tag = randomUUID()
    const items = [0, 1].map((index) => ({
      operationId: `stale-${tag}-${index}`,
      question: `Refund ${index}?`,
    }))
    const run = await workflow('refund-batch').createRun()
    expect((await run.start({ inputData: items })).status).toBe('suspended')
    const [first, second] = await childrenOf(run.runId)
    await env.client.decisions.answer(first?.decisionId as string, 'yes')
    await env.client.decisions.answer(second?.decisionId as string, 'yes')
    expect((await app.dispatcher.resumeDecision(first?.decisionId as string)).status).toBe('resumed')
    // The second item's review ends stale (its business action changed) and never resumes.
    expect(await app.store.claim(second?.decisionId as string, second?.runId as string)).toBe('claimed')
    await app.store.finish(second?.decisionId as string, 'stale', 'the order changed since the question')
    expect((await workflow('refund-batch').getWorkflowRunById(run.runId))?.status).toBe('suspended')

    const report = await app.dispatcher.reconcile({ limit: 1000 })
    expect(report.parents).toContainEqual(expect.objectContaining({ runId: run.runId, status: 'resumed' }))
    expect((await workflow('refund-batch').getWorkflowRunById(run.runId))?.status).toBe('success')
    expect((await effectsTagged(tag)).map((effect) => effect.key)).toEqual([`stale-${tag}-0`])
  })
})

describe('reconcile pages through everything', () => {
  it('reaches an answered review behind more than `limit` pending reviews it does not resume', async () => {
    const runId = randomUUID()
    for (let index = 0; index < 7; index++) {
      await app.store.save({
        version: 1,
        agentId: 'support',
        runId: `agent-${runId}-${index}`,
        toolCallId: `call-${index}`,
        toolName: 'refund',
        externalId: 'customer_1',
        actionVersion: 'v1',
        inputHash: 'in',
        subjectHash: 'sub',
        kind: 'approval',
        question: { question: 'Refund?', type: 'confirm' },
        decisionId: `agent-dec-${runId}-${index}`,
        correlationId: `agent-dec-${runId}-${index}`,
        state: 'pending',
      })
    }
    const op = `refund:behind-${randomUUID()}`
    const single = await workflow('refund-single').createRun()
    expect((await single.start({ inputData: { operationId: op, question: 'Refund?' } })).status).toBe(
      'suspended',
    )
    const [review] = (await app.store.listByState('pending', { limit: 1000 })).filter(
      (r) => r.runId === single.runId,
    )
    await env.client.decisions.answer(review?.decisionId as string, 'yes')
    const dispatcher = createPusharyDispatcher({ mastra: app.mastra, client: env.client, store: app.store })
    let resumed = false
    for (let round = 0; round < 40 && !resumed; round++) {
      const report = await dispatcher.reconcile({ limit: 5 })
      resumed = report.results.some(
        (result) => result.decisionId === review?.decisionId && result.status === 'resumed',
      )
    }
    expect(resumed).toBe(true)
  })

  it('lists the suspended runs of batch workflows only, and still settles their parents', async () => {
    // Waiting single approvals and batch items: a round must never read their runs.
    const tag = randomUUID()
    for (let index = 0; index < 3; index++) {
      const single = await workflow('refund-single').createRun()
      const started = await single.start({
        inputData: { operationId: `solo-${tag}-${index}`, question: 'Refund?' },
      })
      expect(started.status).toBe('suspended')
    }
    const parent = await workflow('refund-batch').createRun()
    const items = [0, 1].map((index) => ({ operationId: `listed-${tag}-${index}`, question: 'Refund?' }))
    expect((await parent.start({ inputData: items })).status).toBe('suspended')
    // Both items answered while the parent looked busy: only a reconcile settles it now.
    const storage = await app.mastra.getStorage()?.getStore('workflows')
    const impatient = createPusharyDispatcher({
      mastra: app.mastra,
      client: env.client,
      store: app.store,
      conflictTimeoutMs: 100,
    })
    await storage?.updateWorkflowState({
      workflowName: 'refund-batch',
      runId: parent.runId,
      opts: { status: 'running' },
    })
    for (const child of await childrenOf(parent.runId)) {
      await env.client.decisions.answer(child.decisionId, 'yes')
      expect((await impatient.resumeDecision(child.decisionId)).status).toBe('resumed')
    }
    await storage?.updateWorkflowState({
      workflowName: 'refund-batch',
      runId: parent.runId,
      opts: { status: 'suspended' },
    })

    const listed = new Map<string, number>()
    const restore: (() => void)[] = []
    for (const registered of Object.values(app.mastra.listWorkflows())) {
      const target = registered as unknown as { id: string; listWorkflowRuns: (...args: never[]) => unknown }
      const original = target.listWorkflowRuns
      target.listWorkflowRuns = (...args: never[]) => {
        const [filter] = args as unknown as [{ status?: string } | undefined]
        if (filter?.status === 'suspended') listed.set(target.id, (listed.get(target.id) ?? 0) + 1)
        return original.apply(target, args)
      }
      restore.push(() => {
        target.listWorkflowRuns = original
      })
    }
    try {
      // A limit of 1: the parent's own pending review may be pages away; the fallback reaches it.
      await app.dispatcher.reconcile({ limit: 1 })
    } finally {
      for (const undo of restore) undo()
    }
    expect([...listed.keys()].sort()).toEqual(['other-batch', 'refund-batch', 'two-batches'])
    expect((await workflow('refund-batch').getWorkflowRunById(parent.runId))?.status).toBe('success')
    expect((await effectsTagged(`listed-${tag}`)).map((effect) => effect.key).sort()).toEqual(
      items.map((item) => item.operationId),
    )
  })

  it('settles every waiting batch parent, not only the first page of suspended runs', async () => {
    const tag = randomUUID()
    const runs: string[] = []
    for (let index = 0; index < 3; index++) {
      const run = await workflow('refund-batch').createRun()
      expect(
        (await run.start({ inputData: [{ operationId: `page-${tag}-${index}`, question: 'Refund?' }] }))
          .status,
      ).toBe('suspended')
      runs.push(run.runId)
    }
    // Each last child completes while its parent looks busy, so no parent is resumed then.
    const storage = await app.mastra.getStorage()?.getStore('workflows')
    const impatient = createPusharyDispatcher({
      mastra: app.mastra,
      client: env.client,
      store: app.store,
      conflictTimeoutMs: 100,
    })
    for (const runId of runs) {
      await storage?.updateWorkflowState({ workflowName: 'refund-batch', runId, opts: { status: 'running' } })
      const [child] = await childrenOf(runId)
      await env.client.decisions.answer(child?.decisionId as string, 'yes')
      expect((await impatient.resumeDecision(child?.decisionId as string)).status).toBe('resumed')
      await storage?.updateWorkflowState({
        workflowName: 'refund-batch',
        runId,
        opts: { status: 'suspended' },
      })
    }
    await app.dispatcher.reconcile({ limit: 1 })
    for (const runId of runs)
      expect((await workflow('refund-batch').getWorkflowRunById(runId))?.status).toBe('success')
    expect((await effectsTagged(tag)).map((effect) => effect.key).sort()).toEqual(
      runs.map((_, index) => `page-${tag}-${index}`),
    )
  })
})
