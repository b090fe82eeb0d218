/**
 * The one-line callback route of docs/workflows.md, written exactly as documented, under
 * a real Mastra server (Mastra's Hono server adapter, listening on loopback):
 * the local decision service posts the signed answer to it and the run
 * resumes. Also the dispatcher's refusal of a missing webhook secret.
 */
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { serve } from '@hono/node-server'
import { Mastra } from '@mastra/core/mastra'
import { createStep, createWorkflow } from '@mastra/core/workflows'
import { MastraServer } from '@mastra/hono'
import { LibSQLStore } from '@mastra/libsql'
import { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod/v4'
import {
  createPusharyDispatcher,
  createSqliteReviewStore,
  isPusharyDeclined,
  type PusharyReviewStore,
  pusharyApprovalStep,
  pusharyApprovalStepInputSchema,
  pusharyApprovedAnswerSchema,
  pusharyCallbackRoute,
  pusharyDeclinedSchema,
  pusharyGate,
} from '../../src/index.js'
import { thrown } from '../helpers/errors.js'
import { countEffects, createTestEnv, type TestEnv, waitFor } from '../helpers/mastra.js'

let env: TestEnv
let store: PusharyReviewStore
let mastra: Mastra
let http: ReturnType<typeof serve>
let callbackUrl: string

beforeAll(async () => {
  env = await createTestEnv('mastra-server', { callbackDelayMs: 50 })
  store = createSqliteReviewStore({ url: `file:${join(env.dir, 'reviews.db')}` })
  const { client, webhookSecret, dir } = env
  const refund = createStep({
    id: 'refund',
    inputSchema: pusharyApprovedAnswerSchema,
    outputSchema: z.object({ refunded: z.literal(true) }),
    execute: async () => {
      const { createClient } = await import('@libsql/client')
      const db = createClient({ url: `file:${join(dir, 'effects.db')}` })
      await db.execute(
        'CREATE TABLE IF NOT EXISTS effects (kind TEXT NOT NULL, key TEXT NOT NULL, at TEXT NOT NULL)',
      )
      await db.execute({
        sql: 'INSERT INTO effects VALUES (?, ?, ?)',
        args: ['refund', 'o1', new Date().toISOString()],
      })
      db.close()
      return { refunded: true as const }
    },
  })
  const workflow = createWorkflow({
    id: 'refund',
    inputSchema: pusharyApprovalStepInputSchema,
    outputSchema: z.union([z.object({ refunded: z.literal(true) }), pusharyDeclinedSchema]),
    options: { autoRestartActiveRuns: false },
  })
    .then(pusharyApprovalStep({ client, store }, { externalId: 'customer_1' }))
    .then(pusharyGate())
    .then(refund)
    .commit()

  // The docs sample (docs/workflows.md), verbatim: the route resolves the dispatcher on first use.
  mastra = new Mastra({
    workflows: { refund: workflow },
    storage: new LibSQLStore({ id: 'route-server', url: `file:${join(dir, 'mastra.db')}` }),
    server: { apiRoutes: [pusharyCallbackRoute(() => dispatcher)] },
    logger: false,
  })
  const dispatcher = createPusharyDispatcher({ mastra, client, store, webhookSecret })

  const app = new Hono()
  await new MastraServer({ app: app as never, mastra }).init()
  http = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' })
  await new Promise<void>((resolve) => (http.listening ? resolve() : http.once('listening', () => resolve())))
  callbackUrl = `http://127.0.0.1:${(http.address() as AddressInfo).port}/pushary/callback`
})

afterAll(async () => {
  await new Promise<void>((resolve) => (http ? http.close(() => resolve()) : resolve()))
  await store?.close()
  await env?.close()
})

async function startRun(operationId: string) {
  const run = await mastra.getWorkflow('refund').createRun()
  const started = await run.start({
    inputData: { operationId, question: 'Refund 20 EUR for o1?', type: 'confirm', delivery: { callbackUrl } },
  })
  expect(started.status).toBe('suspended')
  const review = (await store.listByState('pending', { limit: 100 })).find((r) => r.runId === run.runId)!
  return { run, review }
}

describe('the callback route under a real Mastra server', () => {
  it('resumes the run from a signed callback posted to the one-line route, and refunds once', async () => {
    const { run, review } = await startRun('refund:o1:v1')
    await env.client.decisions.answer(review.decisionId, 'yes')
    const done = await waitFor(async () => {
      const state = await mastra.getWorkflow('refund').getWorkflowRunById(run.runId)
      return state?.status === 'success' ? state : undefined
    })
    expect(done.result).toEqual({ refunded: true })
    expect((await store.get(review.decisionId))?.state).toBe('completed')
    expect(await countEffects(env.dir, 'refund')).toBe(1)
  })

  it('ends a denied run with the declined result the union output schema allows, no refund', async () => {
    const before = await countEffects(env.dir, 'refund')
    const { run, review } = await startRun('refund:o2:v1')
    await env.client.decisions.answer(review.decisionId, 'no')
    const done = await waitFor(async () => {
      const state = await mastra.getWorkflow('refund').getWorkflowRunById(run.runId)
      return state?.status === 'success' ? state : undefined
    })
    expect(isPusharyDeclined(done.result) && done.result.reason).toBe('denied')
    expect(await countEffects(env.dir, 'refund')).toBe(before)
  })

  it('answers 401 to an unsigned post on the route, without resuming anything', async () => {
    const response = await fetch(callbackUrl, { method: 'POST', body: '{"decisionId":"dec_x"}' })
    expect(response.status).toBe(401)
  })
})

describe('the webhook secret', () => {
  const base = () => ({ mastra: new Mastra({ logger: false }), client: env.client, store })

  it.each([
    ['undefined (an unset environment variable)', undefined],
    ['empty', ''],
    ['blank', '   '],
  ])('is refused when %s, as the dispatcher is built', (_name, webhookSecret) => {
    const error = thrown(() => createPusharyDispatcher({ ...base(), webhookSecret }))
    expect(error).toMatchObject({ name: 'PusharyValidationError', field: 'webhookSecret' })
  })

  it('may be omitted or false for a dispatcher that only reconciles; its callbacks get 500, not a forgery 401', async () => {
    for (const dispatcher of [
      createPusharyDispatcher(base()),
      createPusharyDispatcher({ ...base(), webhookSecret: false }),
    ]) {
      expect((await dispatcher.reconcile({ limit: 1 })).checked).toBeGreaterThanOrEqual(0)
      const response = await dispatcher.handleCallback(
        new Request('http://x/cb', { method: 'POST', body: '{}' }),
      )
      expect(response.status).toBe(500)
      expect(await response.json()).toEqual({ error: 'webhook_secret_not_configured' })
    }
  })
})
