import { z } from 'zod/v4'
import { type AskDecisionInput, createAsk, type PusharyCallOptions } from './ask.js'
import {
  decisionInputCode,
  invalid,
  parseDecisionId,
  parseWith,
  resolveApiKey,
  resolveBaseUrl,
  resolveTimeout,
} from './client-config.js'
import {
  type AuthorizeInput,
  authorizeInputSchema,
  type CreateDecisionInput,
  createDecisionInputSchema,
} from './decision-schemas.js'
import { createPusharyTransport, type PusharyFetch } from './http.js'
import { customerIdSchema, idSchema } from './identity.js'
import { PUSHARY_LIMITS } from './limits.js'
import { createPlatformCalls, type PusharyPlatformCalls } from './platform-client.js'
import { type DecisionStatus, decisionStatusSchema } from './question.js'
import { confirmReplay } from './replay-check.js'
import { isStorableText, STORABLE_TEXT_MESSAGE } from './text-rules.js'
import {
  type AnswerResult,
  type AskResult,
  type AuthorizationEvaluation,
  answerResultSchema,
  authorizationEvaluationSchema,
  type CancelResult,
  cancelResultSchema,
  type Decision,
  type DecisionList,
  type DecisionReach,
  type DecisionResult,
  decisionListSchema,
  decisionReachSchema,
  decisionResultSchema,
  decisionSchema,
  type EnrollResult,
  enrollResultSchema,
  type WebhookSecret,
  webhookSecretSchema,
} from './wire-responses.js'

const _DEFAULT_ASK_TIMEOUT_MS = 55_000

/**
 * Options of {@link createPusharyClient}. Every field is optional.
 *
 * @example
 * const options: PusharyClientOptions = { baseUrl: server.baseUrl, apiKey: server.apiKey }
 */
export interface PusharyClientOptions {
  /** Defaults to `process.env.PUSHARY_API_KEY`; must look like `pk_….sk_…`. */
  apiKey?: string | undefined
  /** Any http(s) base; default `PUSHARY_BASE_URL`, else `https://pushary.com/api/v1/server`. A trailing slash is stripped. */
  baseUrl?: string | undefined
  /** Per-request timeout covering headers and body, default 65 000 ms. */
  requestTimeoutMs?: number | undefined
  /** Defaults to `globalThis.fetch`. */
  fetch?: PusharyFetch | undefined
  /** Clock for the `ask` deadline, default `Date.now`. */
  now?: (() => number) | undefined
}

/**
 * Filters of `decisions.list`.
 *
 * @example
 * const query: ListDecisionsQuery = { externalId: 'customer_1', status: 'pending', limit: 20 }
 */
export interface ListDecisionsQuery {
  /** Page size; the hosted API publishes no bound, the local service takes 1–100. */
  limit?: number | undefined
  cursor?: string | undefined
  externalId?: string | undefined
  /** A local-service extra: the hosted API documents no status filter (and may ignore it). */
  status?: DecisionStatus | undefined
  from?: string | undefined
  to?: string | undefined
}

/**
 * Typed client of the decision API.
 *
 * @example
 * const client: PusharyClient = createPusharyClient()
 */
export interface PusharyClient extends PusharyPlatformCalls {
  readonly baseUrl: string
  readonly decisions: {
    create(input: CreateDecisionInput, options?: PusharyCallOptions): Promise<DecisionResult>
    get(decisionId: string, options?: PusharyCallOptions & { wait?: number | undefined }): Promise<Decision>
    answer(decisionId: string, answer: string, options?: PusharyCallOptions): Promise<AnswerResult>
    cancel(decisionId: string, options?: PusharyCallOptions): Promise<CancelResult>
    list(query?: ListDecisionsQuery, options?: PusharyCallOptions): Promise<DecisionList>
    ask(input: AskDecisionInput): Promise<AskResult>
  }
  enroll(externalId: string, options?: PusharyCallOptions): Promise<EnrollResult>
  reachability(externalId: string, options?: PusharyCallOptions): Promise<DecisionReach>
  authorize(input: AuthorizeInput, options?: PusharyCallOptions): Promise<AuthorizationEvaluation>
  readonly webhookSecret: {
    get(options?: PusharyCallOptions): Promise<WebhookSecret>
    rotate(options?: PusharyCallOptions): Promise<WebhookSecret>
  }
}

const listQuerySchema = z.object({
  limit: z.number().int().min(1).optional(),
  cursor: z.string().min(1).optional(),
  externalId: idSchema.optional(),
  status: decisionStatusSchema.optional(),
  from: z.iso.datetime({ offset: true }).optional(),
  to: z.iso.datetime({ offset: true }).optional(),
})

/**
 * Creates a dependency-free client of the decision API (hosted Pushary or the
 * local dev service). Configuration errors are thrown here, before any request.
 *
 * @example
 * const client = createPusharyClient({ baseUrl: 'http://127.0.0.1:4100/api/v1/server', apiKey: 'pk_dev.sk_dev' })
 * const result = await client.decisions.ask({ question: 'Refund EUR 48?', externalId: 'customer_1' })
 * if (result.approved) await refund()
 */
