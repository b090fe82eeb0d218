/**
 * `pusharyPendingDecisions` (from a run result) and
 * `readPusharyPendingDecisions` (from Mastra's storage) in real Mastra runs
 * against the local decision service over loopback HTTP: what a run waits on
 * is named by decision, customer, question and page, and shrinks as answers
 * are applied.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Mastra } from '@mastra/core/mastra'
import { createStep, createWorkflow } from '@mastra/core/workflows'
import { LibSQLStore } from '@mastra/libsql'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod/v4'
import {
  type PusharyPendingDecision,
  PusharyValidationError,
  pusharyApprovalBatchStep,
  pusharyApprovalStep,
  pusharyApprovalStepInputSchema,
  pusharyPendingDecisions,
  readPusharyPendingDecisions,
} from '../../src/index.js'
import type { PusharyReviewStore } from '../../src/store/review-store.js'
import { createSqliteReviewStore } from '../../src/store/sqlite-store.js'
import { createPusharyApprovalWorkflow } from '../../src/workflows/approval-workflows.js'
import { createTestEnv, type TestEnv } from '../helpers/mastra.js'

let env: TestEnv
let store: PusharyReviewStore
let mastra: Mastra

const options = { autoRestartActiveRuns: false } as const

beforeAll(async () => {
  env = await createTestEnv('pending-decisions')
  const dir = mkdtempSync(join(tmpdir(), 'pushary-pending-'))
  store = createSqliteReviewStore({ url: `file:${join(dir, 'reviews.db')}` })
  const config = { client: env.client, store }
  // The customer is fixed on the step, not in the input: the helper still names them.
  const single = createWorkflow({
    id: 'pending-single',
    inputSchema: pusharyApprovalStepInputSchema,
    outputSchema: z.unknown(),
    options,
  })
    .then(pusharyApprovalStep(config, { id: 'approve', externalId: 'customer_fixed' }))
    .commit()
  const each = createWorkflow({
    id: 'pending-each',
    inputSchema: z.array(pusharyApprovalStepInputSchema),
    outputSchema: z.unknown(),
    options,
  })
    .foreach(pusharyApprovalStep(config, { id: 'approve' }), { concurrency: 3 })
    .commit()
  const item = createPusharyApprovalWorkflow(config, {
    workflowId: 'pending-item',
    externalId: 'customer_batch',
  })
  const batch = createWorkflow({
    id: 'pending-batch',
    inputSchema: z.array(pusharyApprovalStepInputSchema),
    outputSchema: z.unknown(),
    options,
  })
    .then(pusharyApprovalBatchStep({ id: 'approve-all', childWorkflowId: 'pending-item', store }))
    .commit()
  const plain = createWorkflow({
    id: 'pending-none',
    inputSchema: z.object({ n: z.number() }),
    outputSchema: z.unknown(),
    options,
  })
    .then(
      createStep({
        id: 'double',
        inputSchema: z.object({ n: z.number() }),
        outputSchema: z.object({ n: z.number() }),
        execute: async ({ inputData }) => ({ n: inputData.n * 2 }),
      }),
    )
    .commit()
  mastra = new Mastra({
    storage: new LibSQLStore({ id: 'pending-decisions', url: `file:${join(dir, 'mastra.db')}` }),
    workflows: { single, each, item, batch, plain },
    logger: false,
  })
}, 60_000)

afterAll(async () => {
  await store?.close()
  await env?.close()
})

const items = ['o-1', 'o-2', 'o-3'].map((order) => ({
  operationId: `refund:${order}`,
  question: `Refund order ${order}?`,
  externalId: 'customer_each',
}))

async function thrown(run: () => unknown): Promise<unknown> {
  try {
    await run()
  } catch (error) {
    return error
  }
  throw new Error('expected a refusal')
}

describe('the decisions a run is waiting on', () => {
  it('names the single approval step’s decision, customer (fixed on the step), question and page, from the result and from storage', async () => {
    const run = await mastra.getWorkflow('single').createRun()
    const result = await run.start({
      inputData: { operationId: 'deploy:v42', question: 'Deploy v42 to production?' },
    })
    expect(result.status).toBe('suspended')
    const pending = pusharyPendingDecisions(result)
    const review = (await store.listByState('pending', { limit: 100 })).find((r) => r.runId === run.runId)
    expect(pending).toEqual<PusharyPendingDecision[]>([
      {
        decisionId: review!.decisionId,
        stepId: 'approve',
        itemIndex: null,
        question: 'Deploy v42 to production?',
        externalId: 'customer_fixed',
        operationId: 'deploy:v42',
        link: `${env.server.publicUrl}/review/${review!.decisionId}`,
        delivery: 'push',
        expiresAt: expect.any(String) as unknown as string,
      },
    ])
    // The service knows the decision by that ID, for that customer.
    const decision = await env.client.decisions.get(pending[0]!.decisionId)
    expect(decision).toMatchObject({
      status: 'pending',
      externalId: 'customer_fixed',
      question: 'Deploy v42 to production?',
    })
    expect(
      await readPusharyPendingDecisions({ mastra, workflowId: 'pending-single', runId: run.runId }),
    ).toEqual(pending)
  })

  it('lists the three items of a .foreach in item order, and one fewer after one item’s answer was applied', async () => {
    const run = await mastra.getWorkflow('each').createRun()
    const started = await run.start({ inputData: items })
    const pending = pusharyPendingDecisions(started)
    expect(pending.map((p) => [p.itemIndex, p.question, p.operationId, p.externalId])).toEqual([
      [0, 'Refund order o-1?', 'refund:o-1', 'customer_each'],
      [1, 'Refund order o-2?', 'refund:o-2', 'customer_each'],
      [2, 'Refund order o-3?', 'refund:o-3', 'customer_each'],
    ])
    expect(new Set(pending.map((p) => p.decisionId)).size).toBe(3)
    expect(
      await readPusharyPendingDecisions({ mastra, workflowId: 'pending-each', runId: run.runId }),
    ).toEqual(pending)

    const middle = pending[1]!
    await env.client.decisions.answer(middle.decisionId, 'yes')
    const resumed = await run.resume({
      step: 'approve',
      label: middle.decisionId,
      resumeData: { answer: 'yes' },
    })
    expect(resumed.status).toBe('suspended')
    const left = pusharyPendingDecisions(resumed)
    expect(left.map((p) => p.decisionId)).toEqual([pending[0]!.decisionId, pending[2]!.decisionId])
    expect(left.map((p) => p.itemIndex)).toEqual([0, 2])
    expect(
      (await readPusharyPendingDecisions({ mastra, workflowId: 'pending-each', runId: run.runId })).map(
        (p) => p.decisionId,
      ),
    ).toEqual(left.map((p) => p.decisionId))
  })

  it('reads a batch’s items from its child runs, and refuses to read a batch from the result alone (naming the step)', async () => {
    const run = await mastra.getWorkflow('batch').createRun()
    const started = await run.start({ inputData: items.map(({ externalId: _, ...item }) => item) })
    expect(started.status).toBe('suspended')
    const refusal = await thrown(() => pusharyPendingDecisions(started))
    expect(refusal).toBeInstanceOf(PusharyValidationError)
    expect(refusal).toMatchObject({ field: 'result.steps.approve-all', operation: 'pusharyPendingDecisions' })

    const pending = await readPusharyPendingDecisions({
      mastra,
      workflowId: 'pending-batch',
      runId: run.runId,
    })
    expect(pending.map((p) => [p.itemIndex, p.question, p.externalId, p.stepId])).toEqual([
      [0, 'Refund order o-1?', 'customer_batch', 'pushary-approval'],
      [1, 'Refund order o-2?', 'customer_batch', 'pushary-approval'],
      [2, 'Refund order o-3?', 'customer_batch', 'pushary-approval'],
    ])
    for (const p of pending) {
      expect((await env.client.decisions.get(p.decisionId)).question).toBe(p.question)
    }
  })

  it('is empty for a run that asks nobody, and for a run whose only approval was answered', async () => {
    const plain = await mastra.getWorkflow('plain').createRun()
    const done = await plain.start({ inputData: { n: 2 } })
    expect(done.status).toBe('success')
    expect(pusharyPendingDecisions(done)).toEqual([])
    expect(
      await readPusharyPendingDecisions({ mastra, workflowId: 'pending-none', runId: plain.runId }),
    ).toEqual([])

    const run = await mastra.getWorkflow('single').createRun()
    const [asked] = pusharyPendingDecisions(
      await run.start({ inputData: { operationId: 'deploy:v43', question: 'Deploy v43?' } }),
    )
    await env.client.decisions.answer(asked!.decisionId, 'no')
    const resumed = await run.resume({
      step: 'approve',
      label: asked!.decisionId,
      resumeData: { answer: 'no' },
    })
    expect(resumed.status).toBe('success')
    expect(pusharyPendingDecisions(resumed)).toEqual([])
    expect(
      await readPusharyPendingDecisions({ mastra, workflowId: 'pending-single', runId: run.runId }),
    ).toEqual([])
  })

  it('refuses a run its storage does not hold, and a result that is not one, naming the field', async () => {
    expect(
      await thrown(() =>
        readPusharyPendingDecisions({ mastra, workflowId: 'pending-single', runId: 'no-such-run' }),
      ),
    ).toMatchObject({ code: 'invalid_identifier', field: 'runId' })
    expect(await thrown(() => pusharyPendingDecisions(null as never))).toMatchObject({ field: 'result' })
  })
})
