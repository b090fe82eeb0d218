/**
 * The callback adapters for `node:http` and Express, served on loopback and
 * called by the local decision service itself: a real answer resumes a real
 * Mastra run through each of them; a tampered body, an over-cap body and a
 * body a JSON parser already consumed never approve anything.
 */
import { once } from 'node:events'
import { mkdtempSync } from 'node:fs'
import { createServer, request as httpRequest, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Mastra } from '@mastra/core/mastra'
import { createStep, createWorkflow } from '@mastra/core/workflows'
import { LibSQLStore } from '@mastra/libsql'
import express from 'express'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod/v4'
import {
  createPusharyDispatcher,
  createSqliteReviewStore,
  type PusharyDispatcher,
  type PusharyReviewStore,
  pusharyApprovalStep,
  pusharyApprovalStepInputSchema,
  pusharyApprovedAnswerSchema,
  pusharyDeclinedSchema,
  pusharyExpressCallback,
  pusharyGate,
  pusharyNodeCallback,
} from '../../src/index.js'
import { isPusharyValidationError } from '../../src/pushary/errors.js'
import { isPusharyRawBodyError } from '../../src/pushary/node-callback.js'
import { thrown } from '../helpers/errors.js'
import { createTestEnv, type TestEnv, waitFor } from '../helpers/mastra.js'

const ROUTES = {
  node: 'node',
  raw: 'express-raw',
  stream: 'express-stream',
  text: 'express-text',
  parsed: 'express-parsed',
} as const
type Route = keyof typeof ROUTES

let env: TestEnv
let store: PusharyReviewStore
let mastra: Mastra
let dispatcher: PusharyDispatcher
let nodeServer: Server
let expressServer: Server
const urls = {} as Record<Route, string>
/** Operation IDs whose protected refund ran, one entry per execution. */
const refunds: string[] = []
/** Genuine callbacks as the Express raw route received them, before the adapter. */
const delivered: { raw: Buffer; signature: string }[] = []
/** What reached the Express error handler. */
const expressErrors: unknown[] = []

function workflowFor(route: Route) {
  const refund = createStep({
    id: 'refund',
    inputSchema: pusharyApprovedAnswerSchema,
    outputSchema: z.object({ refunded: z.boolean() }),
    execute: async ({ getInitData }) => {
      refunds.push((getInitData() as { operationId: string }).operationId)
      return { refunded: true }
    },
  })
  return createWorkflow({
    id: ROUTES[route],
    inputSchema: pusharyApprovalStepInputSchema,
    outputSchema: z.union([z.object({ refunded: z.boolean() }), pusharyDeclinedSchema]),
    options: { autoRestartActiveRuns: false },
  })
    .then(
      pusharyApprovalStep(
        { client: env.client, store },
        { externalId: 'customer_adapters', callbackUrl: urls[route] },
      ),
    )
    .then(pusharyGate())
    .then(refund)
    .commit()
}

