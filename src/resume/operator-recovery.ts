/**
 * The operator's recovery of one review, as `pushary-mastra reviews recover`
 * and the review board both perform it: one function, so the two can never
 * disagree on what is refused. The lifecycle's rules stay in
 * `store.recover` (a transition the machine forbids is a
 * `PusharyStoreError`, thrown as before); the one rule of this layer is the
 * live claim: a `resuming` review whose holder still keeps it alive is work
 * in progress (the tool may be running right now), and writing its ending
 * would make the review disagree with what ran.
 */

import type { PusharyReview, ReviewTransition } from '../store/review-schema.js'
import type { PusharyReviewStore, ReviewRecoveryOutcome } from '../store/review-store.js'
import { claimHolderGone, leaseClock } from './claim-lease.js'

/** What the operator asks for: the ending they confirmed and why. */
export interface OperatorRecoveryRequest {
  readonly decisionId: string
  readonly outcome: ReviewRecoveryOutcome
  /** Kept in the review's history and in the action record. */
  readonly reason: string
  /** The dispatcher's claim lease: a `resuming` claim kept alive within it is live. */
  readonly leaseMs: number
  /** The operator's clock, used only when the store does not report its own. */
  readonly now: Date
}

/**
 * The result: `recovered` with the review as it now reads and the
 * transition written, or `refused` for a live claim (the sentence names
 * who holds it and until when). A transition the lifecycle forbids, or an
 * unknown review, is thrown by the store as a `PusharyStoreError`.
 */
export type OperatorRecoveryResult =
  | { status: 'recovered'; review: PusharyReview | null; transition: ReviewTransition | undefined }
  | { status: 'refused'; reason: 'live_claim'; message: string }

type RecoveryStore = Pick<PusharyReviewStore, 'claimState' | 'history' | 'recover' | 'recordAction' | 'get'>

async function liveClaimRefusal(
  store: RecoveryStore,
  decisionId: string,
  leaseMs: number,
  now: Date,
): Promise<string | null> {
  const claim = await store.claimState(decisionId)
  // Judged on the store's clock, so a skewed operator machine never reads a live claim as gone.
  if (claim?.state !== 'resuming' || claimHolderGone(claim.since, leaseMs, leaseClock(claim, now))) {
    return null
  }
  const taken = (await store.history(decisionId))
    .filter((entry) => entry.event === 'CLAIM' || entry.event === 'RECLAIM')
    .at(-1)
  const holder = taken
    ? `the resumer that took it at ${taken.at} (${taken.event}${taken.reason ? ` "${taken.reason}"` : ''})`
    : 'a live resumer'
  const until = new Date(Date.parse(claim.since) + leaseMs).toISOString()
  return `review ${decisionId} is claimed by ${holder}, kept alive at ${claim.since}; its lease runs until ${until} (--lease-ms ${leaseMs}). It is being resumed right now: wait for it to finish, or until the lease ran out (its holder is gone), then recover`
}

/**
 * Recovers one review as an operator: refuses a live claim, then
 * `store.recover` (the lifecycle's rules), then records the operator's
 * confirmation as the action's evidence (`ran` for completed, `not_run` for
 * stale; a reopen records nothing, nothing ran).
 *
 * @example
 * const result = await recoverAsOperator(store, { decisionId, outcome: 'stale', reason: 'refund never sent', leaseMs: 30_000, now: new Date() })
 * if (result.status === 'refused') console.error(result.message)
 */
export async function recoverAsOperator(
  store: RecoveryStore,
  request: OperatorRecoveryRequest,
): Promise<OperatorRecoveryResult> {
  const { decisionId, outcome, reason } = request
  const refusal = await liveClaimRefusal(store, decisionId, request.leaseMs, request.now)
  if (refusal !== null) return { status: 'refused', reason: 'live_claim', message: refusal }
  await store.recover(decisionId, outcome, reason)
  // The operator's confirmation is the evidence now: it refines the action outcome.
  if (outcome !== 'pending') {
    await store.recordAction(decisionId, {
      outcome: outcome === 'completed' ? 'ran' : 'not_run',
      reason: `confirmed by the operator: ${reason}`,
    })
  }
  const review = await store.get(decisionId)
  const transition = (await store.history(decisionId)).at(-1)
  return { status: 'recovered', review, transition }
}
