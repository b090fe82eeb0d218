/**
 * A decision callback as this package reads it (`parseDecisionCallback` in
 * `callbacks.ts`): which terminal event, for which decision, and the answer.
 * Apart from the responses the client reads (`wire-responses.ts`): a
 * callback is pushed by the service and is a hint, never authority.
 */
import { z } from 'zod/v4'
import type { decisionTypeSchema } from './question.js'

/**
 * Events a decision service posts to `callbackUrl`, one per terminal transition.
 *
 * @example
 * decisionEventSchema.parse('decision.answered')
 */
export const decisionEventSchema = z.enum(['decision.answered', 'decision.expired', 'decision.cancelled'])

/**
 * A parsed callback body. It is a hint, never authority: re-read the decision
 * from the service before acting on it.
 *
 * @example
 * const callback: DecisionCallback | null = parseDecisionCallback(rawBody)
 */
export interface DecisionCallback {
  event: z.infer<typeof decisionEventSchema>
  correlationId: string
  decisionId: string
  status: 'answered' | 'expired' | 'cancelled'
  /** The person's answer (the wire's canonical field); what a `Decision` calls `value`. */
  answer: string | null
  /** The wire's alias of `answer` (the same text when the sender is consistent; `answer` when absent). Read `answer`. */
  value: string | null
  answeredAt: string | null
  context?: string
  /** The type when sent; `approved` needs `'confirm'` (or none, as hosted); an unknown one is never approval. */
  type?: z.infer<typeof decisionTypeSchema> | 'unknown'
  rawType?: string // the wire value of an unknown `type` (non-strings as JSON)
}
