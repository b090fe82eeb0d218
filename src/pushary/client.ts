import { randomUUID } from 'node:crypto'
import { z } from 'zod/v4'
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
  type AnswerResult,
  type AskResult,
  type AuthorizationEvaluation,
  type AuthorizeInput,
  answerResultSchema,
  authorizationEvaluationSchema,
  authorizeInputSchema,
  type CancelResult,
  type CreateDecisionInput,
  cancelResultSchema,
  createDecisionInputSchema,
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
} from './decision-schemas.js'
import { isPusharyApiError, PusharyAbortError, PusharyTimeoutError } from './errors.js'
import { createPusharyTransport, type PusharyFetch } from './http.js'
import { externalIdSchema, parseExternalId } from './identity.js'
import { PUSHARY_LIMITS } from './limits.js'
import { decisionStatusSchema, isApproved } from './question.js'
import { confirmReplay } from './replay-check.js'
import { isStorableText, STORABLE_TEXT_MESSAGE } from './text-rules.js'

const DEFAULT_ASK_TIMEOUT_MS = 55_000

/**
 * Options of {@link createPusharyClient}. Every field is optional.
 *
 * @example
 * const options: PusharyClientOptions = { baseUrl: server.baseUrl, apiKey: server.apiKey }
 */
export interface PusharyClientOptions {
  /** Defaults to `process.env.PUSHARY_API_KEY`; must look like `pk_….sk_…`. */
  apiKey?: string | undefined
  /** Must end in `/api/v1/server`; a trailing slash is stripped. */
  baseUrl?: string | undefined
  /** Per-request timeout covering headers and body, default 65 000 ms. */
  requestTimeoutMs?: number | undefined
  /** Defaults to `globalThis.fetch`. */
  fetch?: PusharyFetch | undefined
  /** Clock for the `ask` deadline, default `Date.now`. */
  now?: (() => number) | undefined
}

/**
 * Per-call options. An abort stops the local wait; it never cancels the remote decision.
 *
 * @example
 * await client.decisions.get(id, { wait: 30, signal: AbortSignal.timeout(40_000) })
 */
export interface PusharyCallOptions {
  signal?: AbortSignal | undefined
}

/**
 * Input of `decisions.ask`: a decision plus the local waiting budget.
 *
 * @example
 * const input: AskDecisionInput = { question: 'Refund EUR 48?', externalId: 'customer_1', timeoutMs: 30_000 }
 */
export type AskDecisionInput = CreateDecisionInput & {
  /** Local deadline for polling, default 55 000 ms; 0 creates without polling. */
  timeoutMs?: number | undefined
  signal?: AbortSignal | undefined
}

/**
 * Filters of `decisions.list`.
 *
 * @example
 * const query: ListDecisionsQuery = { externalId: 'customer_1', status: 'pending', limit: 20 }
 */
export interface ListDecisionsQuery {
  limit?: number | undefined
  cursor?: string | undefined
  externalId?: string | undefined
  status?: Decision['status'] | undefined
  from?: string | undefined
  to?: string | undefined
}

/**
 * Typed client of the decision API.
 *
 * @example
 * const client: PusharyClient = createPusharyClient()
 */
export interface PusharyClient {
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
  limit: z.number().int().min(1).max(100).optional(),
  cursor: z.string().min(1).optional(),
  externalId: externalIdSchema.optional(),
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
    const created = await transport.send({
      operation,
      method: 'POST',
      path: '/decisions',
      // The adapter never asks the service to block on create; waiting is
      // done by long-polling GET so a caller abort stays local.
      body: { ...body, wait: false },
      schema: decisionResultSchema,
      signal: call.signal,
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

  const ask = async (input: AskDecisionInput): Promise<AskResult> => {
    const operation = 'decisions.ask'
    const { timeoutMs, signal, ...decisionInput } = input
    if (timeoutMs !== undefined && (typeof timeoutMs !== 'number' || Number.isNaN(timeoutMs))) {
      invalid(operation, 'invalid_options', 'timeoutMs', 'must be a number of ms')
    }
    const budget = Math.max(0, timeoutMs ?? DEFAULT_ASK_TIMEOUT_MS)
    // Validate before generating a key so bad input never reaches the service.
    parseWith(createDecisionInputSchema, decisionInput, operation, decisionInputCode)
    const started = now()
    const deadline = started + budget
    // A fresh key per call keeps independent asks from collapsing into one decision.
    const idempotencyKey = decisionInput.idempotencyKey ?? randomUUID()
    const created = await create({ ...decisionInput, idempotencyKey }, { signal })
    const type = created.type ?? decisionInput.type ?? 'confirm'
    let status = created.status
    let value = created.value ?? null
    let answered = created.answered
    while (status === 'pending' && budget > 0) {
      const remaining = deadline - now()
      if (remaining <= 0) break
      const wait = Math.max(1, Math.min(PUSHARY_LIMITS.askWindowMaxSeconds, Math.ceil(remaining / 1000)))
      let decision: Decision
      try {
        decision = await get(created.decisionId, { wait, signal })
      } catch (error) {
        // Silence is an outcome, not a failure: return the last known state.
        if (error instanceof PusharyTimeoutError) break
        // The service caps concurrent long-polls; back off briefly and keep waiting.
        if (isPusharyApiError(error) && error.isRateLimited) {
          await pause(Math.min(1_000, Math.max(0, deadline - now())), signal, operation)
          continue
        }
        throw error
      }
      status = decision.status
      value = decision.value
      answered = decision.answered
    }
    const result: AskResult = {
      decisionId: created.decisionId,
      status,
      answered,
      value,
      type,
      approved: isApproved({ status, type, value }),
    }
    if (created.reachable !== undefined) result.reachable = created.reachable
    if (created.reachableChannels !== undefined) result.reachableChannels = created.reachableChannels
    if (created.deviceCount !== undefined) result.deviceCount = created.deviceCount
    return result
  }

  return {
    baseUrl,
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
      const id = parseExternalId(externalId, 'externalId', operation)
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
      const id = parseExternalId(externalId, 'externalId', operation)
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

function pause(ms: number, signal: AbortSignal | undefined, operation: string): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new PusharyAbortError({ operation, reason: signal.reason }))
    const onAbort = () => {
      clearTimeout(timer)
      reject(new PusharyAbortError({ operation, reason: signal?.reason }))
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
