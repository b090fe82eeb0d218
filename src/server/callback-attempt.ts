/**
 * One delivery attempt of a queued callback and its record: the signed POST,
 * bounded in time as a whole (the address check, which may resolve a name,
 * included), then the attempt row and the delivery's next state in one
 * batch. Shutting down is not the receiver's fault: an attempt cut short by
 * `close()` records nothing and leaves the row due.
 */
import type { Client, Row } from '@libsql/client'
import { SIGNATURE_HEADER, signWebhookBody } from '../pushary/callbacks.js'
import { isStorableText } from '../pushary/text-rules.js'
import { exactText } from './exact-text.js'

/** What an attempt needs from the outbox. */
export interface AttemptDeps {
  readonly db: Client
  readonly fetch: typeof fetch
  readonly webhookSecret: () => Promise<string>
  readonly now: () => number
  /** Null when the URL may be called now, else why not. */
  readonly checkUrl?: ((url: string) => Promise<string | null>) | undefined
  /** Aborted by `close()`. */
  readonly closing: AbortSignal
  readonly timeoutMs: number
  readonly maxAttempts: number
  readonly baseDelayMs: number
  readonly maxDelayMs: number
}

/** How an attempt ended: `ok`, `failed` (counted), or `closed` (nothing recorded). */
export type AttemptResult = 'ok' | 'failed' | 'closed'

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

/** A number column (SQLite may hand back a bigint). */
export function numberOf(row: Row, column: string): number | null {
  const value = row[column]
  return typeof value === 'number' ? value : typeof value === 'bigint' ? Number(value) : null
}

/** A text column. */
export function textOf(row: Row, column: string): string | null {
  const value = row[column]
  return typeof value === 'string' ? value : null
}

/** Resolves with `promise`, or rejects with the signal's reason once it aborts. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason)
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason)
    signal.addEventListener('abort', abort, { once: true })
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort))
  })
}

async function send(row: Row, url: string, deps: AttemptDeps, signal: AbortSignal): Promise<number> {
  // fetch refuses such URLs with a message quoting them; say why instead.
  if (hasCredentials(url)) throw new Error('the callback URL contains credentials (user:password@)')
  if (!isStorableText(url)) throw new Error('the callback URL contains NUL or unpaired surrogates')
  // Checked again here: a name may resolve elsewhere than at create, and
  // rows written by an older version were never checked.
  const refused = deps.checkUrl ? await untilAborted(deps.checkUrl(url), signal) : null
  if (refused !== null) throw new Error(refused)
  const body = textOf(row, 'body') ?? ''
  const secret = await deps.webhookSecret()
  const response = await deps.fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      [SIGNATURE_HEADER]: signWebhookBody(body, secret),
      'x-pushary-event': textOf(row, 'event') ?? '',
      'x-pushary-delivery': String(numberOf(row, 'delivery_id') ?? 0),
    },
    body,
    redirect: 'manual',
    signal,
  })
  await response.body?.cancel().catch(() => {})
  return response.status
}

/**
 * Sends one queued callback (a row with `delivery_id`, `attempts`, `body`,
 * `event` and `exact_url`, the URL read as stored bytes) and records the
 * attempt.
 *
 * @example
 * const result = await attemptDelivery(row, deps)
 */
export async function attemptDelivery(row: Row, deps: AttemptDeps): Promise<AttemptResult> {
  const deliveryId = numberOf(row, 'delivery_id') ?? 0
  const attemptNo = (numberOf(row, 'attempts') ?? 0) + 1
  // Read as stored bytes: a NUL (written by an older version) would otherwise
  // cut the URL and deliver the answer to a different path.
  const url = exactText(row, 'exact_url') ?? ''
  let statusCode: number | null = null
  let error: string | null = null
  try {
    statusCode = await send(
      row,
      url,
      deps,
      AbortSignal.any([deps.closing, AbortSignal.timeout(deps.timeoutMs)]),
    )
    if (statusCode < 200 || statusCode >= 300) error = `HTTP ${statusCode}`
  } catch (cause) {
    if (deps.closing.aborted) return 'closed'
    error = (cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause))
      .split(url)
      .join(redactUrl(url))
  }
  const nowMs = deps.now()
  const at = new Date(nowMs).toISOString()
  const ok = error === null
  const delay = Math.min(deps.maxDelayMs, deps.baseDelayMs * 2 ** (attemptNo - 1))
  const state = ok ? 'delivered' : attemptNo >= deps.maxAttempts ? 'failed' : 'pending'
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
  return ok ? 'ok' : 'failed'
}
