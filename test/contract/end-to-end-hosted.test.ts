/**
 * The package's approval paths against a server that speaks only the hosted
 * wire (`hosted-fake.ts`): a workflow with the approval step and gate, an
 * agent with the deferred question tool, and an agent whose tool has
 * `requireApproval` (resolved inline and as a deferred review). Answers
 * arrive as the hosted service sends them: a signed callback without `type`
 * or `status` into `dispatcher.handleCallback`, or not at all (lost), so
 * `reconcile()` must find them. Real Mastra runs on a LibSQL file, the
 * SQLite review store, side effects counted in a SQLite table.
 */
import { mkdtempSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createClient } from '@libsql/client'
import { Agent } from '@mastra/core/agent'
import { Mastra } from '@mastra/core/mastra'
import { createTool } from '@mastra/core/tools'
import { createStep, createWorkflow } from '@mastra/core/workflows'
import { LibSQLStore } from '@mastra/libsql'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod/v4'
import { createPusharyAskTool } from '../../src/agents/ask-tool.js'
import { createPusharyDeferredAskTool } from '../../src/agents/deferred-ask-tool.js'
import { openPusharyAgentReview } from '../../src/agents/open-review.js'
import { resolvePusharyApprovals } from '../../src/agents/resolve-approvals.js'
import { signWebhookBody } from '../../src/pushary/callbacks.js'
import { createPusharyClient, type PusharyClient } from '../../src/pushary/client.js'
import { isPusharyApiError } from '../../src/pushary/errors.js'
import { pusharyApprovalStepInputSchema } from '../../src/steps/approval-schemas.js'
import { pusharyApprovalStep } from '../../src/steps/approval-step.js'
import {
  isPusharyDeclined,
  pusharyApprovedAnswerSchema,
  pusharyApprovedItemSchema,
  pusharyGate,
  pusharyGateItems,
} from '../../src/steps/gate-step.js'
import type { PusharyReviewStore } from '../../src/store/review-store.js'
import { createSqliteReviewStore } from '../../src/store/sqlite-store.js'
import {
  createPusharyApprovalWorkflow,
  pusharyApprovalBatchStep,
} from '../../src/workflows/approval-workflows.js'
import {
  type PusharyDispatchResult,
  RETRYABLE_DISPATCH_STATUSES,
} from '../../src/workflows/dispatch-types.js'
import { createPusharyDispatcher } from '../../src/workflows/dispatcher.js'
import { scriptedModel } from '../agents/support/scripted-model.js'
import { createRefundAgent } from '../workflows/fixtures/refund-agent.js'
import { type HostedFake, startHostedFake } from './hosted-fake.js'

const EXTERNAL_ID = 'customer_1'

let fake: HostedFake
let dir: string
let client: PusharyClient
let store: PusharyReviewStore
let mastra: Mastra
let dispatcher: ReturnType<typeof createPusharyDispatcher>
let bridge: CallbackBridge

/** A real HTTP endpoint for the fake's callbacks that hands each one to the dispatcher. */
interface CallbackBridge {
  url: string
  /** `deliver`: to the dispatcher; `lose`: acknowledged and dropped (a lost callback). */
  mode: 'deliver' | 'lose'
  results: PusharyDispatchResult[]
  close(): Promise<void>
}

