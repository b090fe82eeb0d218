/**
 * The review store contract. Both stores implement it through the same rules
 * (`store-core.ts`), so a caller can switch databases without changing its
 * handling of `claimed`, `busy` and `settled`.
 */
import type { ReviewState } from '../machines/review-lifecycle.js'
import type {
  PusharyActionOutcome,
  PusharyReview,
  PusharyReviewInput,
  ReviewAction,
  ReviewPermit,
  ReviewReceipt,
  ReviewTransition,
} from './review-schema.js'
import type { PusharyReviewStats } from './review-stats-shape.js'

/**
 * What `claim` reports: the single winner, a serialized run, or an already terminal review.
 *
 * @example
 * const result: ReviewClaimResult = await store.claim(decisionId, runId)
 */
export type ReviewClaimResult = 'claimed' | 'busy' | 'settled'

/**
 * The states `finish` may write, each from `resuming` only. `pending` releases
 * the claim of a resume that provably ran nothing (the same target is
 * suspended again), so the answer is retried.
 *
 * @example
 * const outcome: ReviewFinishState = resumeThrew ? 'uncertain' : 'completed'
 */
export type ReviewFinishState = 'pending' | 'completed' | 'stale' | 'uncertain'

/**
 * What an operator confirmed about a `resuming` or `uncertain` review:
 * `completed` (it ran), `stale` (it did not run and never will), or `pending`
 * (reopen: nothing ran and the target still waits; also repairs a review that
 * was wrongly ended `stale`).
 *
 * @example
 * await store.recover(decisionId, 'completed' satisfies ReviewRecoveryOutcome, 'receipt rf_1 found')
 */
export type ReviewRecoveryOutcome = 'completed' | 'stale' | 'pending'

/**
 * A durable review store shared by every process that resumes the same runs.
 *
 * @example
 * const store = createSqliteReviewStore({ url: 'file:/var/lib/app/reviews.db' })
 * await store.save(review)
 * switch (await store.claim(review.decisionId, review.runId)) {
 *   case 'claimed': await resume(); await store.finish(review.decisionId, 'completed'); break
 *   case 'busy': case 'settled': break
 * }
 */
export interface PusharyReviewStore {
  /** Inserts the immutable binding (state must be `pending`); same binding again is a no-op, never a reset. */
  save(review: PusharyReviewInput): Promise<void>
  /** The durable record, validated, or `null`. */
  get(decisionId: string): Promise<PusharyReview | null>
  /**
   * Atomically moves `pending` to `resuming` for exactly one caller; resumes of one run are serialized.
   * `reason`, when given, is kept on the claim's history entry (e.g. why a multi-item parent is claimed).
   * `note.answeredAt` (ISO time), when given, is when the decision was answered, noted in the same
   * commit when the claim moves the review (the first time noted is kept; `recordAnswered` is the same
   * note for a resume that never claims).
   */
  claim(
    decisionId: string,
    runId: string,
    reason?: string,
    note?: { readonly answeredAt?: string },
  ): Promise<ReviewClaimResult>
  /**
   * Records the resume's outcome; only from `resuming`, else
   * `PusharyStoreError('not_claimed')`. `action`, when given, is the action
   * outcome (`recordAction`) written in the same commit, only if the review moved.
   */
  finish(
    decisionId: string,
    state: ReviewFinishState,
    reason?: string,
    action?: { outcome: PusharyActionOutcome; reason: string },
  ): Promise<void>
  /** Operator recovery of an `uncertain` or crash-left `resuming` review; the reason is required. */
  recover(decisionId: string, outcome: ReviewRecoveryOutcome, reason: string): Promise<void>
  /**
   * Takes over a crash-left `resuming` claim for recovery. `since` is the time
   * of the review's last transition as the caller read it (`history`); the
   * takeover succeeds (`true`) for exactly one caller that saw that claim,
   * across processes and hosts, and moves the claim's time forward (the
   * store's clock, later than `since`).
   */
  reclaim(decisionId: string, since: string, reason: string): Promise<boolean>
  /**
   * The review's state and when it last changed (a `resuming` claim's holder
   * moves that time forward with `keepAlive` while it works), or `null`.
   * `now` is the store's own clock, read with the row: a claim's lease is
   * judged as `now - since`, both on the store's clock, never on the
   * caller's. The package's stores always report it; a store that does not
   * is judged on the caller's clock, which is only sound on one host.
   */
  claimState(decisionId: string): Promise<{ state: ReviewState; since: string; now?: string } | null>
  /**
   * The holder of a `resuming` claim proves it is alive: moves the claim's
   * time from `since` to the store's clock now (later than `since`) and
   * returns the new time, or `null` when the claim is no longer the one it
   * holds (finished, or taken over).
   */
  keepAlive(decisionId: string, since: string): Promise<string | null>
  /**
   * Reviews in `state`, those longest in it first, at most `limit` (1–1000).
   * `after` pages on from a decision ID a previous call returned; when that
   * review has since left `state`, the listing starts from the beginning.
   */
  listByState(
    state: ReviewState,
    options: { readonly limit: number; readonly after?: string },
  ): Promise<PusharyReview[]>
  /** Every recorded transition of the review, oldest first. */
  history(decisionId: string): Promise<ReviewTransition[]>
  /** Durably records a callback body; call it before acknowledging the callback. */
  recordReceipt(receipt: ReviewReceipt): Promise<void>
  /** The recorded callback bodies of one decision, in arrival order. */
  listReceipts(decisionId: string): Promise<ReviewReceipt[]>
  /**
   * Keeps the permit a protected step spent for this review's decision (one
   * per review: a second, different permit is refused with `permit_conflict`,
   * the same one again is a no-op). Not part of the binding; any state.
   */
  recordPermit(decisionId: string, permit: ReviewPermit): Promise<void>
  /** The permit recorded for the review, or `null`. */
  permitOf(decisionId: string): Promise<ReviewPermit | null>
  /**
   * Records what happened to the review's approved action, read from the
   * evidence (a receipt, the tool's result, the run's output), with that
   * evidence as `reason`. Any state; a later record replaces it (an operator's
   * confirmation refines an `unknown`). Written before the review's ending.
   */
  recordAction(decisionId: string, action: { outcome: PusharyActionOutcome; reason: string }): Promise<void>
  /** The action outcome recorded for the review, or `null` (none recorded yet). */
  actionOf(decisionId: string): Promise<ReviewAction | null>
  /**
   * Notes when the review's decision was answered (the service's
   * `answeredAt`, read by a resume); the first time noted is kept. Only the
   * numbers read it (answered-to-resumed latency, answered reviews not yet
   * resumed); no rule does.
   */
  recordAnswered(decisionId: string, answeredAt: string): Promise<void>
  /**
   * Notes that a worker could not resume this review because of its
   * configuration, with the missing capability (`workflow`, `agent`, ...); the
   * latest replaces the earlier. Counted while the review stays `pending`.
   */
  recordMisconfigured(decisionId: string, gap: string): Promise<void>
  /**
   * The operator's numbers as SQL aggregates (see `readPusharyReviewStats`,
   * which checks its options and calls this); ISO times, `since` ≤ `now`.
   */
  stats(window: { readonly since: string; readonly now: string }): Promise<PusharyReviewStats>
  /** Releases connections the store opened. */
  close(): Promise<void>
}
