/**
 * Delivers queued callbacks. Rows are written by the same transaction that
 * settles a decision; this worker POSTs them, signed with the current webhook
 * secret, retrying with exponential backoff up to a bounded number of
 * attempts. Delivery is at-least-once: a crash between the receiver's 2xx and
 * our write sends the same body again after restart, which receivers must
 * tolerate (they re-read the decision anyway).
 */
import type { Client, Row } from '@libsql/client'
import { SIGNATURE_HEADER, signWebhookBody } from '../pushary/callbacks.js'
import { isStorableText } from '../pushary/text-rules.js'
import { exactText } from './exact-text.js'

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
  /** Deliveries in flight at once to one host (`host:port`), default 4. */
  perHostConcurrency?: number
  /** Deliveries in flight at once in total, default 64. */
  maxConcurrency?: number
}

/**
 * One delivery as `GET /decisions/:id` reports it.
 *
 * @example
 * const failed = deliveries.filter((delivery: CallbackDelivery) => delivery.state === 'failed')
 */
export interface CallbackDelivery {
  deliveryId: number
  event: string
  url: string
  state: 'pending' | 'delivered' | 'failed'
  attempts: number
  nextAttemptAt: string | null
  lastAttemptAt: string | null
  lastStatusCode: number | null
  lastError: string | null
  deliveredAt: string | null
  history: Array<{
    attempt: number
    at: string
    statusCode: number | null
    error: string | null
    ok: boolean
  }>
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
// wait for hosts that are at their cap.
const SCAN_MAX_PAGES = 50

function hostOf(url: string): string {
  try {
    return new URL(url).host.toLowerCase()
  } catch {
    return ''
  }
}

function n(row: Row, column: string): number | null {
  const value = row[column]
  return typeof value === 'number' ? value : typeof value === 'bigint' ? Number(value) : null
}

function s(row: Row, column: string): string | null {
  const value = row[column]
  return typeof value === 'string' ? value : null
}

/**
 * The URL with any `user:password@` replaced. New decisions cannot carry
 * credentials (the create schema refuses them), but a row written by an older
 * version may, and neither the delivery list nor an error may echo them.
 *
 * @example
 * redactUrl('https://u:p@example.com/cb') // 'https://***@example.com/cb'
 */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.username === '' && parsed.password === '') return url
    parsed.username = '***'
    parsed.password = ''
    return parsed.href
  } catch {
    return url.replace(/\/\/[^/@]*@/, '//***@')
  }
}

