/**
 * The application side of the durable-agent example: a real Mastra Agent
 * (scripted model) with a refund tool protected by `requireApproval` and the
 * deferred question tool, Mastra's LibSQL storage, the SQLite review store,
 * and the application's own tables (pinned identity, the saved action, saved
 * outputs, executed refunds), all in one directory per business action.
 */
import { createHash } from 'node:crypto'
import { join } from 'node:path'
import { type Client, createClient } from '@libsql/client'
import { Agent } from '@mastra/core/agent'
import { Mastra } from '@mastra/core/mastra'
import { createTool } from '@mastra/core/tools'
import { LibSQLStore } from '@mastra/libsql'
import { createPusharyDeferredAskTool, createSqliteReviewStore, type PusharyClient } from '@pushary/mastra'
import { z } from 'zod/v4'
import { callsOnce, type ScriptedToolCall, scriptedModel } from '../shared/scripted-model.js'

export const SCENARIOS = ['approve', 'deny', 'select', 'input'] as const
export type Scenario = (typeof SCENARIOS)[number]

export const AGENT_ID = 'customer-agent'
export const ACTION_VERSION = 'draft_1'
export const ORDER = { orderId: 'order_1', amount: 20 }
/**
 * The claim lease of this example's resumes and recovery. A resuming process
 * proves it is alive five times per lease; a claim that stopped moving for a
 * whole lease lost its process and may be recovered. The package default is
 * 30 s; this CLI uses 5 s so a crashed answer can be recovered sooner. Keep
 * it well above the longest synchronous stretch of your tools.
 */
export const CLAIM_LEASE_MS = 5_000

/** What the model does in each scenario: call the protected refund, or ask a question. */
export function scriptedCall(scenario: Scenario): ScriptedToolCall {
  switch (scenario) {
    case 'approve':
    case 'deny':
      return { toolCallId: 'call_1', toolName: 'refund', input: ORDER }
    case 'select':
      return {
        toolCallId: 'call_1',
        toolName: 'askHuman',
        input: {
          question: 'Choose yes to test a customer choice. This answer will not authorize a refund.',
          type: 'select',
          options: ['yes', 'other'],
        },
      }
    case 'input':
      return {
        toolCallId: 'call_1',
        toolName: 'askHuman',
        input: {
          question: 'Type yes to test a written answer. This answer will not authorize a refund.',
          type: 'input',
        },
      }
  }
}

/** What the directory pins: never the key itself, only its fingerprint. */
export interface PinnedIdentity {
  mode: 'local' | 'live'
  externalId: string
  service: string
  credential: string
}

export function credentialFingerprint(apiKey: string): string {
  return createHash('sha256').update(apiKey).digest('hex')
}

/** The application's own tables (beside the review store's, in the same file). */
export function openAppDatabase(dir: string, scenario: Scenario) {
  const url = `file:${join(dir, `${scenario}-app.sqlite`)}`
  const db: Client = createClient({ url })
  const ready = db.batch(
    [
      'CREATE TABLE IF NOT EXISTS demo_identity (id INTEGER PRIMARY KEY CHECK (id = 1), payload TEXT NOT NULL)',
      'CREATE TABLE IF NOT EXISTS demo_action (id INTEGER PRIMARY KEY CHECK (id = 1), decision_id TEXT NOT NULL, run_id TEXT NOT NULL)',
      'CREATE TABLE IF NOT EXISTS demo_outputs (decision_id TEXT PRIMARY KEY, payload TEXT NOT NULL)',
      'CREATE TABLE IF NOT EXISTS refunds (order_id TEXT NOT NULL, at TEXT NOT NULL)',
    ],
    'write',
  )
  const one = async (sql: string, args: (string | number)[] = []) => {
    await ready
    return (await db.execute({ sql, args })).rows[0]
  }
  return {
    url,
    /** Pins the identity on first use; returns the pinned one (which may differ from `identity`). */
    async pin(identity: PinnedIdentity): Promise<PinnedIdentity> {
      await ready
      await db.execute({
        sql: 'INSERT OR IGNORE INTO demo_identity (id, payload) VALUES (1, ?)',
        args: [JSON.stringify(identity)],
      })
      const row = await one('SELECT payload FROM demo_identity WHERE id = 1')
      return JSON.parse(String(row?.payload)) as PinnedIdentity
    },
    async action(): Promise<{ decisionId: string; runId: string } | null> {
      const row = await one('SELECT decision_id, run_id FROM demo_action WHERE id = 1')
      return row ? { decisionId: String(row.decision_id), runId: String(row.run_id) } : null
    },
    async saveAction(decisionId: string, runId: string): Promise<void> {
      await ready
      await db.execute({
        sql: 'INSERT OR IGNORE INTO demo_action (id, decision_id, run_id) VALUES (1, ?, ?)',
        args: [decisionId, runId],
      })
    },
    async output(decisionId: string): Promise<unknown | null> {
      const row = await one('SELECT payload FROM demo_outputs WHERE decision_id = ?', [decisionId])
      return row ? JSON.parse(String(row.payload)) : null
    },
    async saveOutput(decisionId: string, payload: unknown): Promise<void> {
      await ready
      await db.execute({
        sql: 'INSERT OR IGNORE INTO demo_outputs (decision_id, payload) VALUES (?, ?)',
        args: [decisionId, JSON.stringify(payload)],
      })
    },
    /** The business receipt: one row per executed refund. */
    async recordRefund(orderId: string): Promise<void> {
      await ready
      await db.execute({
        sql: 'INSERT INTO refunds (order_id, at) VALUES (?, ?)',
        args: [orderId, new Date().toISOString()],
      })
    },
    async refunds(): Promise<number> {
      return Number((await one('SELECT COUNT(*) AS n FROM refunds'))?.n ?? 0)
    },
    close: () => db.close(),
  }
}
export type AppDatabase = ReturnType<typeof openAppDatabase>

/**
 * Crash points for the restart checks: the process kills itself with
 * SIGKILL there, like a power cut (no cleanup, no finally blocks).
 */
export type CrashPoint = 'after-suspend' | 'in-refund' | 'before-output-saved'

export function crashAt(point: CrashPoint): void {
  if (process.env.DURABLE_AGENT_CRASH === point) process.kill(process.pid, 'SIGKILL')
}

export function buildAgentApp(input: {
  dir: string
  scenario: Scenario
  client: PusharyClient
  externalId: string
  db: AppDatabase
}) {
  const refund = createTool({
    id: 'refund',
    description: 'Refund an order',
    inputSchema: z.object({ orderId: z.string(), amount: z.number().positive() }),
    outputSchema: z.object({ refunded: z.boolean() }),
    requireApproval: true,
    execute: async ({ orderId }) => {
      await input.db.recordRefund(orderId)
      crashAt('in-refund')
      return { refunded: true }
    },
  })
  const askHuman = createPusharyDeferredAskTool({ client: input.client }, { externalId: input.externalId })
  const agent = new Agent({
    id: AGENT_ID,
    name: 'Customer agent',
    instructions: 'Handle the customer request; refunds need the customer approval.',
    model: scriptedModel(callsOnce([scriptedCall(input.scenario)], 'Finished')),
    tools: { refund, askHuman },
  })
  const storage = new LibSQLStore({
    id: 'durable-agent',
    url: `file:${join(input.dir, `${input.scenario}-mastra.sqlite`)}`,
  })
  const mastra = new Mastra({ agents: { [AGENT_ID]: agent }, storage, logger: false })
  const store = createSqliteReviewStore({ url: input.db.url })
  return { agent: mastra.getAgentById(AGENT_ID), mastra, store }
}
