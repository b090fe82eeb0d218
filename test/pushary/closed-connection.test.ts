/**
 * A kept-alive connection the service closes just as the next request goes
 * out (the server's idle timer fires while a loaded client still holds the
 * socket): the client sends a read, or a create carrying an idempotency key,
 * once more on a fresh connection, and never repeats a request that could do
 * something twice. A TCP relay in front of the real local service closes each
 * client connection when its second request arrives, before forwarding it.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createPusharyClient, type PusharyClient } from '../../src/pushary/client.js'
import { PusharyNetworkError } from '../../src/pushary/errors.js'
import { rejection } from '../helpers/errors.js'
import { createTestEnv, type TestEnv } from '../helpers/mastra.js'

interface Relay {
  baseUrl: string
  /** Client connections accepted. */
  connections: number
  /** Requests dropped by closing their connection (never forwarded). */
  dropped: number
  close(): Promise<void>
}

/** Forwards each connection's first request; closes it when a second one arrives. */
async function startRelay(target: URL): Promise<Relay> {
  const sockets = new Set<Socket>()
  const relay: Relay = { baseUrl: '', connections: 0, dropped: 0, close: async () => undefined }
  const server: Server = createServer((client) => {
    relay.connections += 1
    sockets.add(client)
    const upstream = createConnection({ host: target.hostname, port: Number(target.port) })
    sockets.add(upstream)
    let answered = false
    upstream.on('data', (chunk) => {
      answered = true
      client.write(chunk)
    })
    client.on('data', (chunk) => {
      if (!answered) {
        upstream.write(chunk)
        return
      }
      relay.dropped += 1
      client.destroy()
      upstream.destroy()
    })
    const end = () => {
      client.destroy()
      upstream.destroy()
    }
    client.on('error', end)
    upstream.on('error', end)
    client.on('close', end)
    upstream.on('close', end)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('the relay has no port')
  relay.baseUrl = `http://127.0.0.1:${address.port}${target.pathname.replace(/\/$/, '')}`
  relay.close = () => {
    for (const socket of sockets) socket.destroy()
    return new Promise<void>((resolve) => server.close(() => resolve()))
  }
  return relay
}

let env: TestEnv
let relay: Relay
let client: PusharyClient

beforeEach(async () => {
  env = await createTestEnv('closed-connection')
  relay = await startRelay(new URL(env.baseUrl))
  client = createPusharyClient({ baseUrl: relay.baseUrl, apiKey: env.apiKey })
})

afterEach(async () => {
  await relay?.close()
  await env?.close()
})

/** One request, then a moment idle, so the connection is back in the client's pool. */
async function firstRequestThenIdle(): Promise<void> {
  await client.reachability('customer_1')
  await new Promise((resolve) => setTimeout(resolve, 50))
}

describe('a kept-alive connection closed under the next request', () => {
  it('sends a read again on a fresh connection', async () => {
    await firstRequestThenIdle()
    const reach = await client.reachability('customer_1')
    expect(reach.externalId).toBe('customer_1')
    expect(relay.dropped).toBe(1)
    expect(relay.connections).toBe(2)
  })

  it('sends a create with an idempotency key again, and the service keeps one decision', async () => {
    await firstRequestThenIdle()
    const created = await client.decisions.create({
      question: 'Refund order o-1?',
      externalId: 'customer_1',
      idempotencyKey: 'refund:o-1:v1',
    })
    expect(relay.dropped).toBe(1)
    const { decisions } = await env.client.decisions.list({ externalId: 'customer_1' })
    expect(decisions.filter((decision) => decision.question === 'Refund order o-1?')).toEqual([
      expect.objectContaining({ decisionId: created.decisionId }),
    ])
  })

  it('never repeats a create without a key: the caller gets the network error and nothing was created', async () => {
    await firstRequestThenIdle()
    const error = await rejection(
      client.decisions.create({ question: 'Delete the bucket?', externalId: 'customer_1' }),
    )
    expect(error).toBeInstanceOf(PusharyNetworkError)
    expect(relay.dropped).toBe(1)
    expect(relay.connections).toBe(1)
    const { decisions } = await env.client.decisions.list({ externalId: 'customer_1' })
    expect(decisions.filter((decision) => decision.question === 'Delete the bucket?')).toEqual([])
  })
})