export function createPusharyClient(options: PusharyClientOptions = {}): PusharyClient {
  const apiKey = resolveApiKey(options.apiKey)
  const baseUrl = resolveBaseUrl(options.baseUrl)
  const requestTimeoutMs = resolveTimeout(options.requestTimeoutMs)
  const fetchImpl = options.fetch ?? (globalThis.fetch as PusharyFetch | undefined)
  if (typeof fetchImpl !== 'function') {
    invalid('createPusharyClient', 'invalid_options', 'fetch', 'no fetch available: pass { fetch }')
  }
  const now = options.now ?? Date.now
  const transport = createPusharyTransport({ apiKey, baseUrl, requestTimeoutMs, fetch: fetchImpl })
  const decisionPath = (id: string) => `/decisions/${encodeURIComponent(id)}`

  const create = async (
    input: CreateDecisionInput,
    call: PusharyCallOptions = {},
  ): Promise<DecisionResult> => {
    const operation = 'decisions.create'
    const body = parseWith(createDecisionInputSchema, input, operation, decisionInputCode)
    // With `wait: true` the service holds the create up to `timeoutSeconds`
    // (at most 55 s); the request must outlive that hold.
    const held =
      body.wait === true ? Math.min(PUSHARY_LIMITS.longPollMaxSeconds, body.timeoutSeconds ?? 55) : 0
    const created = await transport.send({
      operation,
      method: 'POST',
      path: '/decisions',
      body,
      schema: decisionResultSchema,
      signal: call.signal,
      timeoutMs: Math.max(requestTimeoutMs, held * 1000 + Math.min(requestTimeoutMs, 5_000)),
    })
    return confirmReplay(body, created, operation, (id) => get(id, { signal: call.signal }))
  }

  const get = async (
    id: string,
    call: PusharyCallOptions & { wait?: number | undefined } = {},
  ): Promise<Decision> => {
    const operation = 'decisions.get'
    const decisionId = parseDecisionId(id, operation)
    const wait = clampWait(call.wait, operation)
    return transport.send({
      operation,
      method: 'GET',
      path: decisionPath(decisionId),
      query: { wait: wait > 0 ? wait : undefined },
      schema: decisionSchema,
      signal: call.signal,
      // The request must outlive the server-side hold, or every long-poll
      // would end as a local timeout.
      timeoutMs: Math.max(requestTimeoutMs, wait * 1000 + Math.min(requestTimeoutMs, 5_000)),
    })
  }

  const ask = createAsk({ create, get, now })

  return {
    baseUrl,
    ...createPlatformCalls(transport),
    decisions: {
      create,
      get,
      ask,
      async answer(id, answer, call = {}) {
        const operation = 'decisions.answer'
        const decisionId = parseDecisionId(id, operation)
        if (typeof answer !== 'string' || answer.length === 0 || answer.length > PUSHARY_LIMITS.contextMax) {
          invalid(
            operation,
            'invalid_answer',
            'answer',
            'must be a non-empty string of at most 2000 characters',
          )
        }
        if (!isStorableText(answer)) invalid(operation, 'invalid_answer', 'answer', STORABLE_TEXT_MESSAGE)
        return transport.send({
          operation,
          method: 'POST',
          path: decisionPath(decisionId),
          body: { answer },
          schema: answerResultSchema,
          signal: call.signal,
        })
      },
      async cancel(id, call = {}) {
        const operation = 'decisions.cancel'
        const decisionId = parseDecisionId(id, operation)
        return transport.send({
          operation,
          method: 'DELETE',
          path: decisionPath(decisionId),
          schema: cancelResultSchema,
          signal: call.signal,
        })
      },
      async list(query = {}, call = {}) {
        const operation = 'decisions.list'
        const parsed = parseWith(listQuerySchema, query, operation, (field) =>
          field === 'externalId' ? 'invalid_external_id' : 'invalid_options',
        )
        return transport.send({
          operation,
          method: 'GET',
          path: '/decisions',
          query: parsed,
          schema: decisionListSchema,
          signal: call.signal,
        })
      },
    },
    async enroll(externalId, call = {}) {
      const operation = 'enroll'
      const id = parseWith(customerIdSchema, externalId, operation, () => 'invalid_external_id', 'externalId')
      return transport.send({
        operation,
        method: 'POST',
        path: '/enroll',
        body: { externalId: id },
        schema: enrollResultSchema,
        signal: call.signal,
      })
    },
    async reachability(externalId, call = {}) {
      const operation = 'reachability'
      const id = parseWith(idSchema, externalId, operation, () => 'invalid_external_id', 'externalId')
      return transport.send({
        operation,
        method: 'GET',
        path: '/reachability',
        query: { externalId: id },
        schema: decisionReachSchema,
        signal: call.signal,
      })
    },
    async authorize(input, call = {}) {
      const operation = 'authorize'
      const body = parseWith(authorizeInputSchema, input, operation, (field) =>
        field === 'externalId' ? 'invalid_external_id' : 'invalid_decision_input',
      )
      return transport.send({
        operation,
        method: 'POST',
        path: '/authorize',
        body,
        schema: authorizationEvaluationSchema,
        signal: call.signal,
      })
    },
    webhookSecret: {
      get: async (call = {}) =>
        transport.send({
          operation: 'webhookSecret.get',
          method: 'GET',
          path: '/webhook-secret',
          schema: webhookSecretSchema,
          signal: call.signal,
        }),
      rotate: async (call = {}) =>
        transport.send({
          operation: 'webhookSecret.rotate',
          method: 'POST',
          path: '/webhook-secret',
          schema: webhookSecretSchema,
          signal: call.signal,
        }),
    },
  }
}

function clampWait(wait: number | undefined, operation: string): number {
  if (wait === undefined) return 0
  if (typeof wait !== 'number' || Number.isNaN(wait))
    invalid(operation, 'invalid_options', 'wait', 'must be seconds')
  // The service holds at most 55 s; asking for more would only look like a hang.
  return Math.min(PUSHARY_LIMITS.longPollMaxSeconds, Math.max(0, Math.ceil(wait)))
}
