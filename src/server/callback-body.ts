/**
 * The JSON the service POSTs to a decision's `callbackUrl`. It is built when
 * the transition commits and stored verbatim, so every retry sends (and signs)
 * the same bytes.
 */
import type { DecisionCallback } from '../pushary/decision-schemas.js'
import type { StoredDecision } from './service-types.js'

/** The three terminal transitions that produce a callback. */
export type CallbackEvent = DecisionCallback['event']

const EVENT_FOR = {
  answered: 'decision.answered',
  expired: 'decision.expired',
  cancelled: 'decision.cancelled',
} as const satisfies Record<DecisionCallback['status'], CallbackEvent>

/**
 * Builds the callback payload for a decision that has just left `pending`:
 * `correlationId` is the decision ID; `answer` and `value` are aliases.
 *
 * @example
 * const raw = JSON.stringify(buildCallbackBody(decision, 'answered'))
 */
export function buildCallbackBody(
  decision: StoredDecision,
  status: DecisionCallback['status'],
): DecisionCallback {
  return {
    event: EVENT_FOR[status],
    correlationId: decision.decisionId,
    decisionId: decision.decisionId,
    status,
    answer: decision.value,
    value: decision.value,
    answeredAt: decision.answeredAt,
    type: decision.type,
    ...(decision.context !== null ? { context: decision.context } : {}),
  }
}
