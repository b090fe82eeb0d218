/**
 * The JSON the service POSTs to a decision's `callbackUrl` once it is
 * answered: exactly the hosted body (`correlationId`, `answer`, `value`,
 * `answeredAt`, `context?`). It is built when the answer commits and stored
 * verbatim, so every retry sends (and signs) the same bytes. Expiry and
 * cancellation send nothing, as on the hosted API: receivers learn about
 * them by reconciling.
 */
import type { StoredDecision } from './service-types.js'

/** The event name recorded with each delivery (the body itself has none). */
export const ANSWERED_EVENT = 'decision.answered'

/**
 * The hosted callback body.
 *
 * @example
 * const body: HostedCallbackBody = { correlationId: 'dec_1', answer: 'yes', value: 'yes', answeredAt: '2026-01-01T00:00:00.000Z' }
 */
export interface HostedCallbackBody {
  correlationId: string
  answer: string
  value: string
  answeredAt: string
  context?: string
}

/**
 * Builds the callback payload for a decision that has just been answered.
 *
 * @example
 * const raw = JSON.stringify(buildCallbackBody(decision))
 */
export function buildCallbackBody(decision: StoredDecision): HostedCallbackBody {
  const answer = decision.value ?? ''
  return {
    correlationId: decision.decisionId,
    answer,
    value: answer,
    answeredAt: decision.answeredAt ?? '',
    ...(decision.context !== null ? { context: decision.context } : {}),
  }
}
