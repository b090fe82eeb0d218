/**
 * A configuration error is never a verdict. Two workers share one review
 * store and one Mastra storage; one is set up wrongly, one way at a time
 * (the batch child workflow, the batch parent workflow, the agent, the tool
 * missing, or Mastra on another storage file). It handles the callbacks and
 * reconcile first and answers `misconfigured` (503), leaving every review
 * pending; afterwards the correct worker runs every approved item or call
 * exactly once and no declined one. Real Mastra on LibSQL files, the SQLite
 * review store, the local decision service over loopback, a separate OS
 * process for Mastra's boot-time restart.
 */
import { randomUUID } from 'node:crypto'
import { ConsoleLogger } from '@mastra/core/logger'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { resumePusharyAgentReview } from '../../src/agents/resume-review.js'
import { SIGNATURE_HEADER, signWebhookBody } from '../../src/pushary/callbacks.js'
import { isPusharyValidationError } from '../../src/pushary/errors.js'
import { batchChildRunId } from '../../src/workflows/batch-children.js'
import { batchParentReviewId } from '../../src/workflows/batch-parent.js'
import { createTestEnv, runFixture, type TestEnv } from '../helpers/mastra.js'
import { allDecisions, belongsTo, decisionBinding, effectCounts } from '../reliability/support/scenario.js'
import { buildApp, EXTERNAL_ID, type TestApp, type WorkerFault } from './fixtures/app.js'
import { openAgentRefund } from './fixtures/refund-agent.js'

let env: TestEnv
let good: TestApp
const opened: TestApp[] = []
let goodLogger: Capture

beforeAll(async () => {
  env = await createTestEnv('misconfigured')
  goodLogger = new Capture()
  good = buildApp(env, { logger: goodLogger })
})

afterAll(async () => {
  for (const app of opened) await app.close()
  await good?.close()
  await env?.close()
})

/** A logger that keeps every warning, as the operator would read them. */
class Capture extends ConsoleLogger {
  readonly warnings: string[] = []
  override warn(message: string): void {
    this.warnings.push(message)
  }
}

function badWorker(fault: WorkerFault): { app: TestApp; logger: Capture } {
  const logger = new Capture()
  const app = buildApp(env, { fault, logger })
  opened.push(app)
  return { app, logger }
}

function signedCallback(decisionId: string, answer: string): Request {
  const body = JSON.stringify({
    correlationId: decisionId,
    decisionId,
    status: 'answered',
    answer,
    value: answer,
    answeredAt: new Date().toISOString(),
  })
  return new Request('http://127.0.0.1/pushary/callback', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      [SIGNATURE_HEADER]: signWebhookBody(body, env.webhookSecret),
    },
    body,
  })
}

type Workflow = {
  createRun(o: { runId: string }): Promise<{ start(p: { inputData: unknown }): Promise<{ status: string }> }>
  getWorkflowRunById(id: string): Promise<{ status: string } | null>
}

function workflow(app: TestApp, id: string): Workflow {
  return app.mastra.getWorkflowById(id as never) as unknown as Workflow
}

/** The bad worker's answer to each callback: 503 `misconfigured`, naming `missing`. */
async function callbacksRefused(app: TestApp, answers: Map<string, string>, missing: string): Promise<void> {
  for (const [decisionId, value] of answers) {
    const response = await app.dispatcher.handleCallback(signedCallback(decisionId, value))
    expect(response.status).toBe(503)
    expect(await response.json()).toMatchObject({ status: 'misconfigured', missing })
  }
}

/** No review of these decisions ended while its work did not run. */
async function allStillPending(app: TestApp, decisionIds: readonly string[]): Promise<void> {
  for (const decisionId of decisionIds) expect((await app.store.get(decisionId))?.state).toBe('pending')
}

async function reconcileResults(app: TestApp, decisionIds: readonly string[]) {
  const report = await app.dispatcher.reconcile({ limit: 1000 })
  return report.results.filter((result) => decisionIds.includes(result.decisionId))
}

