/**
 * The application the end-to-end contract tests drive against the hosted
 * fake: real Mastra on a LibSQL file, the SQLite review store, a workflow
 * with the approval step and gate (and a short-lived twin, and one whose
 * approvers come with each run's input), the batch step,
 * the refund agent (`requireApproval`), two asking agents (deferred and
 * blocking ask tool), and the dispatcher behind a real HTTP callback
 * endpoint. Side effects are rows in a SQLite table, counted per business key.
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
import { z } from 'zod/v4'
import { createPusharyAskTool } from '../../src/agents/ask-tool.js'
import { createPusharyDeferredAskTool } from '../../src/agents/deferred-ask-tool.js'
import { createPusharyDispatcher } from '../../src/agents/dispatcher.js'
import { createPusharyClient, type PusharyClient } from '../../src/pushary/client.js'
import type { PusharyDispatchResult } from '../../src/resume/dispatch-types.js'
import { pusharyApprovalStepInputSchema } from '../../src/steps/approval-schemas.js'
import { pusharyApprovalStep } from '../../src/steps/approval-step.js'
import {
  pusharyApprovedAnswerSchema,
  pusharyApprovedItemSchema,
  pusharyGate,
  pusharyGateItems,
} from '../../src/steps/gate-step.js'
import { createSqliteReviewStore } from '../../src/store/sqlite-store.js'
import {
  createPusharyApprovalWorkflow,
  pusharyApprovalBatchStep,
} from '../../src/workflows/approval-workflows.js'
import { scriptedModel } from '../agents/support/scripted-model.js'
import { createRefundAgent } from '../workflows/fixtures/refund-agent.js'
import { startHostedFake } from './hosted-fake.js'

export const EXTERNAL_ID = 'customer_1'

/** A real HTTP endpoint for the fake's callbacks that hands each one to the dispatcher. */
export interface CallbackBridge {
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
async function effects(dir: string, kind: string, key: string): Promise<number> {
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

async function recordEffect(dir: string, kind: string, key: string): Promise<void> {
  const db = createClient({ url: `file:${join(dir, 'effects.db')}` })
  try {
    await db.execute('PRAGMA busy_timeout = 5000')
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
function createAskerAgent(
  id: 'asker' | 'blocking-asker',
  client: PusharyClient,
  record: (kind: string, key: string) => Promise<void>,
): Agent {
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
      await record(`${id}-refund`, orderId)
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

/**
 * Starts the hosted fake and builds the application against it.
 *
 * @example
 * const app = await startHostedApp()
 */
export async function startHostedApp() {
  const dir = mkdtempSync(join(tmpdir(), 'pushary-hosted-e2e-'))
  const record = (kind: string, key: string) => recordEffect(dir, kind, key)
  const fake = await startHostedFake()
  // The dispatcher is built last; the bridge reaches it through this closure.
  let dispatcher: ReturnType<typeof createPusharyDispatcher> | undefined
  const bridge = await startBridge((request) => dispatcher!.handleCallback(request))
  const client = createPusharyClient({ apiKey: fake.apiKey, baseUrl: fake.baseUrl })
  const store = createSqliteReviewStore({ url: `file:${join(dir, 'reviews.db')}` })
  const refund = createStep({
    id: 'refund',
    inputSchema: pusharyApprovedAnswerSchema,
    outputSchema: z.object({ refunded: z.literal(true) }),
    execute: async ({ getInitData }) => {
      await record('workflow-refund', getInitData<{ operationId: string }>().operationId)
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
  // Several approvers (issue 41): each run names its set in its input.
  const setRefund = createStep({
    id: 'set-refund',
    inputSchema: pusharyApprovedAnswerSchema,
    outputSchema: z.object({ refunded: z.literal(true) }),
    execute: async ({ getInitData }) => {
      await record('approver-set-refund', getInitData<{ operationId: string }>().operationId)
      return { refunded: true as const }
    },
  })
  const approverSet = createWorkflow({
    id: 'hosted-refund-approvers',
    inputSchema: pusharyApprovalStepInputSchema,
    outputSchema: z.unknown(),
    options: { autoRestartActiveRuns: false },
  })
    .then(pusharyApprovalStep({ client, store }, { id: 'approve', callbackUrl: bridge.url }))
    .then(pusharyGate())
    .then(setRefund)
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
      await record('batch-refund', items[inputData.index]?.operationId ?? `index-${inputData.index}`)
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
  const refunder = createRefundAgent((orderId) => record('agent-refund', orderId))
  const mastra = new Mastra({
    workflows: { workflow, shortLived, approverSet, item, batch },
    agents: {
      refunder,
      asker: createAskerAgent('asker', client, record),
      blockingAsker: createAskerAgent('blocking-asker', client, record),
    },
    storage: new LibSQLStore({ id: 'hosted-e2e', url: `file:${join(dir, 'mastra.db')}` }),
    logger: false,
  })
  dispatcher = createPusharyDispatcher({ mastra, client, store, webhookSecret: fake.webhookSecret })
  const ready = dispatcher
  /** Answers as the person would; the fake then delivers (or the bridge loses) the callback. */
  const personAnswers = async (decisionId: string, value: string, via: 'callback' | 'reconcile') => {
    bridge.mode = via === 'callback' ? 'deliver' : 'lose'
    const delivered = bridge.results.length
    await fake.answer(decisionId, value)
    if (via === 'callback') {
      if (bridge.results.length <= delivered) throw new Error('the callback reached no dispatcher')
      return bridge.results.at(-1)!
    }
    return ready.reconcile({ limit: 100 })
  }
  return {
    fake,
    dir,
    client,
    store,
    mastra,
    dispatcher: ready,
    bridge,
    personAnswers,
    /** Rows of one side effect for one business key. */
    effects: (kind: string, key: string) => effects(dir, kind, key),
    close: async () => {
      await store.close()
      await bridge.close()
      await fake.close()
    },
  }
}

export type HostedApp = Awaited<ReturnType<typeof startHostedApp>>
