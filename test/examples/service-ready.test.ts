/**
 * The readiness wait the demo and the examples run before their first
 * request (finding 9: a loaded machine's first create found the service not
 * answering). Against real servers: one that starts listening late, one that
 * never does, one that answers "starting" (503) first, and a wrong key.
 */

import { mkdtempSync } from 'node:fs'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createPusharyClient } from '../../src/pushary/client.js'
import { PusharyApiError } from '../../src/pushary/errors.js'
import { createPusharyDevServer } from '../../src/server/dev-server.js'
import { PusharyTestingError, waitForPusharyService } from '../../src/testing/index.js'

const API_KEY = 'pk_ready.sk_ready'

/** A port that was free a moment ago (nothing listens on it now). */
async function freePort(): Promise<number> {
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const address = probe.address()
  await new Promise<void>((resolve) => probe.close(() => resolve()))
  return typeof address === 'object' && address ? address.port : 0
}

const clientFor = (port: number, apiKey = API_KEY) =>
  createPusharyClient({ baseUrl: `http://127.0.0.1:${port}/api/v1/server`, apiKey })

describe('waitForPusharyService (the examples wait for their own service)', () => {
  it('waits for a service that starts listening late, then the first create succeeds', async () => {
    const port = await freePort()
    const client = clientFor(port)
    const started = Date.now()
    let service: Awaited<ReturnType<typeof createPusharyDevServer>> | undefined
    const late = new Promise<void>((resolve, reject) => {
      setTimeout(() => {
        createPusharyDevServer({
          port,
          apiKey: API_KEY,
          dbPath: join(mkdtempSync(join(tmpdir(), 'pushary-ready-')), 'service.db'),
          onError: () => {},
        }).then((server) => {
          service = server
          resolve()
        }, reject)
      }, 1_500)
    })
    try {
      // Without the wait, this create fails: nothing listens yet.
      await expect(client.decisions.create({ question: 'Too early?', externalId: 'c1' })).rejects.toThrow(
        /could not reach the service/,
      )
      await waitForPusharyService(client, { timeoutMs: 30_000 })
      expect(Date.now() - started).toBeGreaterThanOrEqual(1_400)
      await late
      const created = await client.decisions.create({ question: 'Refund EUR 48?', externalId: 'c1' })
      expect(created.decisionId).toMatch(/^dec_/)
    } finally {
      await late.catch(() => undefined)
      await service?.close()
    }
  }, 60_000)

  it('gives up after the bound with an error naming the service URL and the last failure', async () => {
    const port = await freePort()
    const started = Date.now()
    const error = await waitForPusharyService(clientFor(port), { timeoutMs: 800 }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(PusharyTestingError)
    expect(error).toMatchObject({ code: 'service_not_ready', field: 'baseUrl' })
    expect((error as Error).message).toContain(`http://127.0.0.1:${port}/api/v1/server`)
    expect((error as Error).message).toContain('could not reach the service')
    expect(Date.now() - started).toBeLessThan(5_000)
  })

  it('keeps waiting while the service answers 503 starting, and resolves once it answers', async () => {
    let requests = 0
    const starting = createServer((_req, res) => {
      requests += 1
      if (requests <= 3) {
        res.writeHead(503, { 'content-type': 'text/plain' })
        res.end('starting')
        return
      }
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ decisions: [], nextCursor: null }))
    })
    await new Promise<void>((resolve) => starting.listen(0, '127.0.0.1', resolve))
    const address = starting.address()
    try {
      await waitForPusharyService(clientFor(typeof address === 'object' && address ? address.port : 0), {
        timeoutMs: 10_000,
        intervalMs: 20,
      })
      expect(requests).toBe(4)
    } finally {
      await new Promise<void>((resolve) => starting.close(() => resolve()))
    }
  })

  it('does not wait on a refusal waiting cannot fix: a wrong API key is thrown at once', async () => {
    const service = await createPusharyDevServer({
      port: 0,
      apiKey: API_KEY,
      dbPath: join(mkdtempSync(join(tmpdir(), 'pushary-ready-')), 'service.db'),
      onError: () => {},
    })
    try {
      const port = Number(new URL(service.url).port)
      const started = Date.now()
      const error = await waitForPusharyService(clientFor(port, 'pk_wrong.sk_wrong'), {
        timeoutMs: 20_000,
      }).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(PusharyApiError)
      expect(error).toMatchObject({ status: 401 })
      expect(Date.now() - started).toBeLessThan(5_000)
    } finally {
      await service.close()
    }
  })

  it('refuses a bound that is not a positive integer, naming the field, before any request', async () => {
    await expect(waitForPusharyService(clientFor(1), { timeoutMs: 0 })).rejects.toMatchObject({
      code: 'invalid_input',
      field: 'timeoutMs',
    })
  })
})
