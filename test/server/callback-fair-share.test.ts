/**
 * Issue 38, finding 5: one customer's slow receivers must not delay
 * another's callbacks. Real receivers on loopback: 16 host:ports that accept
 * every request and never answer, 128 answered decisions calling them back,
 * and one healthy receiver of another customer. The healthy callback arrives
 * while the hanging ones still hang.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, expect, it } from 'vitest'
import {
  chooseFairly,
  type DueCallback,
  type FlightLoad,
  resolveFairShare,
} from '../../src/server/callback-fair-share.js'
import { type Harness, serviceFixture } from './service-harness.js'

const fixture = serviceFixture('callback-fair-share')

/** Generous bound for the healthy callback; the hanging sends are time-boxed at 10 s by default. */
const HEALTHY_WAIT_MS = 5_000

interface HangingReceiver {
  readonly url: string
  /** Requests received and still open (never answered). */
  open(): number
  /** Requests received in all. */
  seen(): number
  close(): Promise<void>
}

/** Accepts every callback and never answers it. */
async function startHangingReceiver(): Promise<HangingReceiver> {
  let open = 0
  let seen = 0
  const server: Server = createServer((request) => {
    open += 1
    seen += 1
    request.on('close', () => {
      open -= 1
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    open: () => open,
    seen: () => seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what} within ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** Creates and answers a decision (an answer the application relayed itself). */
async function selfAnswered(
  h: Harness,
  externalId: string,
  callbackUrl: string,
  index: number,
): Promise<string> {
  const created = await h.api('POST', '/decisions', { question: `Ship ${index}?`, externalId, callbackUrl })
  expect(created.status).toBeLessThan(300)
  const decisionId = String(created.json.decisionId)
  const answered = await h.api('POST', `/decisions/${decisionId}`, { answer: 'yes' })
  expect(answered.status).toBe(200)
  return decisionId
}

async function hangingFlood(customerOf: (index: number) => string) {
  const hanging = await Promise.all(Array.from({ length: 16 }, () => startHangingReceiver()))
  const healthy = await fixture.receive()
  const h = await fixture.start()
  try {
    for (let index = 0; index < 128; index += 1) {
      await selfAnswered(h, customerOf(index), (hanging[index % 16] as HangingReceiver).url, index)
    }
    const openAtHanging = () => hanging.reduce((sum, receiver) => sum + receiver.open(), 0)
    // The flood is in flight before customer B's decision is answered.
    await until(() => openAtHanging() >= 16, HEALTHY_WAIT_MS, 'hanging receivers were not called')
    const b = await selfAnswered(h, 'customer_b', healthy.url, 999)

    await healthy.waitFor(1, HEALTHY_WAIT_MS)
    expect(
      healthy.received.map(
        (callback) => (JSON.parse(callback.rawBody) as { correlationId: string }).correlationId,
      ),
    ).toEqual([b])
    // …while the others still hang: every request they received is open, unanswered.
    const seen = hanging.reduce((sum, receiver) => sum + receiver.seen(), 0)
    expect(openAtHanging()).toBe(seen)
    expect(seen).toBeGreaterThanOrEqual(16)
    return { seen }
  } finally {
    await h.close()
    await Promise.all(hanging.map((receiver) => receiver.close()))
  }
}

describe('the outbox shares its slots fairly', () => {
  it('delivers customer B’s callback to a healthy receiver while one customer’s 128 callbacks hang on 16 receivers', async () => {
    const { seen } = await hangingFlood(() => 'customer_a')
    // One customer holds at most a quarter of the 64 slots.
    expect(seen).toBeLessThanOrEqual(16)
  }, 60_000)

  it('delivers it as well when the 128 hanging callbacks belong to 128 different customers', async () => {
    const { seen } = await hangingFlood((index) => `customer_${index}`)
    // The reserve of 16 slots stays free for a receiver with nothing in flight.
    expect(seen).toBeLessThanOrEqual(48)
  }, 60_000)
})

describe('the slot choice (pure)', () => {
  const limits = resolveFairShare({ maxConcurrency: 64, perReceiver: 4 })
  const idle: FlightLoad = { total: 0, receivers: new Map(), customers: new Map(), failing: () => false }
  const due = (count: number, receiverOf: (i: number) => string, customerOf: (i: number) => string) =>
    Array.from(
      { length: count },
      (_, index): DueCallback => ({
        deliveryId: index + 1,
        receiver: receiverOf(index),
        customer: customerOf(index),
        dueMs: index,
      }),
    )

  it('never exceeds a receiver’s, a customer’s or the global cap, and keeps the reserve for idle receivers', () => {
    const chosen = chooseFairly(
      due(
        500,
        (i) => `hang-${i % 40}:80`,
        (i) => `c${i % 7}`,
      ),
      idle,
      limits,
    )
    const by = (key: (entry: DueCallback) => string) => {
      const counts = new Map<string, number>()
      for (const entry of chosen) counts.set(key(entry), (counts.get(key(entry)) ?? 0) + 1)
      return Math.max(...counts.values())
    }
    expect(chosen.length).toBeLessThanOrEqual(64)
    expect(by((entry) => entry.receiver)).toBeLessThanOrEqual(4)
    expect(by((entry) => entry.customer)).toBeLessThanOrEqual(16)
  })

  it('starts a late, idle receiver first even when older rows of busy receivers are due', () => {
    const busy: FlightLoad = {
      total: 48,
      receivers: new Map(Array.from({ length: 16 }, (_, i) => [`hang-${i}:80`, 3] as const)),
      customers: new Map(Array.from({ length: 16 }, (_, i) => [`c${i}`, 3] as const)),
      failing: () => false,
    }
    const waiting = due(
      64,
      (i) => `hang-${i % 16}:80`,
      (i) => `c${i % 16}`,
    )
    const late: DueCallback = { deliveryId: 1_000, receiver: 'healthy:80', customer: 'b', dueMs: 10_000 }
    expect(chooseFairly([...waiting, late], busy, limits).map((entry) => entry.deliveryId)).toEqual([1_000])
  })

  it('gives a receiver whose last attempt failed one slot, and none of the reserve', () => {
    const failing: FlightLoad = { ...idle, failing: (receiver) => receiver === 'down:80' }
    const chosen = chooseFairly(
      due(
        10,
        () => 'down:80',
        (i) => `c${i}`,
      ),
      failing,
      limits,
    )
    expect(chosen).toHaveLength(1)
    const full: FlightLoad = { ...failing, total: 48 }
    expect(
      chooseFairly(
        due(
          1,
          () => 'down:80',
          () => 'c',
        ),
        full,
        limits,
      ),
    ).toEqual([])
  })
})
