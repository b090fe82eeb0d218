/**
 * The one mapping from a stored review state to what a resumer reports when
 * it finds the review no longer `pending`. Workflow, batch-parent and agent
 * resumes, `resumePusharyAgentReview` and `dispatcher.recover` all use it, so
 * a state reads the same whichever path met it.
 */
import type { ReviewState } from '../machines/review-lifecycle.js'
import { claimedElsewhere } from './claim-lease.js'

/**
 * Why a resume did not (or did not itself) resume: the stable,
 * machine-readable cause beside a result's `reason` text. Closed on purpose:
 * switch on it.
 *
 * - `not_answered`: the person has not answered yet (`pending`).
 * - `step_resuspended`: the approval step refused the answer on its own
 *   re-read and suspended again; nothing ran, the answer is retried (`pending`).
 * - `no_review`: the store has no review for this decision (`unknown`).
 * - `claim_held`: another live resumer holds this review's claim (`busy`).
 * - `run_busy`: another review of the same run is resuming or uncertain (`busy`).
 * - `review_run_resuming`: the review's workflow run is being resumed by a
 *   caller that does not share this store (`busy`).
 * - `holder_gone`: the claim's holder stopped keeping it alive (`busy` with
 *   `recoveryNeeded`, the dispatcher's `recovery_needed`).
 * - `already_completed`: this review was already resumed (`duplicate`).
 * - `resumed_elsewhere`: another resumer without this store resumed the
 *   review's workflow run; its outcome is reported (`duplicate`).
 * - `already_stale` / `already_uncertain`: found settled so earlier.
 * - `resumed_outside`: the agent run was resumed outside the package (a
 *   native approve/decline) while the review still waited (`stale`).
 * - `call_changed`: the suspended call's tool, arguments or thread changed (`stale`).
 * - `action_version_changed`: the business action's version changed (`stale`).
 * - `auto_resumed`: the model answered the suspension itself (`stale`).
 * - `resume_failed`: the resume failed after the claim; the action may have run (`uncertain`).
 * - `release_failed`: nothing ran, but releasing the claim failed (`uncertain`).
 * - `permit_receipt`: recovery found the permit's receipt at the service and
 *   settled the review with the recorded outcome (`duplicate`).
 * - `permit_without_receipt`: the permit was spent but no receipt was
 *   recorded: the action may have started (`uncertain`).
 * - `permit_receipt_failed`: the permit's receipt says the action ran and
 *   failed (`uncertain`, action `failed`): an operator decides what next.
 * - `permit_refused`: the service refused the permit (action mismatch,
 *   expiry, not authorized): the action never ran (`stale`, action `refused`).
 * - `action_unknown`: the run ended without evidence of what its action did
 *   (`uncertain`, action `unknown`).
 * - `tool_failed`: the approved agent tool ran and threw (`uncertain`, action `failed`).
 * - `tool_input_refused`: the approved agent tool refused its input and never
 *   ran (`stale`, action `refused`).
 * - `run_ended`: the run that asked ended without using the decision; the
 *   question was withdrawn (cancelled) so nobody approves what will never
 *   run (`stale`, action `not_run`).
 * - `awaiting_approvers`: several approvers: this approver's answer was
 *   counted and the set waits on the others (`pending`; the review itself
 *   ended `completed`, nothing ran yet).
 *
 * @example
 * if (outcome.status === 'stale' && outcome.reasonCode === 'resumed_outside') await alertOperator(outcome.reason)
 */
export type PusharyReasonCode =
  | 'not_answered'
  | 'step_resuspended'
  | 'no_review'
  | 'claim_held'
  | 'run_busy'
  | 'review_run_resuming'
  | 'holder_gone'
  | 'already_completed'
  | 'resumed_elsewhere'
  | 'already_stale'
  | 'already_uncertain'
  | 'resumed_outside'
  | 'call_changed'
  | 'action_version_changed'
  | 'auto_resumed'
  | 'resume_failed'
  | 'release_failed'
  | 'permit_receipt'
  | 'permit_without_receipt'
  | 'permit_receipt_failed'
  | 'permit_refused'
  | 'action_unknown'
  | 'tool_failed'
  | 'tool_input_refused'
  | 'run_ended'
  | 'awaiting_approvers'

/** What a settled (terminal) review reports. */
export type SettledReviewResult =
  | { status: 'duplicate'; decisionId: string; reason: string; reasonCode: 'already_completed' }
  | {
      status: 'stale' | 'uncertain'
      decisionId: string
      reason: string
      reasonCode: 'already_stale' | 'already_uncertain'
    }

/** What a review that cannot be resumed now reports. */
export type StoredStateResult =
  | SettledReviewResult
  | { status: 'busy'; decisionId: string; reason: string; reasonCode: 'claim_held' }
  | { status: 'recovery_needed'; decisionId: string; reason: string; reasonCode: 'holder_gone' }

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
      return {
        status: 'duplicate',
        decisionId,
        reason: 'the review was already resumed',
        reasonCode: 'already_completed',
      }
    case 'stale':
      return {
        status: 'stale',
        decisionId,
        reason: 'the review was already found stale',
        reasonCode: 'already_stale',
      }
    case 'uncertain':
      return {
        status: 'uncertain',
        decisionId,
        reason: 'the review is uncertain; an operator must recover it',
        reasonCode: 'already_uncertain',
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
    case 'resuming': {
      const held = await claimedElsewhere(store, review.decisionId, lease.leaseMs, lease.now)
      return held.status === 'busy'
        ? { ...held, reason: "another resumer holds this review's claim", reasonCode: 'claim_held' }
        : { ...held, reasonCode: 'holder_gone' }
    }
    default:
      return settledResult(review.decisionId, review.state)
  }
}
