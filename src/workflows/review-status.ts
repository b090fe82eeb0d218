/**
 * The one mapping from a stored review state to what a resumer reports when
 * it finds the review no longer `pending`. Workflow, batch-parent and agent
 * resumes, `resumePusharyAgentReview` and `dispatcher.recover` all use it, so
 * a state reads the same whichever path met it.
 */
import type { ReviewState } from '../machines/review-lifecycle.js'
import { claimedElsewhere } from './claim-lease.js'

/** What a settled (terminal) review reports. */
export type SettledReviewResult =
  | { status: 'duplicate'; decisionId: string }
  | { status: 'stale' | 'uncertain'; decisionId: string; reason: string }

/** What a review that cannot be resumed now reports. */
export type StoredStateResult =
  | SettledReviewResult
  | { status: 'busy'; decisionId: string }
  | { status: 'recovery_needed'; decisionId: string; reason: string }

/**
 * The result for a terminal review.
 *
 * @example
 * if (review.state === 'completed') return settledResult(decisionId, review.state)
 */
export function settledResult(
  decisionId: string,
  state: 'completed' | 'stale' | 'uncertain',
): SettledReviewResult {
  switch (state) {
    case 'completed':
      return { status: 'duplicate', decisionId }
    case 'stale':
      return { status: 'stale', decisionId, reason: 'the review was already found stale' }
    case 'uncertain':
      return {
        status: 'uncertain',
        decisionId,
        reason: 'the review is uncertain; an operator must recover it',
      }
    default: {
      const unreachable: never = state
      return unreachable
    }
  }
}

/**
 * The result for a review found in `state`, or `null` when it is `pending`
 * (resumable). A `resuming` review is `busy` while its holder keeps the
 * claim alive, `recovery_needed` once it stopped for a whole lease.
 *
 * @example
 * const blocked = await storedStateResult(store, review, { leaseMs: 30_000, now: new Date() })
 * if (blocked) return blocked
 */
export async function storedStateResult(
  store: object,
  review: { decisionId: string; state: ReviewState },
  lease: { leaseMs: number; now: Date },
): Promise<StoredStateResult | null> {
  switch (review.state) {
    case 'pending':
      return null
    case 'resuming':
      return claimedElsewhere(store, review.decisionId, lease.leaseMs, lease.now)
    default:
      return settledResult(review.decisionId, review.state)
  }
}