function hasCredentials(url: string): boolean {
  try {
    const parsed = new URL(url)
    return parsed.username !== '' || parsed.password !== ''
  } catch {
    return false
  }
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
  const maxAttempts = Math.max(1, deps.retry?.maxAttempts ?? 6)
  const baseDelayMs = Math.max(1, deps.retry?.baseDelayMs ?? 1_000)
  const maxDelayMs = Math.max(baseDelayMs, deps.retry?.maxDelayMs ?? 60_000)
  const timeoutMs = Math.max(1, deps.retry?.timeoutMs ?? 10_000)
  const scanIntervalMs = Math.max(10, deps.retry?.scanIntervalMs ?? 1_000)
  const perHostConcurrency = Math.max(1, deps.retry?.perHostConcurrency ?? 4)
  const maxConcurrency = Math.max(1, deps.retry?.maxConcurrency ?? 64)
  const report =
    deps.onError ?? ((error: unknown) => console.error('Pushary dev server: callback worker', error))

  const inFlight = new Map<number, Promise<void>>()
  const perHost = new Map<string, number>()
  const closing = new AbortController()
  let scanning: Promise<void> | null = null
  let rescan = false
  let closed = false

  const attempt = async (row: Row): Promise<void> => {
    const deliveryId = n(row, 'delivery_id') ?? 0
    const attemptNo = (n(row, 'attempts') ?? 0) + 1
    const body = s(row, 'body') ?? ''
    // Read as stored bytes: a NUL (written by an older version) would otherwise
    // cut the URL and deliver the answer to a different path.
    const url = exactText(row, 'exact_url') ?? ''
    let statusCode: number | null = null
    let error: string | null = null
    try {
      // fetch refuses such URLs with a message quoting them; say why instead.
      if (hasCredentials(url)) throw new Error('the callback URL contains credentials (user:password@)')
      if (!isStorableText(url)) throw new Error('the callback URL contains NUL or unpaired surrogates')
      // Checked again here: a name may resolve elsewhere than at create, and
      // rows written by an older version were never checked.
      const refused = deps.checkUrl ? await deps.checkUrl(url) : null
      if (refused !== null) throw new Error(refused)
      const secret = await deps.webhookSecret()
      const response = await deps.fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          [SIGNATURE_HEADER]: signWebhookBody(body, secret),
          'x-pushary-event': s(row, 'event') ?? '',
          'x-pushary-delivery': String(deliveryId),
        },
        body,
        redirect: 'manual',
        signal: AbortSignal.any([closing.signal, AbortSignal.timeout(timeoutMs)]),
      })
      statusCode = response.status
      await response.body?.cancel().catch(() => {})
      if (statusCode < 200 || statusCode >= 300) error = `HTTP ${statusCode}`
    } catch (cause) {
      // Shutting down is not the receiver's fault: leave the row due.
      if (closing.signal.aborted) return
      error = (cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause))
        .split(url)
        .join(redactUrl(url))
    }
    const nowMs = deps.now()
    const at = new Date(nowMs).toISOString()
    const ok = error === null
    const delay = Math.min(maxDelayMs, baseDelayMs * 2 ** (attemptNo - 1))
    const state = ok ? 'delivered' : attemptNo >= maxAttempts ? 'failed' : 'pending'
    await deps.db.batch(
      [
        {
          sql: `INSERT OR REPLACE INTO callback_attempts (delivery_id, attempt, at, status_code, error, ok)
                VALUES (?, ?, ?, ?, ?, ?)`,
          args: [deliveryId, attemptNo, at, statusCode, error, ok ? 1 : 0],
        },
        {
          sql: `UPDATE callback_deliveries SET state = ?, attempts = ?, next_attempt_ms = ?, last_attempt_at = ?,
                last_status_code = ?, last_error = ?, delivered_at = ? WHERE delivery_id = ?`,
          args: [state, attemptNo, nowMs + delay, at, statusCode, error, ok ? at : null, deliveryId],
        },
      ],
      'write',
    )
  }

  // Each receiver is served on its own: rows in flight, and rows of a host
  // already at its cap, are passed over, so one slow receiver never holds
  // back another's due callbacks.
  const start = (row: Row): void => {
    const id = n(row, 'delivery_id') ?? 0
    const host = hostOf(exactText(row, 'exact_url') ?? '')
    perHost.set(host, (perHost.get(host) ?? 0) + 1)
    const run = attempt(row)
      .catch(report)
      .finally(() => {
        inFlight.delete(id)
        const left = (perHost.get(host) ?? 1) - 1
        if (left <= 0) perHost.delete(host)
        else perHost.set(host, left)
        // A freed slot may let a waiting row of this host start now.
        wake()
      })
    inFlight.set(id, run)
  }

  const scan = async (): Promise<void> => {
    do {
      rescan = false
      const nowMs = deps.now()
      let after: [number, number] = [-1, 0]
      for (let page = 0; page < SCAN_MAX_PAGES && !closed && inFlight.size < maxConcurrency; page += 1) {
        const due = await deps.db.execute({
          sql: `SELECT *, CAST(url AS BLOB) AS exact_url FROM callback_deliveries
                WHERE state = 'pending' AND next_attempt_ms <= ?
                  AND (next_attempt_ms > ? OR (next_attempt_ms = ? AND delivery_id > ?))
                ORDER BY next_attempt_ms ASC, delivery_id ASC LIMIT ?`,
          args: [nowMs, after[0], after[0], after[1], SCAN_PAGE],
        })
        for (const row of due.rows) {
          const id = n(row, 'delivery_id') ?? 0
          after = [n(row, 'next_attempt_ms') ?? 0, id]
          if (closed || inFlight.size >= maxConcurrency) break
          if (inFlight.has(id)) continue
          if ((perHost.get(hostOf(exactText(row, 'exact_url') ?? '')) ?? 0) >= perHostConcurrency) continue
          start(row)
        }
        if (due.rows.length < SCAN_PAGE) break
      }
    } while (rescan && !closed)
  }

  const wake = (): void => {
    if (closed) return
    if (scanning !== null) {
      rescan = true
      return
    }
    scanning = scan()
      .catch(report)
      .finally(() => {
        scanning = null
      })
  }

  const timer = setInterval(wake, scanIntervalMs)
  timer.unref()
  wake()

  return {
    wake,
    async deliveriesFor(decisionId) {
      const rows = await deps.db.execute({
        sql: 'SELECT * FROM callback_deliveries WHERE decision_id = ? ORDER BY delivery_id ASC',
        args: [decisionId],
      })
      const deliveries: CallbackDelivery[] = []
      for (const row of rows.rows) {
        const deliveryId = n(row, 'delivery_id') ?? 0
        const attempts = await deps.db.execute({
          sql: 'SELECT * FROM callback_attempts WHERE delivery_id = ? ORDER BY attempt ASC',
          args: [deliveryId],
        })
        const state = s(row, 'state') as CallbackDelivery['state']
        deliveries.push({
          deliveryId,
          event: s(row, 'event') ?? '',
          url: redactUrl(s(row, 'url') ?? ''),
          state,
          attempts: n(row, 'attempts') ?? 0,
          nextAttemptAt: state === 'pending' ? new Date(n(row, 'next_attempt_ms') ?? 0).toISOString() : null,
          lastAttemptAt: s(row, 'last_attempt_at'),
          lastStatusCode: n(row, 'last_status_code'),
          lastError: s(row, 'last_error'),
          deliveredAt: s(row, 'delivered_at'),
          history: attempts.rows.map((a) => ({
            attempt: n(a, 'attempt') ?? 0,
            at: s(a, 'at') ?? '',
            statusCode: n(a, 'status_code'),
            error: s(a, 'error'),
            ok: n(a, 'ok') === 1,
          })),
        })
      }
      return deliveries
    },
    async close() {
      closed = true
      clearInterval(timer)
      closing.abort()
      await scanning
      await Promise.allSettled([...inFlight.values()])
    },
  }
}
