/**
 * Workflows against a server that speaks only the hosted wire
 * (`hosted-fake.ts`, app in `hosted-app.ts`): the approval step and gate, and
 * the batch step. Answers arrive as the hosted service sends them: a signed
 * callback without `type` or `status` into `dispatcher.handleCallback`, or
 * not at all (a lost callback), so `reconcile()` must find them. A confirm
 * answered `maybe` declines without a throw or a hung run; a 404 is never a
 * verdict before the decision's expiry.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { signWebhookBody } from '../../src/pushary/callbacks.js'
import { isPusharyApiError } from '../../src/pushary/errors.js'
import { type PusharyDispatchResult, RETRYABLE_DISPATCH_STATUSES } from '../../src/resume/dispatch-types.js'
import { isPusharyDeclined } from '../../src/steps/gate-step.js'
import { type HostedApp, startHostedApp } from './hosted-app.js'

let app: HostedApp
let fake: HostedApp['fake']
let store: HostedApp['store']
let mastra: HostedApp['mastra']
let dispatcher: HostedApp['dispatcher']
let bridge: HostedApp['bridge']
let personAnswers: HostedApp['personAnswers']
let effects: HostedApp['effects']

beforeAll(async () => {
  app = await startHostedApp()
  ;({ fake, store, mastra, dispatcher, bridge, personAnswers, effects } = app)
})
afterAll(async () => {
  await app?.close()
})

type RunView = { status: string; result?: unknown }

async function runState(runId: string, key: 'workflow' | 'shortLived' = 'workflow'): Promise<RunView> {
  const workflow = mastra.getWorkflow(key) as unknown as {
    getWorkflowRunById(id: string): Promise<RunView | null>
  }
  const state = await workflow.getWorkflowRunById(runId)
  if (!state) throw new Error('run not found')
  return state
}

async function startWorkflow(operationId: string, key: 'workflow' | 'shortLived' = 'workflow') {
  const workflow = mastra.getWorkflow(key) as unknown as {
    createRun(): Promise<{ runId: string; start(p: { inputData: unknown }): Promise<{ status: string }> }>
  }
  const run = await workflow.createRun()
  const started = await run.start({
    inputData: { operationId, question: `Refund order ${operationId}?`, type: 'confirm' },
  })
  expect(started.status).toBe('suspended')
  const review = (await store.listByState('pending', { limit: 1000 })).find(
    (item) => item.runId === run.runId,
  )
  if (!review) throw new Error('no review saved')
  return { runId: run.runId, decisionId: review.decisionId }
}

describe('workflow: approval step + gate against the hosted wire', () => {
  it.each([
    ['yes', 'callback'],
    ['OK', 'reconcile'],
  ] as const)('runs the refund exactly once for %j answered via %s', async (value, via) => {
    const operationId = `wf-approve-${via}`
    const { runId, decisionId } = await startWorkflow(operationId)
    const outcome = await personAnswers(decisionId, value, via)
    if (via === 'callback') expect(outcome).toMatchObject({ status: 'resumed' })
    const state = await runState(runId)
    expect(state.status).toBe('success')
    expect(state.result).toEqual({ refunded: true })
    expect(await effects('workflow-refund', operationId)).toBe(1)
    // Another delivery or reconcile changes nothing.
    expect((await dispatcher.resumeDecision(decisionId)).status).toBe('duplicate')
    await dispatcher.reconcile({ limit: 100 })
    expect(await effects('workflow-refund', operationId)).toBe(1)
  })

  it.each([
    ['no', 'callback'],
    ['maybe', 'callback'],
    ['no', 'reconcile'],
    ['maybe', 'reconcile'],
  ] as const)('declines %j answered via %s without a throw, a hung run or the refund', async (value, via) => {
    const operationId = `wf-decline-${value}-${via}`
    const { runId, decisionId } = await startWorkflow(operationId)
    const outcome = await personAnswers(decisionId, value, via)
    if (via === 'callback') expect(outcome).toMatchObject({ status: 'resumed' })
    const state = await runState(runId)
    expect(state.status).toBe('success')
    expect(isPusharyDeclined(state.result)).toBe(true)
    expect(state.result).toMatchObject({ outcome: 'declined', answer: { value, approved: false } })
    expect((await store.get(decisionId))?.state).toBe('completed')
    expect(await effects('workflow-refund', operationId)).toBe(0)
  })
})

describe('a decision the hosted service answers with 404', () => {
  it('is a loud, retried error before its expiry, never a verdict: the run stays suspended', async () => {
    const operationId = 'wf-404-live'
    const { runId, decisionId } = await startWorkflow(operationId)
    fake.forget(decisionId)
    const outcome: PusharyDispatchResult | Error = await dispatcher
      .resumeDecision(decisionId)
      .catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))))
    if (outcome instanceof Error) expect(isPusharyApiError(outcome) && outcome.status === 404).toBe(true)
    else expect(RETRYABLE_DISPATCH_STATUSES as readonly string[]).toContain(outcome.status)
    // The callback route tells the sender to retry instead of acknowledging a verdict.
    const raw = JSON.stringify({
      correlationId: decisionId,
      answer: 'yes',
      value: 'yes',
      answeredAt: new Date().toISOString(),
    })
    const response = await dispatcher.handleCallback(
      new Request(bridge.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-pushary-signature': signWebhookBody(raw, fake.webhookSecret),
        },
        body: raw,
      }),
    )
    expect(response.status).toBeGreaterThanOrEqual(500)
    await dispatcher.reconcile({ limit: 100 })
    expect((await runState(runId)).status).toBe('suspended')
    expect((await store.get(decisionId))?.state).toBe('pending')
    expect(await effects('workflow-refund', operationId)).toBe(0)
  })
})

describe('a decision the hosted service forgot after it expired', () => {
  it('settles as expired once the expiry the service reported has passed: declined, never run', async () => {
    const operationId = 'wf-404-expired'
    const { runId, decisionId } = await startWorkflow(operationId, 'shortLived')
    const saved = await store.get(decisionId)
    expect(saved?.target === 'workflow-step' ? saved.expiresAt : undefined).toEqual(expect.any(String))
    // The service forgets the decision once it is gone: every read is a 404.
    fake.forget(decisionId)
    const expiresAt = Date.parse(fake.decisions.get(decisionId)?.expiresAt ?? '')
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt - Date.now()) + 50))
    await dispatcher.reconcile({ limit: 100 })
    const state = await runState(runId, 'shortLived')
    expect(state.status).toBe('success')
    expect(isPusharyDeclined(state.result)).toBe(true)
    expect(state.result).toMatchObject({
      outcome: 'declined',
      answer: { status: 'expired', approved: false },
    })
    expect((await store.get(decisionId))?.state).toBe('completed')
    expect(await effects('workflow-refund', operationId)).toBe(0)
    // A late callback claiming approval changes nothing.
    expect((await dispatcher.resumeDecision(decisionId)).status).toBe('duplicate')
    expect(await effects('workflow-refund', operationId)).toBe(0)
  })
})

describe('many items: the batch step against the hosted wire', () => {
  it('refunds only the items answered with an affirmative, once, by callbacks and reconcile', async () => {
    const items = ['Yes', 'maybe', 'no', ' ok '].map((value, index) => ({
      operationId: `batch-${index}`,
      question: `Refund batch order ${index}?`,
      type: 'confirm' as const,
      value,
    }))
    const workflow = mastra.getWorkflow('batch') as unknown as {
      createRun(): Promise<{ runId: string; start(p: { inputData: unknown }): Promise<{ status: string }> }>
      getWorkflowRunById(id: string): Promise<RunView | null>
    }
    const run = await workflow.createRun()
    const before = fake.pages
    const started = await run.start({ inputData: items.map(({ value: _value, ...input }) => input) })
    expect(started.status).toBe('suspended')
    expect(fake.pages).toBe(before + items.length)
    const opened = [...fake.decisions.values()].slice(-items.length)
    for (const [index, { value }] of items.entries()) {
      const decision = opened.find((candidate) => candidate.question === items[index]!.question)!
      await personAnswers(decision.decisionId, value, index % 2 === 0 ? 'callback' : 'reconcile')
    }
    await dispatcher.reconcile({ limit: 100 })
    const deadline = Date.now() + 20_000
    let state = await workflow.getWorkflowRunById(run.runId)
    while (state?.status !== 'success' && Date.now() < deadline) {
      await dispatcher.reconcile({ limit: 100 })
      await new Promise((resolve) => setTimeout(resolve, 200))
      state = await workflow.getWorkflowRunById(run.runId)
    }
    expect(state?.status).toBe('success')
    const refunded = await Promise.all(items.map((item) => effects('batch-refund', item.operationId)))
    expect(refunded).toEqual([1, 0, 0, 1])
  })
})

describe('what the package asked of the hosted API in this file', () => {
  it('used only contract endpoints and no local-only extras (delivery list, list status filter)', () => {
    expect(fake.requests.length).toBeGreaterThan(0)
    const offContract = fake.requests.filter(
      (request) => request.route === 'unknown' || request.query.status !== undefined,
    )
    expect(offContract).toEqual([])
  })
})
