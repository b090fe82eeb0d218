/**
 * Reading a callback request before anything trusts it. An unsigned body is
 * attacker-sized: reading it whole (`request.text()`) lets anyone make the
 * host buffer hundreds of megabytes before the signature check refuses it.
 * So the body is read with a byte limit (a declared `Content-Length` above it
 * is refused without reading at all), and only then verified and parsed.
 */
import { resolvePusharyCallback, SIGNATURE_HEADER, verifyWebhookSignature } from './callbacks.js'
import type { DecisionCallback } from './decision-callback.js'
import { PusharyValidationError } from './errors.js'

/**
 * Default cap of a callback body: 64 KiB. A real callback is well under 4 KiB
 * (the context field, the largest, is at most 2,000 characters).
 *
 * @example
 * createPusharyDispatcher({ mastra, client, store, webhookSecret, callbackMaxBytes: PUSHARY_CALLBACK_MAX_BYTES })
 */
export const PUSHARY_CALLBACK_MAX_BYTES = 64 * 1024

/** What reading a capped body found. */
export type CallbackBodyRead = { status: 'ok'; raw: string } | { status: 'too_large'; maxBytes: number }

/**
 * The cap to use: `undefined` means the default; anything but a positive
 * integer is refused (typed error naming `field`).
 *
 * @example
 * const maxBytes = checkedCallbackMaxBytes(options.callbackMaxBytes, 'createPusharyDispatcher', 'callbackMaxBytes')
 */
export function checkedCallbackMaxBytes(value: unknown, operation: string, field: string): number {
  if (value === undefined) return PUSHARY_CALLBACK_MAX_BYTES
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new PusharyValidationError({
      code: 'invalid_options',
      operation,
      field,
      message: 'must be a positive whole number of bytes',
    })
  }
  return value
}

/**
 * Reads a request body as UTF-8 text, stopping as soon as it passes
 * `maxBytes` (the rest is never read, and the stream is cancelled).
 *
 * @example
 * const read = await readCallbackBody(request, 64 * 1024)
 * if (read.status === 'too_large') return new Response(null, { status: 413 })
 */
export async function readCallbackBody(request: Request, maxBytes: number): Promise<CallbackBodyRead> {
  const declared = request.headers.get('content-length')
  if (declared !== null && /^\d+$/.test(declared) && Number(declared) > maxBytes) {
    await request.body?.cancel().catch(() => {})
    return { status: 'too_large', maxBytes }
  }
  if (request.body === null) return { status: 'ok', raw: '' }
  const reader = request.body.getReader()
  const chunks: Uint8Array[] = []
  let total = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    total += value.byteLength
    if (total > maxBytes) {
      await reader.cancel().catch(() => {})
      return { status: 'too_large', maxBytes }
    }
    chunks.push(value)
  }
  return { status: 'ok', raw: Buffer.concat(chunks).toString('utf8') }
}

/**
 * What {@link readPusharyCallback} found: a verified callback, or the HTTP
 * status to answer with and a stable reason.
 *
 * @example
 * const read: PusharyCallbackRead = await readPusharyCallback(request, secret)
 */
export type PusharyCallbackRead =
  | { status: 'verified'; raw: string; callback: DecisionCallback & { approved: boolean } }
  | {
      status: 'rejected'
      httpStatus: 400 | 401 | 413
      reason: 'body_too_large' | 'invalid_signature' | 'invalid_callback_body'
    }

/**
 * {@link resolvePusharyCallback} for a Fetch `Request` (Next.js, Hono, Bun,
 * Deno, Node 18+ via `new Request`): reads the body with a cap (413 before
 * any parsing), verifies the signature (401), then parses (400). As with
 * `resolvePusharyCallback`, `approved` is only a hint: re-read the decision
 * before running anything.
 *
 * @example
 * export async function POST(request: Request) {
 *   const read = await readPusharyCallback(request, process.env.PUSHARY_WEBHOOK_SECRET)
 *   if (read.status === 'rejected') return new Response(read.reason, { status: read.httpStatus })
 *   await resumePusharyAgentReview(config, { agent, agentId, externalId, decisionId: read.callback.decisionId, store })
 *   return new Response('ok')
 * }
 */
export async function readPusharyCallback(
  request: Request,
  secret: string | null | undefined,
  options: { maxBytes?: number | undefined } = {},
): Promise<PusharyCallbackRead> {
  const maxBytes = checkedCallbackMaxBytes(options.maxBytes, 'readPusharyCallback', 'maxBytes')
  const read = await readCallbackBody(request, maxBytes)
  if (read.status === 'too_large') return { status: 'rejected', httpStatus: 413, reason: 'body_too_large' }
  const signature = request.headers.get(SIGNATURE_HEADER)
  if (!verifyWebhookSignature(read.raw, signature, secret)) {
    return { status: 'rejected', httpStatus: 401, reason: 'invalid_signature' }
  }
  const callback = resolvePusharyCallback(read.raw, signature, secret)
  if (callback === null) return { status: 'rejected', httpStatus: 400, reason: 'invalid_callback_body' }
  return { status: 'verified', raw: read.raw, callback }
}
