/**
 * Several approvers in `recover`, after a first pass cut short (no
 * suspension persisted: killed after some creates or saves). The restart
 * asks the same members again (the same keys land on the same decisions),
 * saves the reviews that were missing and, when the answers given meanwhile
 * settle the set, settles it at once and the run goes on: no member's resume
 * ran, so nobody else writes the record. It is written here, as the resume
 * that settles a set writes it:
 * - the decisive member's review (the last of `settledBy`) is claimed and
 *   ends from the evidence (the permit's receipt, the run's output, then its
 *   status) with the action's outcome (`completeElsewhere`);
 * - every other member ends `completed` when its answer was counted, `stale`
 *   when it was withdrawn (`approver-set-endings.ts`).
 */
import type { PusharyWorkflowReview } from '../store/review-schema.js'
import { claimNotingAnswer } from './answer-notes.js'
import { endOtherMembers, endSetMember, settledSetOf } from './approver-set-endings.js'
import { whileHoldingClaim } from './claim-lease.js'
import type { PusharyDispatchResult } from './dispatch-types.js'
import { completeElsewhere } from './review-endings.js'
import { claimLease, type DispatchContext } from './review-kinds.js'
import { settledResult } from './review-status.js'
import { approvalProgress, type RunSnapshotView } from './run-position.js'
import { verifiedAnswer } from './verified-answer.js'

type SettledSet = NonNullable<ReturnType<typeof settledSetOf>>

const RESTARTED =
  "recovered: the run's first pass was cut short before it suspended; restarted, the approval step settled the approvers' set from the answers already given"

/** Claims the decisive member's pending review and ends it from the evidence. */
async function endDecisive(
  context: DispatchContext,
  decisive: PusharyWorkflowReview,
  set: SettledSet,
  snapshot: RunSnapshotView,
): Promise<PusharyDispatchResult> {
  const decisionId = decisive.decisionId
  const verified = await verifiedAnswer(context, decisive)
  if ('status' in verified) return verified
  const claim = await claimNotingAnswer(context.store, decisionId, decisive.runId, verified.answeredAt)
  if (claim === 'busy') return { status: 'busy', decisionId }
  if (claim === 'settled') return { status: 'duplicate', decisionId }
  return whileHoldingClaim(context.store, decisionId, claimLease(context), () =>
    completeElsewhere(context, decisive, set.approved, snapshot, RESTARTED),
  )
}

/**
 * Where a member's review stands; a `pending` one that is not the decisive
 * member is ended as counted or withdrawn.
 */
async function endMember(
  context: DispatchContext,
  decisionId: string,
  set: SettledSet,
  decisive: boolean,
): Promise<PusharyDispatchResult | null> {
  const review = await context.store.get(decisionId)
  if (review?.target !== 'workflow-step') return null
  if (review.state === 'pending') {
    if (decisive) return null
    return endSetMember(context, review, set, await verifiedAnswer(context, review))
  }
  if (review.state === 'resuming') return { status: 'busy', decisionId }
  return settledResult(decisionId, review.state)
}

/**
 * After `recover` restarted a run's first pass: when the restarted approval
 * step settled the set, ends every member's review (the decisive one with the
 * action's outcome) and returns how `review` ended; `null` when the set is
 * not settled (the run waits again: the caller resumes as usual).
 *
 * @example
 * const ended = await endRestartedSet(context, review, await restartRunForRecovery(mastra, workflowId, runId))
 * if (ended) return ended
 */
export async function endRestartedSet(
  context: DispatchContext,
  review: PusharyWorkflowReview,
  snapshot: RunSnapshotView | null,
): Promise<PusharyDispatchResult | null> {
  if (!review.approverSet || !snapshot || approvalProgress(snapshot, review) !== 'completed') return null
  const set = settledSetOf(snapshot.context, review.stepId)
  const decisiveId = set?.settledBy.at(-1)
  if (!set || decisiveId === undefined) return null
  const decisive = await context.store.get(decisiveId)
  const ended =
    decisive?.target === 'workflow-step' && decisive.state === 'pending'
      ? await endDecisive(context, decisive, set, snapshot)
      : null
  const isDecisive = review.decisionId === decisiveId
  const own = (isDecisive ? ended : null) ?? (await endMember(context, review.decisionId, set, isDecisive))
  // Then the rest. The decisive review is the base, which endOtherMembers
  // skips: it is never ended without the action's outcome.
  await endOtherMembers(context, decisive?.target === 'workflow-step' ? decisive : review, snapshot)
  return own
}
