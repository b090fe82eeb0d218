import { createHmac, timingSafeEqual } from 'node:crypto'
import { type DecisionCallback, decisionEventSchema } from './decision-callback.js'
import { PusharyValidationError } from './errors.js'
import { decisionTypeSchema, isApproved } from './question.js'

/**
 * Header carrying the callback signature (lowercase hex HMAC-SHA256 of the raw body).
 *
 * @example
 * const signature = request.headers.get(SIGNATURE_HEADER)
 */
export const SIGNATURE_HEADER = 'x-pushary-signature'

// A blank or whitespace-only secret is what an unset or mis-quoted
// environment variable gives: anyone can compute its HMAC, so it never
// signs or verifies anything.
function isUsableSecret(secret: unknown): secret is string {
  return typeof secret === 'string' && secret.trim() !== ''
}

/**
 * Signs a raw callback body with the webhook secret: lowercase hex HMAC-SHA256.
 * A blank or whitespace-only secret is refused (`invalid_options`, field `secret`).
 *
 * @example
 * const signature = signWebhookBody(JSON.stringify(body), webhookSecret)
 */
export function signWebhookBody(rawBody: string | Uint8Array, secret: string): string {
  if (!isUsableSecret(secret)) {
    throw new PusharyValidationError({
      code: 'invalid_options',
      operation: 'signWebhookBody',
      field: 'secret',
      message: 'the webhook secret must not be blank or whitespace only',
    })
  }
  return createHmac('sha256', secret).update(rawBody).digest('hex')
}

/**
 * Checks a callback signature in constant time. Sign the RAW body exactly as
 * received: re-serialised JSON differs byte for byte. False on an empty or
 * missing signature, a blank or whitespace-only secret, a length mismatch or
 * a non-hex signature.
 *
 * @example
 * if (!verifyWebhookSignature(rawBody, request.headers.get(SIGNATURE_HEADER), secret)) return new Response(null, { status: 401 })
 */
export function verifyWebhookSignature(
  rawBody: string | Uint8Array,
  signature: string | null | undefined,
  secret: string | null | undefined,
): boolean {
  if (typeof signature !== 'string' || signature.length === 0) return false
  if (!isUsableSecret(secret)) return false
  if (typeof rawBody !== 'string' && !(rawBody instanceof Uint8Array)) return false
  const expected = Buffer.from(signWebhookBody(rawBody, secret), 'utf8')
  const received = Buffer.from(signature, 'utf8')
  if (received.length !== expected.length) return false
  return timingSafeEqual(received, expected)
}

const STATUS_BY_EVENT = {
  'decision.answered': 'answered',
  'decision.expired': 'expired',
  'decision.cancelled': 'cancelled',
} as const

type TerminalStatus = DecisionCallback['status']

function isTerminalStatus(value: unknown): value is TerminalStatus {
  return value === 'answered' || value === 'expired' || value === 'cancelled'
}

/**
 * Parses a callback body WITHOUT verifying it. Accepts `answer` as a string or
 * null (expiry and cancellation carry none). Returns null on bad JSON, a
 * non-object, a missing `correlationId`, an `event` that contradicts `status`,
 * or an `answered` callback without an answer.
 *
 * @example
 * const callback = parseDecisionCallback(rawBody)
 * if (callback) await reconcile(callback.decisionId)
 */
export function parseDecisionCallback(rawBody: string | Uint8Array): DecisionCallback | null {
  let body: unknown
  try {
    body = JSON.parse(typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody).toString('utf8'))
  } catch {
    return null
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null
  const record = body as Record<string, unknown>
  const { correlationId } = record
  if (typeof correlationId !== 'string' || correlationId.length === 0) return null

  // `answer` is canonical and `value` an alias: older senders fill only one.
  const answer =
    typeof record.answer === 'string' ? record.answer : typeof record.value === 'string' ? record.value : null
  if (record.answer !== undefined && record.answer !== null && typeof record.answer !== 'string') return null

  const event = decisionEventSchema.safeParse(record.event)
  if (record.event !== undefined && !event.success) return null
  const eventStatus = event.success ? STATUS_BY_EVENT[event.data] : undefined
  if (record.status !== undefined && !isTerminalStatus(record.status)) return null
  const statedStatus = isTerminalStatus(record.status) ? record.status : undefined
  if (eventStatus && statedStatus && eventStatus !== statedStatus) return null
  const status: TerminalStatus | undefined =
    statedStatus ?? eventStatus ?? (answer !== null ? 'answered' : undefined)
  if (status === undefined) return null
  if (status === 'answered' && answer === null) return null

  const callback: DecisionCallback = {
    event: event.success ? event.data : `decision.${status}`,
    correlationId,
    decisionId:
      typeof record.decisionId === 'string' && record.decisionId.length > 0
        ? record.decisionId
        : correlationId,
    status,
    answer,
    value: typeof record.value === 'string' ? record.value : answer,
    answeredAt: typeof record.answeredAt === 'string' && record.answeredAt !== '' ? record.answeredAt : null,
  }
  if (typeof record.context === 'string') callback.context = record.context
  // Missing (or null) is the hosted callback, read as a confirm. Present but
  // not a known type (`"CONFIRM"`, `["confirm"]`) is surfaced as unknown:
  // dropping it would read a select or a mangled body as a confirm "yes".
  if (record.type !== undefined && record.type !== null) {
    const type = decisionTypeSchema.safeParse(record.type)
    if (type.success) callback.type = type.data
    else {
      callback.type = 'unknown'
      callback.rawType = typeof record.type === 'string' ? record.type : JSON.stringify(record.type)
    }
  }
  return callback
}

/**
 * Verifies, then parses a callback. Null on any failure, so the caller cannot
 * act on an unverified body by mistake. `approved` is fail-closed and based on
 * the callback only; re-read the decision before running anything.
 *
 * @example
 * const callback = resolvePusharyCallback(rawBody, request.headers.get(SIGNATURE_HEADER), secret)
 * if (!callback) return new Response('bad signature', { status: 401 })
 */
export function resolvePusharyCallback(
  rawBody: string | Uint8Array,
  signature: string | null | undefined,
  secret: string | null | undefined,
): (DecisionCallback & { approved: boolean }) | null {
  if (!verifyWebhookSignature(rawBody, signature, secret)) return null
  const callback = parseDecisionCallback(rawBody)
  if (!callback) return null
  // A callback without its question type may be a select whose option is
  // "yes"; only a stated confirm can read as approval (still only a hint).
  return {
    ...callback,
    approved: isApproved({ status: callback.status, type: callback.type, value: callback.answer }),
  }
}