describe.each([
  ['no-child-workflow', 'child_workflow'],
  ['no-parent-workflow', 'parent_workflow'],
] as const)('a multi-item approval, one worker with %s', (fault, missing) => {
  it('loses no approved item: misconfigured first, then every approved item runs once and no declined one', async () => {
    const { app: bad, logger } = badWorker(fault)
    const runId = `misconf-${fault}-${randomUUID().slice(0, 8)}`
    const ops = [0, 1, 2].map((index) => `${runId}-op${index}`)
    const run = await workflow(good, 'refund-batch').createRun({ runId })
    const started = await run.start({
      inputData: ops.map((operationId) => ({ operationId, question: `Refund ${operationId}?` })),
    })
    expect(started.status).toBe('suspended')
    const parentId = batchParentReviewId({
      workflowId: 'refund-batch',
      runId,
      stepId: 'pushary-approval-batch',
    })

    // Before anyone answers: reconcile on the bad worker meets the parent's pending review.
    expect(await reconcileResults(bad, [parentId])).toEqual([
      expect.objectContaining({ status: 'misconfigured', missing }),
    ])
    expect((await bad.dispatcher.checkConfiguration()).problems).toContainEqual(
      expect.objectContaining({ decisionId: parentId, target: 'batch-parent', missing }),
    )

    const answers = new Map<string, string>()
    for (const decision of await allDecisions(env.client)) {
      const binding = decisionBinding(decision)
      if (!binding || !belongsTo(binding, runId)) continue
      const value = binding.operationId === ops[2] ? 'no' : 'yes'
      await env.client.decisions.answer(decision.decisionId, value)
      answers.set(decision.decisionId, value)
    }
    expect(answers.size).toBe(3)
    const all = [...answers.keys(), parentId]

    await callbacksRefused(bad, answers, missing)
    const results = await reconcileResults(bad, all)
    expect(results.map((result) => result.status)).toEqual(Array(4).fill('misconfigured'))
    await allStillPending(bad, all)
    expect(await workflow(good, 'refund-batch').getWorkflowRunById(runId)).toMatchObject({
      status: 'suspended',
    })
    const counts = await effectCounts(env.dir)
    for (const op of ops) expect(counts.get(op) ?? 0).toBe(0)
    // Said once for the whole flood, through the Mastra logger, naming what is missing.
    const lines = logger.warnings.filter((line) => line.includes(missing.replace('_', ' ')))
    expect(lines).toHaveLength(1)

    await good.dispatcher.reconcile({ limit: 1000 })
    expect(await workflow(good, 'refund-batch').getWorkflowRunById(runId)).toMatchObject({
      status: 'success',
    })
    const after = await effectCounts(env.dir)
    expect(ops.map((op) => after.get(op) ?? 0)).toEqual([1, 1, 0])
    for (const decisionId of all) expect((await good.store.get(decisionId))?.state).toBe('completed')
  }, 120_000)
})

