import type { PusharyAgentReview, PusharyReview } from './review-schema.js'
import type { ReviewClaimResult, ReviewFinishState } from './review-store.js'

/**
 * The four operations agent reviews need. `createSqliteReviewStore` and
 * `createPostgresReviewStore` satisfy it, and so does your own table behind
 * any object with these methods:
 *
 * - `save(review)`: insert the immutable binding idempotently; refuse a
 *   conflicting identity; never reset existing state.
 * - `get(decisionId)`: the durable record (validated with
 *   `pusharyAgentReviewSchema` by the helpers) or `null`.
 * - `claim(decisionId, runId)`: atomically `pending -> resuming` for exactly
 *   one worker; `busy` while any review of that run is `resuming` or
 *   `uncertain`; `settled` for a terminal review.
 * - `finish(decisionId, state, reason?)`: `completed`, `stale` or `uncertain`
 *   from the claimed state, keeping the reason; `pending` releases the claim
 *   of a resume that provably ran nothing (the approval step suspended again),
 *   so the answer is retried.
 *
 * An in-memory map cannot coordinate processes; every resumer of a run must
 * share one transactional store.
 *
 * @example
 * const store: PusharyAgentReviewStore = createSqliteReviewStore({ url: 'file:./reviews.db' })
 */
export interface PusharyAgentReviewStore {
  save(review: PusharyAgentReview): Promise<void>
  get(decisionId: string): Promise<PusharyReview | PusharyAgentReview | null>
  claim(decisionId: string, runId: string): Promise<ReviewClaimResult>
  finish(decisionId: string, state: ReviewFinishState, reason?: string): Promise<void>
}
