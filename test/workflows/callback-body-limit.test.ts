import { createHmac } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { serve } from '@hono/node-server'
import { Mastra } from '@mastra/core/mastra'
import { LibSQLStore } from '@mastra/libsql'
import { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPusharyDispatcher } from '../../src/agents/dispatcher.js'
import { readPusharyCallback } from '../../src/pushary/callback-request.js'
import {
  resolvePusharyCallback,
  SIGNATURE_HEADER,
  signWebhookBody,
  verifyWebhookSignature,
} from '../../src/pushary/callbacks.js'
import { createPusharyClient } from '../../src/pushary/client.js'
import { isPusharyValidationError } from '../../src/pushary/errors.js'
import { pusharyCallbackRoute } from '../../src/resume/callback-route.js'
import type { PusharyReviewStore } from '../../src/store/review-store.js'
import { createSqliteReviewStore } from '../../src/store/sqlite-store.js'
import { thrown } from '../helpers/errors.js'

const secret = 'whsec_limit_test'
let store: PusharyReviewStore
let server: ReturnType<typeof serve>
let port = 0

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pushary-limit-'))
  store = createSqliteReviewStore({ url: `file:${join(dir, 'reviews.db')}` })
  const mastra = new Mastra({
    storage: new LibSQLStore({ id: 'limit', url: `file:${join(dir, 'mastra.db')}` }),
    logger: false,
  })
  const client = createPusharyClient({ baseUrl: 'http://127.0.0.1:9/api/v1/server', apiKey: 'pk_l.sk_l' })
  const dispatcher = createPusharyDispatcher({ mastra, client, store, webhookSecret: secret })
  const small = createPusharyDispatcher({
    mastra,
    client,
    store,
    webhookSecret: secret,
    callbackMaxBytes: 16,
  })
  const route = pusharyCallbackRoute(dispatcher) as { path: string; handler?: unknown }
  const routeHandler = route.handler as (context: { req: { raw: Request } }) => Promise<Response>
  const app = new Hono()
  app.post('/dispatcher', (c) => dispatcher.handleCallback(c.req.raw))
  app.post('/small', (c) => small.handleCallback(c.req.raw))
  app.post(route.path, (c) => routeHandler(c))
  app.post('/adapter', async (c) => {
    const read = await readPusharyCallback(c.req.raw, secret)
    return read.status === 'verified'
      ? c.json({ decisionId: read.callback.decisionId })
      : c.json({ reason: read.reason }, read.httpStatus)
  })
  server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' })
  await new Promise<void>((resolve) => server.once('listening', () => resolve()))
  port = (server.address() as AddressInfo).port
})

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()))
  await store?.close()
})

/**
 * Streams up to `totalBytes` of unsigned junk (chunked, no length) and stops
 * as soon as the response arrives; reports how much the server let through.
 */
function streamHugeBody(path: string, totalBytes: number): Promise<{ status: number; written: number }> {
  return new Promise((resolve, reject) => {
    let written = 0
    let answered = false
    const chunk = Buffer.alloc(64 * 1024, 0x61)
    const req = httpRequest({ host: '127.0.0.1', port, path, method: 'POST' }, (res) => {
      answered = true
      res.resume()
      res.on('end', () => {
        req.destroy()
        resolve({ status: res.statusCode ?? 0, written })
      })
    })
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

function declaredHugeBody(path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        headers: { 'content-length': String(600 * 1024 * 1024) },
      },
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

describe('callback bodies are capped before any parsing', () => {
  for (const path of ['/dispatcher', '/pushary/callback', '/adapter']) {
    it(`answers 413 on ${path} after reading at most a little of a 128 MiB unsigned body`, async () => {
      const { status, written } = await streamHugeBody(path, 128 * 1024 * 1024)
      expect(status).toBe(413)
      // Socket buffers let a few MiB through; reading the whole body would be 128.
      expect(written).toBeLessThan(24 * 1024 * 1024)
    })

    it(`answers 413 on ${path} for a declared 600 MiB body without waiting for it`, async () => {
      expect(await declaredHugeBody(path)).toBe(413)
    }, 10_000)
  }

  it('takes a configured cap, and refuses a cap that is not a positive whole number', async () => {
    const response = await fetch(`http://127.0.0.1:${port}/small`, {
      method: 'POST',
      body: JSON.stringify({ correlationId: 'dec_1234567890' }),
    })
    expect(response.status).toBe(413)
    const mastra = new Mastra({ logger: false })
    const client = createPusharyClient({ baseUrl: 'http://127.0.0.1:9/api/v1/server', apiKey: 'pk_l.sk_l' })
    for (const callbackMaxBytes of [0, -1, 1.5, Number.NaN]) {
      const error = thrown(() =>
        createPusharyDispatcher({ mastra, client, store, webhookSecret: secret, callbackMaxBytes }),
      )
      expect(error).toMatchObject({ code: 'invalid_options', field: 'callbackMaxBytes' })
    }
  })

  it('answers 400, not a retryable 503, to a signed callback whose decision id is blank', async () => {
    const body = JSON.stringify({ correlationId: '   ', answer: 'yes', answeredAt: null })
    const response = await fetch(`http://127.0.0.1:${port}/dispatcher`, {
      method: 'POST',
      headers: { [SIGNATURE_HEADER]: signWebhookBody(body, secret) },
      body,
    })
    expect(response.status).toBe(400)
    expect(await response.json()).toEqual({ error: 'invalid_callback_body', field: 'decisionId' })
  })

  it('still verifies and reads a normal signed callback through the adapter', async () => {
    const body = JSON.stringify({ correlationId: 'dec_ok', answer: 'yes', answeredAt: null })
    const ok = await fetch(`http://127.0.0.1:${port}/adapter`, {
      method: 'POST',
      headers: { [SIGNATURE_HEADER]: signWebhookBody(body, secret) },
      body,
    })
    expect(ok.status).toBe(200)
    expect(await ok.json()).toEqual({ decisionId: 'dec_ok' })
    const forged = await fetch(`http://127.0.0.1:${port}/adapter`, {
      method: 'POST',
      headers: { [SIGNATURE_HEADER]: signWebhookBody(body, 'whsec_other') },
      body,
    })
    expect(forged.status).toBe(401)
  })
})

describe('a blank or whitespace-only secret is refused everywhere a secret is taken', () => {
  const body = JSON.stringify({ correlationId: 'dec_forged', type: 'confirm', answer: 'yes' })
  const forge = (key: string) => createHmac('sha256', key).update(body).digest('hex')

  it('never resolves a callback signed with a whitespace secret as approved', () => {
    for (const blank of [' ', '\n', '\t \r\n', '']) {
      expect(resolvePusharyCallback(body, forge(blank), blank)).toBeNull()
      expect(verifyWebhookSignature(body, forge(blank), blank)).toBe(false)
    }
  })

  it('refuses to sign with a whitespace secret, with a typed error naming the field', () => {
    const error = thrown(() => signWebhookBody(body, '  '))
    expect(isPusharyValidationError(error)).toBe(true)
    expect(error).toMatchObject({ code: 'invalid_options', field: 'secret' })
  })

  it('answers 401 from the request adapter when its secret is blank', async () => {
    const read = await readPusharyCallback(
      new Request('http://x/cb', { method: 'POST', headers: { [SIGNATURE_HEADER]: forge(' ') }, body }),
      ' ',
    )
    expect(read).toMatchObject({ status: 'rejected', httpStatus: 401 })
  })
})