describe.each([
  ['no-agent', 'agent'],
  ['no-tool', 'tool'],
  ['other-storage', 'run'],
] as const)('an agent review, one worker with %s', (fault, missing) => {
  it('answers misconfigured without a verdict; the correct worker then refunds the approved call once and not the declined one', async () => {
    const { app: bad } = badWorker(fault)
    const tag = randomUUID().slice(0, 8)
    const approved = await openAgentRefund(good, EXTERNAL_ID, `ok-${fault}-${tag}`, `agent-ok-${tag}`)
    const declined = await openAgentRefund(good, EXTERNAL_ID, `no-${fault}-${tag}`, `agent-no-${tag}`)
    await env.client.decisions.answer(approved.decisionId, 'yes')
    await env.client.decisions.answer(declined.decisionId, 'no')
    const answers = new Map([
      [approved.decisionId, 'yes'],
      [declined.decisionId, 'no'],
    ])
    const ids = [...answers.keys()]

    expect((await bad.dispatcher.checkConfiguration()).problems).toEqual(
      expect.arrayContaining(ids.map((decisionId) => expect.objectContaining({ decisionId, missing }))),
    )
    await callbacksRefused(bad, answers, missing)
    expect((await reconcileResults(bad, ids)).map((result) => result.status)).toEqual([
      'misconfigured',
      'misconfigured',
    ])
    await allStillPending(bad, ids)
    expect((await effectCounts(env.dir)).get(`ok-${fault}-${tag}`) ?? 0).toBe(0)

    for (const decisionId of ids) {
      expect(await good.dispatcher.resumeDecision(decisionId)).toMatchObject({ status: 'resumed' })
      expect((await good.store.get(decisionId))?.state).toBe('completed')
    }
    const counts = await effectCounts(env.dir)
    expect(counts.get(`ok-${fault}-${tag}`) ?? 0).toBe(1)
    expect(counts.get(`no-${fault}-${tag}`) ?? 0).toBe(0)
  }, 120_000)
})

async function startSingle(
  app: TestApp,
  operationId: string,
): Promise<{ runId: string; decisionId: string }> {
  const runId = `single-${randomUUID()}`
  const started = await (await workflow(app, 'refund-single').createRun({ runId })).start({
    inputData: { operationId, question: `Refund ${operationId}?` },
  })
  expect(started.status).toBe('suspended')
  const review = (await app.store.listByState('pending', { limit: 1000 })).find((r) => r.runId === runId)
  if (!review) throw new Error('no review saved')
  return { runId, decisionId: review.decisionId }
}

describe('a workflow review, one worker on another Mastra storage', () => {
  it('is never stale there: misconfigured (run) until the worker that knows the run resumes it once', async () => {
    const { app: bad } = badWorker('other-storage')
    const op = `other-storage-${randomUUID()}`
    const { decisionId } = await startSingle(good, op)
    await env.client.decisions.answer(decisionId, 'yes')
    await callbacksRefused(bad, new Map([[decisionId, 'yes']]), 'run')
    expect(await bad.dispatcher.resumeDecision(decisionId)).toMatchObject({ status: 'misconfigured' })
    await allStillPending(bad, [decisionId])
    expect(await good.dispatcher.resumeDecision(decisionId)).toMatchObject({ status: 'resumed' })
    expect((await effectCounts(env.dir)).get(op) ?? 0).toBe(1)
  }, 120_000)
})

describe('a workflow that lets Mastra restart its active runs', () => {
  it('fails its first run before anyone is asked, naming the option', async () => {
    const { app: bad } = badWorker('auto-restart')
    const before = (await allDecisions(env.client)).length
    const runId = `unsafe-${randomUUID()}`
    const run = await workflow(bad, 'refund-single').createRun({ runId })
    const result = (await run.start({ inputData: { operationId: runId, question: 'Refund?' } })) as {
      status: string
      error?: { message?: string }
    }
    expect(result.status).toBe('failed')
    expect(result.error?.message).toMatch(/autoRestartActiveRuns: false/)
    expect((await allDecisions(env.client)).length).toBe(before)
  })

  it('is never resumed while another process boots Mastra: the refund runs once, after the option is set', async () => {
    const { app: bad } = badWorker('auto-restart')
    const op = `auto-restart-${randomUUID()}`
    const { decisionId } = await startSingle(good, op)
    await env.client.decisions.answer(decisionId, 'yes')
    const [refused] = await Promise.all([
      bad.dispatcher.resumeDecision(decisionId),
      runFixture(['restart-all', env.dir], { env: { PUSHARY_TEST_WORKER: 'auto-restart' } }),
    ])
    expect(refused).toMatchObject({ status: 'misconfigured', missing: 'auto_restart' })
    await runFixture(['restart-all', env.dir], { env: { PUSHARY_TEST_WORKER: 'auto-restart' } })
    await allStillPending(bad, [decisionId])
    expect((await effectCounts(env.dir)).get(op) ?? 0).toBe(0)

    expect(await good.dispatcher.resumeDecision(decisionId)).toMatchObject({ status: 'resumed' })
    await runFixture(['restart-all', env.dir])
    expect((await effectCounts(env.dir)).get(op) ?? 0).toBe(1)
  }, 120_000)
})

