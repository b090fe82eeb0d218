/**
 * Real collaborators for decision-service tests: the dev server on a fresh
 * SQLite file in the temp dir, the package's client pointed at it, raw HTTP
 * for what the client refuses to send, and a callback receiver.
 */
import { mkdtempSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach } from 'vitest'
import { createPusharyClient, type PusharyClient } from '../../src/pushary/client.js'
import {
  createPusharyDevServer,
  type PusharyDevServer,
  type PusharyDevServerOptions,
} from '../../src/server/dev-server.js'

export interface Harness {
  dir: string
  dbPath: string
  server: PusharyDevServer
  client: PusharyClient
  /** Raw request to the API (`path` relative to `/api/v1/server`). */
  api(
    method: string,
    path: string,
    body?: unknown,
    options?: { key?: string | null; rawBody?: string; headers?: Record<string, string> },
  ): Promise<{ status: number; json: Record<string, unknown> }>
  close(): Promise<void>
}

export function tempDir(name: string): string {
  return mkdtempSync(join(tmpdir(), `pushary-service-${name}-`))
}

export async function startHarness(name: string, options: PusharyDevServerOptions = {}): Promise<Harness> {
  const dir = tempDir(name)
  const dbPath = options.dbPath ?? join(dir, 'service.db')
  const server = await createPusharyDevServer({
    sweepIntervalMs: 200,
    callbackAddresses: { allowLoopback: true },
    ...options,
    dbPath,
  })
  const client = createPusharyClient({ apiKey: server.apiKey, baseUrl: server.baseUrl })
  return {
    dir,
    dbPath,
    server,
    client,
    async api(method, path, body, opts = {}) {
      const headers: Record<string, string> = { 'content-type': 'application/json', ...opts.headers }
      const key = opts.key === undefined ? server.apiKey : opts.key
      if (key !== null) headers.authorization = `Bearer ${key}`
      const init: RequestInit = { method, headers }
      const bodyless = method === 'GET' || method === 'HEAD'
      if (opts.rawBody !== undefined) init.body = opts.rawBody
      else if (body !== undefined && !bodyless) init.body = JSON.stringify(body)
      const response = await fetch(`${server.baseUrl}${path}`, init)
      const text = await response.text()
      let json: Record<string, unknown> = {}
      try {
        json = JSON.parse(text) as Record<string, unknown>
      } catch {
        json = { raw: text }
      }
      return { status: response.status, json }
    },
    close: () => server.close(),
  }
}

export interface ReceivedCallback {
  rawBody: string
  signature: string | undefined
  headers: IncomingMessage['headers']
  respondedWith: number
}

export interface CallbackReceiver {
  url: string
  received: ReceivedCallback[]
  /** Resolves when `count` callbacks (any status) have arrived. */
  waitFor(count: number, timeoutMs?: number): Promise<void>
  close(): Promise<void>
}

/**
 * A real HTTP server on loopback. `statuses` are answered in order; once
 * exhausted every further request gets 200.
 */
export async function startCallbackReceiver(statuses: number[] = []): Promise<CallbackReceiver> {
  const received: ReceivedCallback[] = []
  const waiters: Array<{ count: number; resolve: () => void }> = []
  const queue = [...statuses]
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const status = queue.shift() ?? 200
      const signature = req.headers['x-pushary-signature']
      received.push({
        rawBody: Buffer.concat(chunks).toString('utf8'),
        signature: typeof signature === 'string' ? signature : undefined,
        headers: req.headers,
        respondedWith: status,
      })
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? 'ok' : 'fail')
      for (const waiter of [...waiters]) {
        if (received.length >= waiter.count) {
          waiters.splice(waiters.indexOf(waiter), 1)
          waiter.resolve()
        }
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}/callback`,
    received,
    waitFor(count, timeoutMs = 15_000) {
      if (received.length >= count) return Promise.resolve()
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`expected ${count} callbacks, got ${received.length}`)),
          timeoutMs,
        )
        waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer)
            resolve()
          },
        })
      })
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** Polls `check` until it returns a value that is not undefined. */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/**
 * One service (and callback receiver) per test, closed after each test, so
 * test files do not repeat the start/close bookkeeping.
 */
export function serviceFixture(name: string) {
  let harness: Harness | null = null
  let receiver: CallbackReceiver | null = null
  afterEach(async () => {
    await harness?.close()
    await receiver?.close()
    harness = null
    receiver = null
  })
  return {
    start: async (options: PusharyDevServerOptions = {}): Promise<Harness> => {
      harness = await startHarness(name, options)
      return harness
    },
    receive: async (statuses: number[] = []): Promise<CallbackReceiver> => {
      receiver = await startCallbackReceiver(statuses)
      return receiver
    },
  }
}
