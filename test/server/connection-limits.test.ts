/**
 * Issue 9, item 8: half-sent requests, too many sockets, long-polls and event
 * streams cannot starve legitimate requests. Real sockets against the real
 * server, with small limits so the test stays quick.
 */
import { connect, type Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { type Harness, startHarness } from './service-harness.js'
import { enrollDevice } from './support/devices.js'

let harness: Harness | null = null
const sockets: Socket[] = []

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy()
  await harness?.close()
  harness = null
})

/** Opens a socket and sends only part of a request; `closed` resolves when the server cuts it. */
function halfSentRequest(
  url: string,
  localAddress?: string,
): { connected: Promise<void>; closed: Promise<void> } {
  const { hostname, port } = new URL(url)
  const socket = connect({ port: Number(port), host: hostname, ...(localAddress ? { localAddress } : {}) })
  sockets.push(socket)
  socket.on('error', () => {})
  socket.on('data', () => {})
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
  const connected = new Promise<void>((resolve) => socket.once('connect', () => resolve())).then(() => {
    socket.write('GET /review HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ')
  })
  return { connected, closed }
}

async function waitUntil(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 15_000
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

describe('connection limits', () => {
  it('closes half-sent requests after the header timeout, so a legitimate request then succeeds', async () => {
    harness = await startHarness('slowloris', {
      limits: { maxConnections: 20, headersTimeoutMs: 300, requestTimeoutMs: 300 },
    })
    const url = harness.server.url
    const slow = Array.from({ length: 30 }, () => halfSentRequest(url))
    await Promise.all(slow.map(({ connected }) => connected))
    let closedCount = 0
    for (const { closed } of slow) void closed.then(() => (closedCount += 1))
    // Every one of them is cut: those over the cap at once, the rest by the timeout.
    await waitUntil(() => closedCount === slow.length, 'the server to close every half-sent request')
    const response = await harness.client.decisions.create({ question: 'Still answering?' })
    expect(response.status).toBe('pending')
  })

  it('answers 429 to long-polls beyond the per-key cap and serves the rest', async () => {
    harness = await startHarness('long-polls', { limits: { maxLongPollsPerKey: 2 } })
    const h = harness
    const { decisionId } = await h.client.decisions.create({ question: 'Wait for me?' })
    const held = [1, 2].map(() => h.client.decisions.get(decisionId, { wait: 30 }))
    // The two holds reach the server asynchronously: a third is tried until
    // both are in place (before that it would itself be held, for 1 s).
    let third: { status: number; json: Record<string, unknown> } = { status: 0, json: {} }
    for (let attempt = 0; attempt < 100 && third.status !== 429; attempt += 1) {
      third = await h.api('GET', `/decisions/${decisionId}?wait=1`)
    }
    expect(third.status).toBe(429)
    expect(third.json.code).toBe('too_many_waits')
    // A read without waiting is still served, and the held polls see the answer.
    expect((await h.api('GET', `/decisions/${decisionId}`)).status).toBe(200)
    await h.client.decisions.answer(decisionId, 'yes')
    for (const poll of held) expect(await poll).toMatchObject({ status: 'answered', value: 'yes' })
    // Released slots are reusable.
    expect((await h.api('GET', `/decisions/${decisionId}?wait=1`)).status).toBe(200)
  })

  it('lets decisions.ask() back off at the long-poll cap and still return each answer', async () => {
    harness = await startHarness('ask-backoff', { limits: { maxLongPollsPerKey: 1 } })
    const h = harness
    const asks = [0, 1, 2].map((index) =>
      h.client.decisions.ask({ question: `Ship batch ${index}?`, timeoutMs: 20_000 }),
    )
    let pending: string[] = []
    for (let attempt = 0; attempt < 200 && pending.length < 3; attempt += 1) {
      pending = (await h.client.decisions.list({ status: 'pending' })).decisions.flatMap((d) =>
        d.decisionId ? [d.decisionId] : [],
      )
    }
    for (const id of pending) await h.client.decisions.answer(id, 'yes')
    for (const result of await Promise.all(asks)) {
      expect(result).toMatchObject({ status: 'answered', value: 'yes', approved: true })
    }
  })

  it('answers 429 to event streams beyond the per-device cap, and frees the slot when one closes', async () => {
    harness = await startHarness('streams', { limits: { maxStreamsPerDevice: 2 } })
    const h = harness
    const device = await enrollDevice(h.client, 'customer_streams')
    const open = async () => {
      const controller = new AbortController()
      const response = await fetch(`${h.server.url}/review/events`, {
        headers: { cookie: device.cookie },
        signal: controller.signal,
      })
      return { response, controller }
    }
    const first = await open()
    const second = await open()
    expect([first.response.status, second.response.status]).toEqual([200, 200])
    const third = await open()
    expect(third.response.status).toBe(429)
    // Another device of the same customer has its own allowance.
    const other = await enrollDevice(h.client, 'customer_streams')
    const otherStream = await fetch(`${h.server.url}/review/events`, { headers: { cookie: other.cookie } })
    expect(otherStream.status).toBe(200)
    await otherStream.body?.cancel()
    first.controller.abort()
    let fourth = await open()
    for (let attempt = 0; attempt < 100 && fourth.response.status === 429; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 25))
      fourth = await open()
    }
    expect(fourth.response.status).toBe(200)
    for (const stream of [second, fourth]) stream.controller.abort()
  })

  it('keeps one client from holding every slot with half-open sockets (issue 19, item 8)', async () => {
    // Header timeout far beyond the test: only the per-client cap can let the other client in.
    harness = await startHarness('per-client', {
      limits: { maxConnections: 64, headersTimeoutMs: 60_000, requestTimeoutMs: 60_000 },
    })
    const url = harness.server.url
    // Another loopback address is another client to the server (Linux routes all of 127/8 to lo).
    const attack = Array.from({ length: 200 }, () => halfSentRequest(url, '127.0.0.2'))
    await Promise.all(attack.map(({ connected }) => connected))
    let closedCount = 0
    for (const { closed } of attack) void closed.then(() => (closedCount += 1))
    // All but the client's share of slow sockets are closed on accept.
    await waitUntil(() => closedCount >= 200 - 16, 'the sockets over the per-client share to be closed')
    const started = Date.now()
    const response = await harness.client.decisions.create({ question: 'Still answering?' })
    expect(response.status).toBe('pending')
    expect(Date.now() - started).toBeLessThan(2_000)
    expect(closedCount).toBeLessThan(200)
  })

  it('serves a burst of prompt requests from one client on their own sockets (a batch, many long-polls)', async () => {
    // Default limits: 32 slow sockets per client. 150 sockets all connected before any sends its
    // headers, then each sends them at once: none is slow, so every one is answered.
    harness = await startHarness('burst')
    const { hostname, port } = new URL(harness.server.url)
    const burst = Array.from({ length: 150 }, () => {
      const socket = connect({ port: Number(port), host: hostname })
      sockets.push(socket)
      socket.on('error', () => {})
      let reply = ''
      socket.on('data', (chunk) => (reply += chunk.toString()))
      const closed = new Promise<string>((resolve) => socket.once('close', () => resolve(reply)))
      const connected = new Promise<void>((resolve) => socket.once('connect', () => resolve()))
      return { socket, connected, closed }
    })
    await Promise.all(burst.map(({ connected }) => connected))
    for (const { socket } of burst)
      socket.write(`GET /review HTTP/1.1\r\nHost: ${hostname}\r\nConnection: close\r\n\r\n`)
    const replies = await Promise.all(burst.map(({ closed }) => closed))
    expect(replies.filter((reply) => !reply.startsWith('HTTP/1.1 ')).length).toBe(0)
  })
})
