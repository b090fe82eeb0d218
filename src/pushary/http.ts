import type { z } from 'zod/v4'
import {
  PusharyAbortError,
  PusharyApiError,
  PusharyNetworkError,
  PusharyTimeoutError,
  PusharyValidationError,
} from './errors.js'

/**
 * The `fetch` signature the client needs; the global `fetch` satisfies it.
 *
 * @example
 * const fetchImpl: PusharyFetch = globalThis.fetch
 */
export type PusharyFetch = (input: string, init: RequestInit) => Promise<Response>

/**
 * One request, described declaratively so every endpoint shares one error path.
 *
 * @example
 * await transport.send({ operation: 'webhookSecret.get', method: 'GET', path: '/webhook-secret', schema: webhookSecretSchema })
 */
export interface PusharyRequest<Schema extends z.ZodType> {
  operation: string
  method: 'GET' | 'POST' | 'DELETE'
  path: string
  query?: Record<string, string | number | boolean | null | undefined>
  body?: unknown
  schema: Schema
  signal?: AbortSignal | undefined
  /** Overrides the client's request timeout, e.g. to outlast a long-poll. */
  timeoutMs?: number
}

/**
 * Sends JSON requests to the decision service and turns every failure into a
 * typed error. Internal; the public surface is `createPusharyClient`.
 *
 * @example
 * const transport = createPusharyTransport({ apiKey, baseUrl, requestTimeoutMs: 65_000, fetch })
 */
export interface PusharyTransport {
  send<Schema extends z.ZodType>(request: PusharyRequest<Schema>): Promise<z.output<Schema>>
}

/**
 * Builds the transport. Configuration is already validated by the client.
 *
 * @example
 * const transport = createPusharyTransport({ apiKey, baseUrl, requestTimeoutMs: 65_000, fetch })
 */
export function createPusharyTransport(config: {
  apiKey: string
  baseUrl: string
  requestTimeoutMs: number
  fetch: PusharyFetch
}): PusharyTransport {
  return {
    async send(request) {
      const { operation, signal } = request
      if (signal?.aborted) throw new PusharyAbortError({ operation, reason: signal.reason })

      const url = buildUrl(config.baseUrl, request.path, request.query)
      const timeoutMs = request.timeoutMs ?? config.requestTimeoutMs
      // One controller for the whole exchange, so the timeout also covers a
      // server that sends headers and then stalls the body.
      const controller = new AbortController()
      let timedOut = false
      const timer = setTimeout(() => {
        timedOut = true
        controller.abort()
      }, timeoutMs)
      const onCallerAbort = () => controller.abort()
      signal?.addEventListener('abort', onCallerAbort, { once: true })

      let status: number
      let statusText: string
      let text: string
      try {
        const init: RequestInit = {
          method: request.method,
          headers: {
            'content-type': 'application/json',
            accept: 'application/json',
            authorization: `Bearer ${config.apiKey}`,
          },
          signal: controller.signal,
        }
        if (request.method !== 'GET' && request.body !== undefined) init.body = JSON.stringify(request.body)
        let response: Response
        try {
          response = await config.fetch(url, init)
        } catch (error) {
          // A kept-alive connection the server closed just as this request
          // went out: sent again once on a fresh connection, but only when a
          // repeat cannot do anything twice (a read, or a create the service
          // deduplicates by its idempotency key).
          if (controller.signal.aborted || !isClosedConnection(error) || !repeatable(request)) throw error
          response = await config.fetch(url, init)
        }
        status = response.status
        statusText = response.statusText ?? ''
        text = await response.text()
      } catch (error) {
        if (signal?.aborted) throw new PusharyAbortError({ operation, reason: signal.reason })
        if (timedOut) throw new PusharyTimeoutError({ operation, timeoutMs, cause: error })
        throw new PusharyNetworkError({ operation, cause: error })
      } finally {
        clearTimeout(timer)
        signal?.removeEventListener('abort', onCallerAbort)
      }

      const parsedJson = parseJson(text)
      if (status < 200 || status > 299) {
        const body = parsedJson.ok ? parsedJson.value : {}
        throw new PusharyApiError({ operation, status, statusText, body })
      }
      if (!parsedJson.ok) {
        throw new PusharyValidationError({
          code: 'invalid_response',
          operation,
          field: '',
          message: `the service answered HTTP ${status} with a body that is not JSON`,
          cause: parsedJson.error,
        })
      }
      const parsed = request.schema.safeParse(parsedJson.value)
      if (!parsed.success) {
        throw PusharyValidationError.fromZod(parsed.error, { operation, code: 'invalid_response' })
      }
      return parsed.data
    },
  }
}

/** Socket errors of a connection closed under the request (undici's `other side closed`, a reset, a broken pipe). */
const CLOSED_CONNECTION = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE'])

function isClosedConnection(error: unknown): boolean {
  const cause = (error as { cause?: { code?: unknown } } | null)?.cause
  return typeof cause?.code === 'string' && CLOSED_CONNECTION.has(cause.code)
}

/**
 * Whether sending the request twice does no more than sending it once: a
 * read, or `POST /decisions` with an `idempotencyKey` (the one write the wire
 * deduplicates: a replay returns the existing decision).
 */
function repeatable(request: PusharyRequest<z.ZodType>): boolean {
  if (request.method === 'GET') return true
  const key = (request.body as { idempotencyKey?: unknown } | undefined)?.idempotencyKey
  return request.method === 'POST' && request.path === '/decisions' && typeof key === 'string' && key !== ''
}

function buildUrl(baseUrl: string, path: string, query: PusharyRequest<z.ZodType>['query']): string {
  const search = new URLSearchParams()
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value === undefined || value === null) continue
    search.set(key, String(value))
  }
  const encoded = search.toString()
  const suffix = encoded === '' ? '' : `?${encoded}`
  return `${baseUrl}${path}${suffix}`
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false; error: unknown } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown }
  } catch (error) {
    return { ok: false, error }
  }
}
