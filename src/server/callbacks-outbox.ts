/**
 * Delivers queued callbacks. Rows are written by the same transaction that
 * settles a decision; this worker POSTs them, signed with the current webhook
 * secret, retrying with exponential backoff up to a bounded number of
 * attempts. Delivery is at-least-once: a crash between the receiver's 2xx and
 * our write sends the same body again after restart, which receivers must
 * tolerate (they re-read the decision anyway).
 */
import type { Client } from '@libsql/client'
import { type AttemptDeps, type AttemptResult, attemptDelivery, numberOf } from './callback-attempt.js'
import { type CallbackDelivery, readDeliveries } from './callback-deliveries.js'
import {
  chooseFairly,
  type DueCallback,
  type FairShareLimits,
  type FlightLoad,
  resolveFairShare,
} from './callback-fair-share.js'
import { exactText } from './exact-text.js'

export { redactUrl } from './callback-attempt.js'
export type { CallbackDelivery }

/**
 * Retry policy for callback delivery.
 *
 * @example
 * await createPusharyDevServer({ callbackRetry: { maxAttempts: 5, baseDelayMs: 500 } })
 */
export interface CallbackRetryOptions {
  /** Total attempts including the first (default 6). */
  maxAttempts?: number
  /** Delay before the second attempt; doubles each time (default 1 000 ms). */
  baseDelayMs?: number
  /** Upper bound of one delay (default 60 000 ms). */
  maxDelayMs?: number
  /** Per-attempt request timeout (default 10 000 ms). */
  timeoutMs?: number
  /** How often due rows are scanned besides the wake-up after enqueue (default 1 000 ms). */
  scanIntervalMs?: number
  /** Deliveries in flight at once to one host (`host:port`), default 4 (1 while its last attempt failed). */
  perHostConcurrency?: number
  /** Deliveries in flight at once for one customer (`externalId`), default a quarter of `maxConcurrency`. */
  perCustomerConcurrency?: number
  /**
   * Deliveries in flight at once in total, default 64. The last quarter is
   * kept for receivers with nothing in flight (`callback-fair-share.ts`).
   */
  maxConcurrency?: number
}

/** The delivery worker. */
export interface CallbackOutbox {
  /** Delivers due rows now (called right after a transition commits). */
  wake(): void
  deliveriesFor(decisionId: string): Promise<CallbackDelivery[]>
  /** Stops the timer and aborts in-flight requests without counting them as attempts. */
  close(): Promise<void>
}

interface OutboxDeps {
  db: Client
  fetch: typeof fetch
  webhookSecret: () => Promise<string>
  now: () => number
  retry?: CallbackRetryOptions
  onError?: (error: unknown) => void
  /** Null when the URL may be called now, else why not; checked before every attempt. */
  checkUrl?: (url: string) => Promise<string | null>
}

// Rows read per page while looking for deliveries that may start.
const SCAN_PAGE = 100
// Pages read per scan: bounds the work of one scan when thousands of rows
// wait for receivers that are at their cap.
const SCAN_MAX_PAGES = 50
// Receivers remembered as failing; the oldest is forgotten beyond this, so
// a flood of distinct hosts cannot grow the map without bound.
const FAILING_MAX = 10_000

/** The worker's state, shared by its named functions. */
interface Outbox {
  readonly db: Client
  readonly attempt: AttemptDeps
  readonly fair: FairShareLimits
  readonly report: (error: unknown) => void
  readonly closing: AbortController
  readonly inFlight: Map<number, Promise<void>>
  readonly receivers: Map<string, number>
  readonly customers: Map<string, number>
  readonly failing: Set<string>
  scanning: Promise<void> | null
  rescan: boolean
  closed: boolean
}

function receiverOf(url: string): string {
  try {
    return new URL(url).host.toLowerCase()
  } catch {
    return ''
  }
}

function count(map: Map<string, number>, key: string, by: 1 | -1): void {
  const next = (map.get(key) ?? 0) + by
  if (next <= 0) map.delete(key)
  else map.set(key, next)
}

function load(outbox: Outbox): FlightLoad {
  return {
    total: outbox.inFlight.size,
    receivers: outbox.receivers,
    customers: outbox.customers,
    failing: (receiver) => outbox.failing.has(receiver),
  }
}

function noteResult(outbox: Outbox, receiver: string, result: AttemptResult): void {
  if (result === 'ok') outbox.failing.delete(receiver)
  if (result !== 'failed') return
  outbox.failing.delete(receiver)
  outbox.failing.add(receiver)
  if (outbox.failing.size > FAILING_MAX) {
    const oldest = outbox.failing.values().next().value
    if (oldest !== undefined) outbox.failing.delete(oldest)
  }
}

/**
 * The due rows that could start now, oldest due first, by keyset pages: rows
 * in flight are passed over, and a receiver or customer keeps no more rows
 * than it has free slots, so one slow receiver's backlog never hides
 * another's due callback.
 */