async function listen(server: Server): Promise<string> {
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

beforeAll(async () => {
  env = await createTestEnv('node-callback')
  const dir = mkdtempSync(join(tmpdir(), 'pushary-node-callback-'))
  store = createSqliteReviewStore({ url: `file:${join(dir, 'reviews.db')}` })
  // The servers listen first: the workflows need their URLs, the dispatcher
  // needs the workflows, and the routes need the dispatcher.
  nodeServer = createServer()
  const nodeBase = await listen(nodeServer)
  const app = express()
  expressServer = createServer(app)
  const expressBase = await listen(expressServer)
  urls.node = `${nodeBase}/pushary/callback`
  urls.raw = `${expressBase}/raw`
  urls.stream = `${expressBase}/stream`
  urls.text = `${expressBase}/text`
  urls.parsed = `${expressBase}/parsed`
  const workflows = Object.fromEntries(
    (Object.keys(ROUTES) as Route[]).map((route) => [ROUTES[route], workflowFor(route)]),
  )
  mastra = new Mastra({
    workflows,
    storage: new LibSQLStore({ id: 'node-callback', url: `file:${join(dir, 'mastra.db')}` }),
    logger: false,
  })
  dispatcher = createPusharyDispatcher({
    mastra,
    client: env.client,
    store,
    webhookSecret: env.webhookSecret,
  })

  // The one-liners of docs/workflows.md, with the unbound method.
  nodeServer.on('request', pusharyNodeCallback(dispatcher.handleCallback))
  app.post(
    '/raw',
    express.raw({ type: '*/*' }),
    (req, _res, next) => {
      delivered.push({
        raw: Buffer.from(req.body as Buffer),
        signature: String(req.get('x-pushary-signature')),
      })
      next()
    },
    pusharyExpressCallback(dispatcher.handleCallback),
  )
  app.post('/stream', pusharyExpressCallback(dispatcher.handleCallback))
  app.post('/text', express.text({ type: '*/*' }), pusharyExpressCallback(dispatcher.handleCallback))
  app.post('/parsed', express.json(), pusharyExpressCallback(dispatcher.handleCallback))
  app.use((error: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    expressErrors.push(error)
    res.status(500).json({ error: (error as { code?: unknown }).code ?? 'error' })
  })
})

afterAll(async () => {
  await new Promise((resolve) => nodeServer?.close(resolve))
  await new Promise((resolve) => expressServer?.close(resolve))
  await env?.close()
  await store?.close()
})

async function startRun(route: Route, operationId: string) {
  const run = await mastra.getWorkflow(ROUTES[route]).createRun()
  const started = await run.start({
    inputData: { operationId, question: `Refund ${operationId}?`, type: 'confirm' },
  })
  expect(started.status).toBe('suspended')
  const review = (await store.listByState('pending', { limit: 1000 })).find((r) => r.runId === run.runId)
  return { runId: run.runId, decisionId: review!.decisionId }
}

async function settled(route: Route, runId: string) {
  return waitFor(async () => {
    const state = await mastra.getWorkflow(ROUTES[route]).getWorkflowRunById(runId)
    return state && state.status !== 'suspended' && state.status !== 'running' ? state : undefined
  })
}

async function runStatus(route: Route, runId: string) {
  return (await mastra.getWorkflow(ROUTES[route]).getWorkflowRunById(runId))?.status
}

/** One POST with an exact body and headers; resolves with the status and the body text. */
function post(
  url: string,
  body: Buffer | string,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }))
    })
    req.on('error', reject)
    req.end(body)
  })
}

/**
 * Streams unsigned junk without a length, chunk by chunk, until the server
 * answers; resolves with that answer's status.
 */
function streamJunk(url: string, totalBytes: number): Promise<{ status: number; connection: unknown }> {
  return new Promise((resolve, reject) => {
    let answered = false
    let written = 0
    const chunk = Buffer.alloc(16 * 1024, 0x7a)
    const req = httpRequest(
      url,
      { method: 'POST', headers: { 'content-type': 'application/json' } },
      (res) => {
        answered = true
        res.resume()
        res.on('end', () => {
          req.destroy()
          resolve({ status: res.statusCode ?? 0, connection: res.headers.connection })
        })
      },
    )
    req.on('error', (error) => {
      if (!answered) reject(error)
    })
    const pump = () => {
      while (!answered && written < totalBytes) {
        written += chunk.length
        if (!req.write(chunk)) return void req.once('drain', pump)
      }
      if (!answered) req.end()
    }
    pump()
  })
}

/** Declares a huge body, sends a few bytes of it, and waits for the answer. */
function declareHuge(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method: 'POST', headers: { 'content-length': String(512 * 1024 * 1024) } },
      (res) => {
        res.resume()
        req.destroy()
        resolve(res.statusCode ?? 0)
      },
    )
    req.on('error', reject)
    req.write('{"correlationId":')
  })
}

