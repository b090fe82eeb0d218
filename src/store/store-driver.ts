/**
 * The contract between the store rules (`store-core.ts`) and one database:
 * the statements a write transaction offers, the driver's reads and writes,
 * and the error a driver throws when the database itself refuses a second
 * active review in one run.
 */
import type { ReviewEventType, ReviewState } from '../machines/review-lifecycle.js'
import type { ReviewActionDriver } from './review-actions.js'
import type { ReviewPermitDriver } from './review-permits.js'
import type { ReviewReceipt } from './review-schema.js'
import type { ReviewStatsDriver } from './review-stats.js'
import type { StoredReviewRow, StoredTransitionRow } from './store-rows.js'

/** The statements a write transaction offers. Every method runs inside the driver's transaction. */
export interface ReviewWriteTransaction {
  /** The row, locked for the rest of the transaction where the database can lock rows. */
  selectForUpdate(decisionId: string): Promise<StoredReviewRow | null>
  /** Inserts a pending row unless the decision ID exists; `true` when inserted. */
  insertPending(row: StoredReviewRow & { readonly target: string; readonly at: string }): Promise<boolean>
  /** Whether any review of the run is `resuming` or `uncertain`. */
  runHasActiveReview(runId: string): Promise<boolean>
  /** Compare-and-set: `true` only when the row was in `from` and is now in `to`. */
  setState(
    decisionId: string,
    from: ReviewState,
    to: ReviewState,
    reason: string | null,
    at: string,
  ): Promise<boolean>
  appendTransition(row: StoredTransitionRow): Promise<void>
  /** Sets the review's action outcome (a serialized `ReviewAction`). */
  setAction(decisionId: string, action: string): Promise<void>
  /** Notes when the decision was answered, unless a time is already noted. */
  noteAnswered(decisionId: string, answeredAt: string): Promise<void>
  /**
   * The database's own clock now, as an ISO time in UTC with milliseconds.
   * Lease times (claim, keepAlive, reclaim) are read from it, never from a
   * host's clock, so every host judges every lease on one clock.
   */
  clock(): Promise<string>
}

/**
 * One database's half of a store. `write` runs `body` in one transaction that
 * is serialized with every other write touching `runId` (all writes, when the
 * database can only lock the whole file), across processes and hosts.
 */
export interface ReviewStoreDriver extends ReviewPermitDriver, ReviewActionDriver, ReviewStatsDriver {
  write<T>(
    operation: string,
    runId: string | null,
    body: (tx: ReviewWriteTransaction) => Promise<T>,
  ): Promise<T>
  /**
   * Optional: the whole claim as one statement, for databases that can do it
   * atomically (PostgreSQL). Moves the row from `from` to `to` only when it is
   * bound to `runId`, is still in `from` when the database writes it, and no
   * other review of the run is active (else throws {@link ActiveRunConflict}
   * when the database refused it), appending the history row with it, at
   * the database's own clock. Returns the row's run and state as read before
   * the write and, when it moved, the claim time it wrote; or `null` when
   * there is no row. Drivers without it run the claim as a write transaction.
   */
  claimInOneStatement?(
    claim: ClaimStatement,
  ): Promise<
    | { runId: string; state: string; claimed: true; at: string }
    | { runId: string; state: string; claimed: false }
    | null
  >
  /**
   * Optional: one lifecycle transition (`finish`, `recover`, `reclaim`) as one
   * atomic statement (SQLite). Moves the row from whichever `moves[i].from`
   * it is in to that move's `to`, only when it is in one of them (and, with
   * `since`, still has that claim time) when the database writes it,
   * appending the history row with it. Returns `{ moved: true, at }` with the
   * time it wrote, `{ moved: false, state }` with the row's state when
   * nothing moved, or `null` when there is no row. Drivers without it run
   * the transition as a write transaction.
   */
  transitionInOneStatement?(
    move: TransitionStatement,
  ): Promise<{ moved: true; at: string } | { moved: false; state: string } | null>
  selectReview(decisionId: string): Promise<StoredReviewRow | null>
  /** The review's state and state time with the database's clock read in the same statement, or `null`. */
  selectClaimState(decisionId: string): Promise<{ state: string; stateChangedAt: string; now: string } | null>
  /** Rows in `state`, longest in it first; when `after` names a row still in `state`, only rows after it. */
  selectByState(state: ReviewState, limit: number, after: string | null): Promise<StoredReviewRow[]>
  selectHistory(decisionId: string): Promise<StoredTransitionRow[]>
  insertReceipt(receipt: ReviewReceipt): Promise<void>
  selectReceipts(decisionId: string): Promise<ReviewReceipt[]>
  close(): Promise<void>
}

/** What {@link ReviewStoreDriver.claimInOneStatement} writes. */
export interface ClaimStatement {
  readonly decisionId: string
  readonly runId: string
  readonly from: ReviewState
  readonly to: ReviewState
  readonly reason: string | null
  /**
   * When the decision was answered, noted with the claim (the first time
   * noted is kept), in the same commit; `null` when the claimer has none.
   */
  readonly answeredAt: string | null
}

/** What {@link ReviewStoreDriver.transitionInOneStatement} writes. */
export interface TransitionStatement {
  /** The store operation, for a busy or failed database's error. */
  readonly operation: 'finish' | 'recover' | 'reclaim'
  readonly decisionId: string
  /** Every state `event` moves a review out of, with where it moves it; the lifecycle's, never empty. */
  readonly moves: readonly { readonly from: ReviewState; readonly to: ReviewState }[]
  readonly event: ReviewEventType
  readonly reason: string | null
  /**
   * The transition's time from the store's `now` option; `null` for a lease
   * takeover, which the database times itself, later than `since`.
   */
  readonly at: string | null
  /** When set, the row moves only if its `state_changed_at` is exactly this (a lease takeover). */
  readonly since?: string
  /**
   * The action outcome (a serialized `ReviewAction`) written with the move,
   * in the same commit, only when the row moved.
   */
  readonly action?: string
}

/**
 * Thrown by a driver when the database itself refused a second active review
 * in one run (the partial unique index). The claim then reports `busy`.
 */
export class ActiveRunConflict extends Error {
  override name = 'ActiveRunConflict'
}