async function readDue(outbox: Outbox, nowMs: number): Promise<DueCallback[]> {
  const due: DueCallback[] = []
  const perReceiver = new Map(outbox.receivers)
  const perCustomer = new Map(outbox.customers)
  let after: [number, number] = [-1, 0]
  for (let page = 0; page < SCAN_MAX_PAGES && !outbox.closed; page += 1) {
    const rows = await outbox.db.execute({
      sql: `SELECT c.delivery_id, c.next_attempt_ms, CAST(c.url AS BLOB) AS exact_url,
                   (SELECT d.external_id FROM decisions d WHERE d.decision_id = c.decision_id) AS customer
            FROM callback_deliveries c
            WHERE c.state = 'pending' AND c.next_attempt_ms <= ?
              AND (c.next_attempt_ms > ? OR (c.next_attempt_ms = ? AND c.delivery_id > ?))
            ORDER BY c.next_attempt_ms ASC, c.delivery_id ASC LIMIT ?`,
      args: [nowMs, after[0], after[0], after[1], SCAN_PAGE],
    })
    for (const row of rows.rows) {
      const deliveryId = numberOf(row, 'delivery_id') ?? 0
      const dueMs = numberOf(row, 'next_attempt_ms') ?? 0
      after = [dueMs, deliveryId]
      if (outbox.inFlight.has(deliveryId)) continue
      const receiver = receiverOf(exactText(row, 'exact_url') ?? '')
      const customer = typeof row.customer === 'string' ? row.customer : ''
      if ((perReceiver.get(receiver) ?? 0) >= outbox.fair.perReceiver) continue
      if ((perCustomer.get(customer) ?? 0) >= outbox.fair.perCustomer) continue
      count(perReceiver, receiver, 1)
      count(perCustomer, customer, 1)
      due.push({ deliveryId, receiver, customer, dueMs })
    }
    if (rows.rows.length < SCAN_PAGE) break
  }
  return due
}

/** Runs one chosen delivery; its slot is counted until the attempt is recorded. */
function start(outbox: Outbox, entry: DueCallback): void {
  count(outbox.receivers, entry.receiver, 1)
  count(outbox.customers, entry.customer, 1)
  const run = (async () => {
    const rows = await outbox.db.execute({
      sql: `SELECT delivery_id, attempts, body, event, CAST(url AS BLOB) AS exact_url
            FROM callback_deliveries WHERE delivery_id = ? AND state = 'pending'`,
      args: [entry.deliveryId],
    })
    const row = rows.rows[0]
    if (row === undefined) return
    noteResult(outbox, entry.receiver, await attemptDelivery(row, outbox.attempt))
  })()
    .catch(outbox.report)
    .finally(() => {
      outbox.inFlight.delete(entry.deliveryId)
      count(outbox.receivers, entry.receiver, -1)
      count(outbox.customers, entry.customer, -1)
      // A freed slot may let a waiting row start now.
      wake(outbox)
    })
  outbox.inFlight.set(entry.deliveryId, run)
}

async function scan(outbox: Outbox): Promise<void> {
  do {
    outbox.rescan = false
    if (outbox.inFlight.size >= outbox.fair.maxConcurrency) return
    const due = await readDue(outbox, outbox.attempt.now())
    if (outbox.closed) return
    for (const entry of chooseFairly(due, load(outbox), outbox.fair)) {
      if (!outbox.inFlight.has(entry.deliveryId)) start(outbox, entry)
    }
  } while (outbox.rescan && !outbox.closed)
}

function wake(outbox: Outbox): void {
  if (outbox.closed) return
  if (outbox.scanning !== null) {
    outbox.rescan = true
    return
  }
  outbox.scanning = scan(outbox)
    .catch(outbox.report)
    .finally(() => {
      outbox.scanning = null
    })
}

/**
 * Starts the callback delivery worker.
 *
 * @example
 * const outbox = createCallbackOutbox({ db, fetch, webhookSecret: () => secret, now: Date.now })
 * outbox.wake()
 * await outbox.close()
 */
export function createCallbackOutbox(deps: OutboxDeps): CallbackOutbox {
  const retry = deps.retry ?? {}
  const baseDelayMs = Math.max(1, retry.baseDelayMs ?? 1_000)
  const closing = new AbortController()
  const outbox: Outbox = {
    db: deps.db,
    attempt: {
      db: deps.db,
      fetch: deps.fetch,
      webhookSecret: deps.webhookSecret,
      now: deps.now,
      checkUrl: deps.checkUrl,
      closing: closing.signal,
      timeoutMs: Math.max(1, retry.timeoutMs ?? 10_000),
      maxAttempts: Math.max(1, retry.maxAttempts ?? 6),
      baseDelayMs,
      maxDelayMs: Math.max(baseDelayMs, retry.maxDelayMs ?? 60_000),
    },
    fair: resolveFairShare({
      maxConcurrency: Math.max(1, retry.maxConcurrency ?? 64),
      perReceiver: Math.max(1, retry.perHostConcurrency ?? 4),
      perCustomer: retry.perCustomerConcurrency,
    }),
    report: deps.onError ?? (() => {}),
    closing,
    inFlight: new Map(),
    receivers: new Map(),
    customers: new Map(),
    failing: new Set(),
    scanning: null,
    rescan: false,
    closed: false,
  }
  const timer = setInterval(() => wake(outbox), Math.max(10, retry.scanIntervalMs ?? 1_000))
  timer.unref()
  wake(outbox)

  return {
    wake: () => wake(outbox),
    deliveriesFor: (decisionId) => readDeliveries(deps.db, decisionId),
    async close() {
      outbox.closed = true
      clearInterval(timer)
      closing.abort()
      await outbox.scanning
      await Promise.allSettled([...outbox.inFlight.values()])
    },
  }
}
