/**
 * A decision's expiry, and what a 404 on a decision we created means.
 *
 * The hosted service forgets a decision some time after it expired and then
 * answers its id with 404 ("Decision not found or expired"). A 404 alone
 * proves nothing: the id may be wrong, the key may belong to another
 * account, the service may have lost data. So a 404 settles a review as
 * `expired` only when the expiry the service reported at creation has
 * passed; before that it stays the loud, typed `PusharyApiError` it is,
 * which every resume path reports as retryable. Expired is never approval.
 */
import type { PusharyClient } from '../pushary/client.js'
import { isPusharyApiError } from '../pushary/errors.js'
import { type Decision, type DecisionResult, decisionSchema } from '../pushary/wire-responses.js'
import { type PusharyWorkflowBinding, workflowBindingContext } from './workflow-binding.js'

/**
 * When a just-created decision expires: the lifetime the service reported,
 * else the one we asked for, counted from `nowMs`. `undefined` when neither
 * is known; such a review never settles on a 404.
 *
 * @example
 * const expiresAt = decisionExpiresAt(created, { expiresInSeconds: 3600 }, Date.now())
 */
export function decisionExpiresAt(
  created: Pick<DecisionResult, 'expiresInSeconds'>,
  requested: { expiresInSeconds?: number | undefined },
  nowMs: number,
): string | undefined {
  const seconds = created.expiresInSeconds ?? requested.expiresInSeconds
  if (seconds === undefined || seconds === null || !Number.isFinite(seconds) || seconds < 0) return undefined
  return new Date(nowMs + seconds * 1000).toISOString()
}

/** The reviewed decision as the resume paths need it: its binding, id and reported expiry. */
export interface ReviewedDecision extends PusharyWorkflowBinding {
  decisionId: string
  expiresAt?: string | undefined
}

/**
 * Reads the decision behind a review. A 404 after the review's `expiresAt`
 * returns the decision as it last stood for everyone: `expired`, unanswered,
 * with the saved binding (so every later check reads it like a re-read).
 * Any other failure, a 404 before the expiry included, is thrown unchanged.
 *
 * @example
 * const decision = await readReviewedDecision(client, { ...binding, decisionId, expiresAt }, new Date())
 */
export async function readReviewedDecision(
  client: PusharyClient,
  review: ReviewedDecision,
  now: Date,
): Promise<Decision> {
  try {
    return await client.decisions.get(review.decisionId)
  } catch (error) {
    if (!isPusharyApiError(error) || error.status !== 404 || review.expiresAt === undefined) throw error
    if (now.getTime() <= Date.parse(review.expiresAt)) throw error
    return decisionSchema.parse({
      decisionId: review.decisionId,
      status: 'expired',
      answered: false,
      value: null,
      type: review.question.type,
      question: review.question.question,
      options: review.question.options ?? null,
      externalId: review.externalId,
      context: workflowBindingContext(review),
      createdAt: null,
      answeredAt: null,
      expiresAt: review.expiresAt,
    })
  }
}