async function startBridge(handle: (request: Request) => Promise<Response>): Promise<CallbackBridge> {
  const bridge: CallbackBridge = { url: '', mode: 'deliver', results: [], close: async () => {} }
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', async () => {
      if (bridge.mode === 'lose') return res.writeHead(200).end('dropped')
      const headers = new Headers()
      for (const [key, value] of Object.entries(req.headers))
        if (typeof value === 'string') headers.set(key, value)
      const response = await handle(
        new Request(`http://127.0.0.1${req.url}`, { method: 'POST', headers, body: Buffer.concat(chunks) }),
      )
      const text = await response.text()
      try {
        bridge.results.push(JSON.parse(text) as PusharyDispatchResult)
      } catch {
        // Not JSON: the status alone tells the fake what to do.
      }
      res.writeHead(response.status, { 'content-type': 'application/json' }).end(text)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  bridge.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/pushary/callback`
  bridge.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  return bridge
}

/** Rows of one side effect for one business key, in the SQLite effects table. */
async function effects(kind: string, key: string): Promise<number> {
  const db = createClient({ url: `file:${join(dir, 'effects.db')}` })
  try {
    await db.execute(
      'CREATE TABLE IF NOT EXISTS effects (kind TEXT NOT NULL, key TEXT NOT NULL, at TEXT NOT NULL)',
    )
    const rows = await db.execute({
      sql: 'SELECT COUNT(*) AS n FROM effects WHERE kind = ? AND key = ?',
      args: [kind, key],
    })
    return Number(rows.rows[0]?.n ?? 0)
  } finally {
    db.close()
  }
}

async function recordEffect(kind: string, key: string): Promise<void> {
  const db = createClient({ url: `file:${join(dir, 'effects.db')}` })
  try {
    await db.execute(
      'CREATE TABLE IF NOT EXISTS effects (kind TEXT NOT NULL, key TEXT NOT NULL, at TEXT NOT NULL)',
    )
    await db.execute({
      sql: 'INSERT INTO effects (kind, key, at) VALUES (?, ?, ?)',
      args: [kind, key, new Date().toISOString()],
    })
  } finally {
    db.close()
  }
}

/**
 * An agent that asks the customer (deferred question tool, or the blocking
 * ask tool) and refunds only on an approved answer.
 */
function createAskerAgent(id: 'asker' | 'blocking-asker'): Agent {
  const askHuman =
    id === 'asker'
      ? createPusharyDeferredAskTool({ client }, { externalId: EXTERNAL_ID })
      : createPusharyAskTool({ client }, { externalId: EXTERNAL_ID, timeoutMs: 20_000 })
  const refundNow = createTool({
    id: 'refund-now',
    description: 'Refund an order (the customer already agreed)',
    inputSchema: z.object({ orderId: z.string() }),
    outputSchema: z.object({ refunded: z.boolean() }),
    execute: async ({ orderId }) => {
      await recordEffect(`${id}-refund`, orderId)
      return { refunded: true }
    },
  })
  return new Agent({
    id,
    name: id,
    instructions: 'Ask the customer, refund only when they agree.',
    model: scriptedModel((turn) => {
      const orderId = /Refund (\S+)/.exec(turn.userTexts.at(-1) ?? '')?.[1] ?? 'unknown'
      const asked = turn.results.get(`ask-${orderId}`)
      if (!asked) {
        const input = { question: `May we refund order ${orderId}?`, type: 'confirm' }
        return { toolCalls: [{ toolCallId: `ask-${orderId}`, toolName: 'askHuman', input }] }
      }
      const approved = JSON.stringify(asked.output).includes('"approved":true')
      if (approved && !turn.results.has(`refund-${orderId}`)) {
        return { toolCalls: [{ toolCallId: `refund-${orderId}`, toolName: 'refundNow', input: { orderId } }] }
      }
      return { text: approved ? 'Refunded.' : 'Not refunded: the customer did not agree.' }
    }),
    tools: { askHuman, refundNow },
  })
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pushary-hosted-e2e-'))
  fake = await startHostedFake()
  bridge = await startBridge((request) => dispatcher.handleCallback(request))
  client = createPusharyClient({ apiKey: fake.apiKey, baseUrl: fake.baseUrl })
  store = createSqliteReviewStore({ url: `file:${join(dir, 'reviews.db')}` })
  const refund = createStep({
    id: 'refund',
    inputSchema: pusharyApprovedAnswerSchema,
    outputSchema: z.object({ refunded: z.literal(true) }),
    execute: async ({ getInitData }) => {
      await recordEffect('workflow-refund', getInitData<{ operationId: string }>().operationId)
      return { refunded: true as const }
    },
  })
  const workflow = createWorkflow({
    id: 'hosted-refund',
    inputSchema: pusharyApprovalStepInputSchema,
    outputSchema: z.unknown(),
    options: { autoRestartActiveRuns: false },
  })
    .then(
      pusharyApprovalStep(
        { client, store },
        { id: 'approve', externalId: EXTERNAL_ID, callbackUrl: bridge.url },
      ),
    )
    .then(pusharyGate())
    .then(refund)
    .commit()
  const shortLived = createWorkflow({
    id: 'hosted-refund-short',
    inputSchema: pusharyApprovalStepInputSchema,
    outputSchema: z.unknown(),
    options: { autoRestartActiveRuns: false },
  })
    .then(
      pusharyApprovalStep(
        { client, store },
        { id: 'approve', externalId: EXTERNAL_ID, callbackUrl: bridge.url, expiresInSeconds: 1 },
      ),
    )
    .then(pusharyGate())
    .then(refund)
    .commit()
  // Many items: one child run per item, the parent resumed once all settled.
  const item = createPusharyApprovalWorkflow(
    { client, store },
    { workflowId: 'hosted-approval-item', externalId: EXTERNAL_ID, callbackUrl: bridge.url },
  )
  const refundItem = createStep({
    id: 'refund-item',
    inputSchema: pusharyApprovedItemSchema,
    outputSchema: z.object({ refunded: z.literal(true) }),
    execute: async ({ inputData, getInitData }) => {
      const items = getInitData<{ operationId: string }[]>()
      await recordEffect('batch-refund', items[inputData.index]?.operationId ?? `index-${inputData.index}`)
      return { refunded: true as const }
    },
  })
  const batch = createWorkflow({
    id: 'hosted-refund-batch',
    inputSchema: z.array(pusharyApprovalStepInputSchema),
    outputSchema: z.unknown(),
    options: { autoRestartActiveRuns: false },
  })
    .then(pusharyApprovalBatchStep({ childWorkflowId: 'hosted-approval-item', store }))
    .then(pusharyGateItems())
    .foreach(refundItem)
    .commit()
  const refunder = createRefundAgent((orderId) => recordEffect('agent-refund', orderId))
  mastra = new Mastra({
    workflows: { workflow, shortLived, item, batch },
    agents: { refunder, asker: createAskerAgent('asker'), blockingAsker: createAskerAgent('blocking-asker') },
    storage: new LibSQLStore({ id: 'hosted-e2e', url: `file:${join(dir, 'mastra.db')}` }),
    logger: false,
  })
  dispatcher = createPusharyDispatcher({ mastra, client, store, webhookSecret: fake.webhookSecret })
})

afterAll(async () => {
  await store?.close()
  await bridge?.close()
  await fake?.close()
})

/** Answers as the person would; the fake then delivers (or the bridge loses) the callback. */
async function personAnswers(decisionId: string, value: string, via: 'callback' | 'reconcile') {
  bridge.mode = via === 'callback' ? 'deliver' : 'lose'
  const delivered = bridge.results.length
  await fake.answer(decisionId, value)
  if (via === 'callback') {
    expect(bridge.results.length).toBeGreaterThan(delivered)
    return bridge.results.at(-1)!
  }
  const report = await dispatcher.reconcile({ limit: 100 })
  return report
}

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

  it("settles as expired once the decision's expiry has passed, never running the refund", async () => {
    const operationId = 'wf-404-expired'
    const { runId, decisionId } = await startWorkflow(operationId, 'shortLived')
    await new Promise((resolve) => setTimeout(resolve, 1_500))
    fake.forget(decisionId)
    const outcome = await dispatcher.resumeDecision(decisionId)
    expect(outcome.status).toBe('resumed')
    const state = await runState(runId, 'shortLived')
    expect(state.status).toBe('success')
    expect(state.result).toMatchObject({ outcome: 'declined', reason: 'expired' })
    expect(await effects('workflow-refund', operationId)).toBe(0)
  })
})

/** Runs the asker until its question suspends and opens the phone review. */
async function askerSuspends(orderId: string) {
  const agent = mastra.getAgentById('asker')
  const output = await agent.generate(`Refund ${orderId}`, {
    memory: { thread: `asker-${orderId}`, resource: EXTERNAL_ID },
  })
  expect(output.finishReason).toBe('suspended')
  const review = await openPusharyAgentReview(
    { client },
    {
      agent,
      agentId: 'asker',
      runId: output.runId!,
      toolCallId: `ask-${orderId}`,
      externalId: EXTERNAL_ID,
      actionVersion: 'v1',
      store,
      callbackUrl: bridge.url,
    },
  )
  expect(review.kind).toBe('question')
  return review
}

describe('agent: deferred question tool against the hosted wire', () => {
  it.each([
    ['yes', 'callback', 1],
    [' approve ', 'reconcile', 1],
    ['no', 'callback', 0],
    ['maybe', 'reconcile', 0],
  ] as const)(
    'answered %j via %s, refunds %i time(s) and settles the review',
    async (value, via, refunds) => {
      const orderId = `ask-${via}-${value.trim()}`
      const review = await askerSuspends(orderId)
      const outcome = await personAnswers(review.decisionId, value, via)
      if (via === 'callback') expect(outcome).toMatchObject({ status: 'resumed' })
      expect((await store.get(review.decisionId))?.state).toBe('completed')
      expect((await dispatcher.resumeDecision(review.decisionId)).status).toBe('duplicate')
      expect(await effects('asker-refund', orderId)).toBe(refunds)
    },
  )
})

/** The refund agent suspends on its `requireApproval` tool. */
async function refunderSuspends(orderId: string) {
  const agent = mastra.getAgentById('refunder')
  const output = await agent.generate(`Refund ${orderId}`, {
    memory: { thread: `refunder-${orderId}`, resource: EXTERNAL_ID },
  })
  expect(output.finishReason).toBe('suspended')
  return { agent, runId: output.runId! }
}

const refunds = (orderId: string) => effects('agent-refund', orderId)

describe('agent: requireApproval tool against the hosted wire', () => {
  it.each([
    ['yes', 'callback', 1],
    ['Yes', 'reconcile', 1],
    ['no', 'callback', 0],
    ['maybe', 'reconcile', 0],
  ] as const)(
    'as a deferred review answered %j via %s, runs the tool %i time(s)',
    async (value, via, expected) => {
      const orderId = `rv-${via}-${value}`
      const { agent, runId } = await refunderSuspends(orderId)
      const review = await openPusharyAgentReview(
        { client },
        {
          agent,
          agentId: 'refunder',
          runId,
          toolCallId: `call-${orderId}`,
          externalId: EXTERNAL_ID,
          actionVersion: 'v1',
          store,
          callbackUrl: bridge.url,
        },
      )
      const outcome = await personAnswers(review.decisionId, value, via)
      if (via === 'callback') expect(outcome).toMatchObject({ status: 'resumed' })
      expect((await store.get(review.decisionId))?.state).toBe('completed')
      expect((await dispatcher.resumeDecision(review.decisionId)).status).toBe('duplicate')
      expect(await refunds(orderId)).toBe(expected)
    },
  )

  it.each([
    ['OK', true, 1],
    ['maybe', false, 0],
  ] as const)(
    'resolved inline by resolvePusharyApprovals, %j approves: %s',
    async (value, approved, expected) => {
      const orderId = `inline-${value}`
      const { agent, runId } = await refunderSuspends(orderId)
      const { runs } = await agent.listSuspendedRuns({ resourceId: EXTERNAL_ID })
      const before = fake.pages
      const answering = (async () => {
        while (fake.pages === before) await new Promise((resolve) => setTimeout(resolve, 20))
        await new Promise((resolve) => setTimeout(resolve, 50))
        await fake.answer([...fake.decisions.keys()].at(-1)!, value)
      })()
      const [outcome] = await Promise.all([
        resolvePusharyApprovals(
          { client, externalId: EXTERNAL_ID, policy: false, timeoutMs: 20_000 },
          { agent, runs: runs.filter((run) => run.runId === runId) },
        ),
        answering,
      ])
      expect(outcome.allApproved).toBe(approved)
      expect(outcome.resolved).toHaveLength(1)
      expect(outcome.resolved[0]).toMatchObject({ approved, toolCallId: `call-${orderId}` })
      // Settled by the answer, not by an error on the way.
      expect(outcome.resolved[0]?.reviewError).toBeUndefined()
      expect(outcome.resolved[0]?.resumeError).toBeUndefined()
      expect(fake.pages).toBe(before + 1)
      expect(await refunds(orderId)).toBe(expected)
    },
  )
})

describe('agent: blocking ask tool against the hosted wire', () => {
  it.each([
    ['OK', 1],
    ['maybe', 0],
  ] as const)('answered %j, refunds %i time(s) without a throw', async (value, expected) => {
    const orderId = `blocking-${value}`
    const before = fake.pages
    const answering = (async () => {
      while (fake.pages === before) await new Promise((resolve) => setTimeout(resolve, 20))
      await new Promise((resolve) => setTimeout(resolve, 50))
      await fake.answer([...fake.decisions.keys()].at(-1)!, value)
    })()
    const [output] = await Promise.all([
      mastra.getAgentById('blocking-asker').generate(`Refund ${orderId}`, {
        memory: { thread: `blocking-${orderId}`, resource: EXTERNAL_ID },
      }),
      answering,
    ])
    expect(output.finishReason).not.toBe('suspended')
    expect(output.text).toBe(expected === 1 ? 'Refunded.' : 'Not refunded: the customer did not agree.')
    expect(await effects('blocking-asker-refund', orderId)).toBe(expected)
    expect(fake.pages).toBe(before + 1)
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