describe('resumePusharyAgentReview on an agent that no longer has the tool', () => {
  it('refuses before the claim, naming the tool, and the review stays pending for the worker that has it', async () => {
    const { app: bad } = badWorker('no-tool')
    const tag = randomUUID().slice(0, 8)
    const orderId = `direct-no-tool-${tag}`
    const { decisionId } = await openAgentRefund(good, EXTERNAL_ID, orderId, `direct-${tag}`)
    await env.client.decisions.answer(decisionId, 'yes')
    const error = await resumePusharyAgentReview(
      { client: bad.client },
      {
        decisionId,
        agentId: 'refunder',
        externalId: EXTERNAL_ID,
        store: bad.store,
        mastra: bad.mastra,
        agent: bad.mastra.getAgentById('refunder'),
      },
    ).catch((caught: unknown) => caught)
    expect(isPusharyValidationError(error) && error.field).toBe('agent.tools.issueRefund')
    expect((await good.store.get(decisionId))?.state).toBe('pending')
    expect(await good.dispatcher.resumeDecision(decisionId)).toMatchObject({ status: 'resumed' })
    expect((await effectCounts(env.dir)).get(orderId)).toBe(1)
  }, 120_000)
})

describe('a run that failed', () => {
  it('never finishes its batch parent review completed: the parent is left uncertain with the cause, for the operator', async () => {
    const runId = `failed-parent-${randomUUID().slice(0, 8)}`
    const items = [0, 1].map((index) => ({ operationId: `${runId}-op${index}`, question: 'Refund?' }))
    const run = await workflow(good, 'refund-batch').createRun({ runId })
    expect((await run.start({ inputData: items })).status).toBe('suspended')
    const parent = { workflowId: 'refund-batch', runId, stepId: 'pushary-approval-batch' }
    // Item 1's child run is broken (failed in storage): the parent's resume pass will throw.
    const workflows = await good.mastra.getStorage()?.getStore('workflows')
    await workflows?.updateWorkflowState({
      workflowName: 'approval-item',
      runId: batchChildRunId(parent, 1, items[0 + 1]),
      opts: { status: 'failed' } as never,
    })
    const first = (await allDecisions(env.client)).find(
      (decision) => decisionBinding(decision)?.operationId === items[0]?.operationId,
    )
    await env.client.decisions.answer(first?.decisionId as string, 'yes')
    const resumed = await good.dispatcher.resumeDecision(first?.decisionId as string)
    expect(resumed).toMatchObject({ status: 'resumed', parent: { status: 'uncertain' } })
    expect(await workflow(good, 'refund-batch').getWorkflowRunById(runId)).toMatchObject({ status: 'failed' })
    const review = await good.store.get(batchParentReviewId(parent))
    expect(review?.state).toBe('uncertain')
    expect((await good.store.history(batchParentReviewId(parent))).at(-1)?.reason).toMatch(/ended failed/)
    expect((await effectCounts(env.dir)).get(items[0]?.operationId as string) ?? 0).toBe(0)
  }, 120_000)
})

describe('a correctly configured worker', () => {
  it("prints no warning about the package's own workflows after running workflow, batch and agent reviews", () => {
    // The scenarios above ran every kind of review through this worker.
    expect(
      goodLogger.warnings.filter((line) => /restartAllActiveWorkflowRuns|pushary-agent-review/.test(line)),
    ).toEqual([])
  })
})
