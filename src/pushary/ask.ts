/**
 * `decisions.ask`: create without waiting, then long-poll until the person
 * answers or the local budget ends. Built on the client's own `create` and
 * `get`, so it shares their validation, transport and errors.
 */
import { randomUUID } from 'node:crypto'
import { decisionInputCode, invalid, parseWith } from './client-config.js'
import { type CreateDecisionInput, createDecisionInputSchema } from './decision-schemas.js'
import { isPusharyApiError, PusharyAbortError, PusharyNetworkError, PusharyTimeoutError } from './errors.js'
import { PUSHARY_LIMITS } from './limits.js'
import { isApproved } from './question.js'
import type { AskResult, Decision, DecisionResult, ReadDecisionType } from './wire-responses.js'

const DEFAULT_ASK_TIMEOUT_MS = 55_000

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

/** What `ask` needs from the client. */
export interface AskDeps {
  create(input: CreateDecisionInput, options?: PusharyCallOptions): Promise<DecisionResult>
  get(decisionId: string, options?: PusharyCallOptions & { wait?: number | undefined }): Promise<Decision>
  now: () => number
}

/**
 * Builds `decisions.ask` over the client's `create` and `get`.
 *
 * @example
 * const ask = createAsk({ create, get, now: Date.now })
 */
export function createAsk({ create, get, now }: AskDeps): (input: AskDecisionInput) => Promise<AskResult> {
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
    // A fresh key per call keeps independent asks from collapsing into one
    // decision; the same key is kept across this call's own retries, so a
    // create that reached the service before its answer was lost replays
    // the same decision instead of paging the person again.
    const idempotencyKey = decisionInput.idempotencyKey ?? randomUUID()
    const asked = { ...decisionInput, idempotencyKey, wait: false }
    const created = await createWithRetries(asked, deadline, signal, operation)
    // The type that was asked decides what the answer means; a service that
    // reports another type is never read as approval.
    const askedType = decisionInput.type ?? 'confirm'
    let status = created.status
    let rawStatus = created.rawStatus
    let value = created.value ?? null
    let answered = created.answered
    let type: ReadDecisionType =
      created.type === undefined || created.type === askedType ? askedType : 'unknown'
    while (status === 'pending' && budget > 0) {
      const remaining = deadline - now()
      if (remaining <= 0) break
      const wait = Math.max(1, Math.min(PUSHARY_LIMITS.askWindowMaxSeconds, Math.ceil(remaining / 1000)))
      let decision: Decision
      try {
        decision = await get(created.decisionId, { wait, signal })
      } catch (error) {
        if (error instanceof PusharyAbortError) throw error
        // The decision exists: a failed read is silence, not a reason to lose
        // it. Pause briefly and read again; at the deadline, report the last
        // known state with the decision id so the caller can follow up.
        if (isRetryableReadError(error)) {
          await pause(Math.min(1_000, Math.max(0, deadline - now())), signal, operation)
          continue
        }
        throw error
      }
      status = decision.status
      rawStatus = decision.rawStatus
      value = decision.value
      answered = decision.answered
      if (decision.type !== askedType) type = 'unknown'
    }
    const result: AskResult = {
      decisionId: created.decisionId,
      status,
      answered,
      value,
      type,
      approved: isApproved({ status, type, value }),
    }
    if (status === 'unknown') result.rawStatus = rawStatus ?? 'undefined'
    if (created.idempotent !== undefined) result.idempotent = created.idempotent
    if (created.reachable !== undefined) result.reachable = created.reachable
    if (created.reachableChannels !== undefined) result.reachableChannels = created.reachableChannels
    if (created.deviceCount !== undefined) result.deviceCount = created.deviceCount
    if (created.hint !== undefined) result.hint = created.hint
    return result
  }

  // Retries a create whose outcome is unknown (no answer, a 5xx, a 429) with
  // the same idempotency key until the deadline; a 4xx other than 429 is the
  // caller's error and is thrown at once.
  const createWithRetries = async (
    body: CreateDecisionInput,
    deadline: number,
    signal: AbortSignal | undefined,
    operation: string,
  ): Promise<DecisionResult> => {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await create(body, { signal })
      } catch (error) {
        const left = deadline - now()
        if (!isRetryableWriteError(error) || attempt >= MAX_CREATE_ATTEMPTS || left <= 0) throw error
        await pause(Math.min(250 * 2 ** (attempt - 1), left), signal, operation)
      }
    }
  }

  return ask
}

const MAX_CREATE_ATTEMPTS = 4

function isRetryableWriteError(error: unknown): boolean {
  if (error instanceof PusharyNetworkError || error instanceof PusharyTimeoutError) return true
  return isPusharyApiError(error) && (error.isRateLimited || error.status >= 500)
}

function isRetryableReadError(error: unknown): boolean {
  return isRetryableWriteError(error)
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
