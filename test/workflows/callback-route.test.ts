import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Mastra } from '@mastra/core/mastra'
import { LibSQLStore } from '@mastra/libsql'
import { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPusharyDispatcher } from '../../src/agents/dispatcher.js'
import { SIGNATURE_HEADER, signWebhookBody } from '../../src/pushary/callbacks.js'
import { createPusharyClient } from '../../src/pushary/client.js'
import { isPusharyValidationError } from '../../src/pushary/errors.js'
import { pusharyCallbackRoute } from '../../src/resume/callback-route.js'
import type { PusharyReviewStore } from '../../src/store/review-store.js'
import { createSqliteReviewStore } from '../../src/store/sqlite-store.js'

const secret = 'whsec_route_test'
let store: PusharyReviewStore
let app: Hono

beforeAll(() => {
  const dir = mkdtempSync(join(tmpdir(), 'pushary-route-'))
  store = createSqliteReviewStore({ url: `file:${join(dir, 'reviews.db')}` })
  const mastra = new Mastra({
    storage: new LibSQLStore({ id: 'route', url: `file:${join(dir, 'mastra.db')}` }),
    logger: false,
  })
  // Nothing listens on port 9: a request to the service would fail loudly.
  const client = createPusharyClient({
    baseUrl: 'http://127.0.0.1:9/api/v1/server',
    apiKey: 'pk_route.sk_route',
  })
  const dispatcher = createPusharyDispatcher({ mastra, client, store, webhookSecret: secret })
  const route = pusharyCallbackRoute(dispatcher) as { path: string; method: string; handler?: unknown }
  app = new Hono()
  const handler = route.handler as (context: { req: { raw: Request } }) => Promise<Response>
  app.post(route.path, (context) => handler(context))
})

afterAll(async () => {
  await store?.close()
})

function post(body: string, signature: string | null) {
  return app.request('/pushary/callback', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(signature ? { [SIGNATURE_HEADER]: signature } : {}) },
    body,
  })
}

describe('pusharyCallbackRoute', () => {
  const body = JSON.stringify({
    event: 'decision.answered',
    correlationId: 'dec_route',
    decisionId: 'dec_route',
    status: 'answered',
    answer: 'yes',
    value: 'yes',
    answeredAt: new Date().toISOString(),
  })

  it('serves the callback on a Hono route: 401 without a valid signature, nothing recorded', async () => {
    expect((await post(body, null)).status).toBe(401)
    expect((await post(body, signWebhookBody(body, 'other-secret'))).status).toBe(401)
    expect(await store.listReceipts('dec_route')).toEqual([])
  })

  it('records a signed callback and asks the sender to retry while no review is saved', async () => {
    const response = await post(body, signWebhookBody(body, secret))
    expect(response.status).toBe(503)
    expect(await response.json()).toMatchObject({ status: 'unknown', decisionId: 'dec_route' })
    expect((await store.listReceipts('dec_route')).map((receipt) => receipt.body)).toEqual([body])
  })

  it('answers 400 to a signed body that is not a callback', async () => {
    const junk = '{"hello":"world"}'
    expect((await post(junk, signWebhookBody(junk, secret))).status).toBe(400)
  })

  it("refuses a path under Mastra's reserved /api prefix", () => {
    const dispatcher = createPusharyDispatcher({
      mastra: new Mastra({ logger: false }),
      client: createPusharyClient({ baseUrl: 'http://127.0.0.1:9/api/v1/server', apiKey: 'pk_a.sk_b' }),
      store,
    })
    let caught: unknown
    try {
      pusharyCallbackRoute(dispatcher, { path: '/api/pushary' })
    } catch (error) {
      caught = error
    }
    expect(isPusharyValidationError(caught) && caught.field).toBe('opts.path')
  })
})