describe('callback adapters for node:http and Express', () => {
  it.each([
    ['node', 'a plain node:http server'],
    ['raw', 'an Express route behind express.raw()'],
    ['stream', 'an Express route with no body parser'],
    ['text', 'an Express route behind express.text()'],
  ] as const)(
    'resumes an approved run from the service callback through %s (%s) and refunds once',
    async (route, _where) => {
      const operationId = `refund:${route}:v1`
      const { runId, decisionId } = await startRun(route, operationId)
      await env.client.decisions.answer(decisionId, 'yes')
      const state = await settled(route, runId)
      expect(state.status).toBe('success')
      expect(state.result).toEqual({ refunded: true })
      expect(refunds.filter((id) => id === operationId)).toHaveLength(1)
      expect((await store.get(decisionId))?.state).toBe('completed')
      // Nothing reconciles in this file: only the callback could have resumed it.
      expect((await store.listReceipts(decisionId)).length).toBeGreaterThanOrEqual(1)
    },
  )

  it('refuses a genuine callback whose body was tampered with (401), on every route, and the pending run never refunds', async () => {
    const genuine = delivered.at(-1)
    expect(genuine).toBeDefined()
    const answeredId = JSON.parse(genuine!.raw.toString()).correlationId as string
    const { runId, decisionId } = await startRun('node', 'refund:tampered:v1')
    // The signed answer of another decision, re-pointed at the pending one.
    const tampered = genuine!.raw.toString().replace(answeredId, decisionId)
    expect(tampered).not.toBe(genuine!.raw.toString())
    const headers = { 'content-type': 'application/json', 'x-pushary-signature': genuine!.signature }
    for (const url of [urls.node, urls.raw, urls.stream, urls.text]) {
      const answer = await post(url, tampered, headers)
      expect({ url, status: answer.status, body: JSON.parse(answer.text) }).toEqual({
        url,
        status: 401,
        body: { error: 'invalid_signature' },
      })
    }
    // The untampered bytes still verify through the same adapters: a duplicate, not a refusal.
    expect((await post(urls.node, genuine!.raw, headers)).status).toBe(200)
    expect(await runStatus('node', runId)).toBe('suspended')
    expect((await store.get(decisionId))?.state).toBe('pending')
    expect(refunds).not.toContain('refund:tampered:v1')
  })

  it('refuses a body over the 64 KiB cap (413) through every route, streamed, declared or already buffered', async () => {
    const big = JSON.stringify({ correlationId: 'd', answer: 'yes', padding: 'x'.repeat(70 * 1024) })
    for (const url of [urls.node, urls.stream, urls.raw, urls.text]) {
      expect({ url, status: (await post(url, big, { 'content-type': 'application/json' })).status }).toEqual({
        url,
        status: 413,
      })
    }
    for (const url of [urls.node, urls.stream]) {
      // The rest of the junk is never read: the connection closes after the 413.
      expect({ url, ...(await streamJunk(url, 4 * 1024 * 1024)) }).toEqual({
        url,
        status: 413,
        connection: 'close',
      })
      expect({ url, status: await declareHuge(url) }).toEqual({ url, status: 413 })
    }
    // The servers still answer afterwards.
    expect((await post(urls.node, '{}', { 'content-type': 'application/json' })).status).toBe(401)
  })

  it('refuses a body express.json() already parsed with PusharyRawBodyError naming express.raw(), leaving the answered run suspended', async () => {
    const before = expressErrors.length
    const { runId, decisionId } = await startRun('parsed', 'refund:parsed:v1')
    await env.client.decisions.answer(decisionId, 'yes')
    const error = await waitFor(async () => expressErrors.slice(before).find(isPusharyRawBodyError))
    expect(error).toMatchObject({ code: 'raw_body_unavailable', field: 'req.body' })
    expect(error.message).toContain("express.raw({ type: '*/*' })")
    expect(error.message).toContain('pusharyExpressCallback')
    expect(await runStatus('parsed', runId)).toBe('suspended')
    expect((await store.get(decisionId))?.state).toBe('pending')
    expect(refunds).not.toContain('refund:parsed:v1')
  })

  it('refuses a missing handler with a typed error naming the field', () => {
    for (const make of [pusharyNodeCallback, pusharyExpressCallback]) {
      const error = thrown(() => make(undefined as never))
      expect(isPusharyValidationError(error)).toBe(true)
      expect(error).toMatchObject({ code: 'invalid_options', field: 'handler' })
    }
  })
})
