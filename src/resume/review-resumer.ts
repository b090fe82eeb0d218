/**
 * The verified, claimed resume of one workflow review: read the run once,
 * verify the answer with the service, claim, resume the exact target, end
 * the review (`review-endings.ts`).
 */
import { type ResumeSpans, startResumeSpans } from '../observability/resume-spans.js'
import { traceRefOf } from '../observability/trace-ref.js'
import { handOverVerifiedDecision } from '../steps/verified-handoff.js'
import type { PusharyWorkflowReview } from '../store/review-schema.js'
import { claimNotingAnswer } from './answer-notes.js'
import { endSetMember, settledSetOf } from './approver-set-endings.js'
import { escalationDue, wakeForEscalation } from './approver-set-escalation.js'
import { whileHoldingClaim } from './claim-lease.js'
import type { PusharyDispatchResult } from './dispatch-types.js'
import { attemptResume } from './resume-guard.js'
import { completeElsewhere, endResumedReview, endStale } from './review-endings.js'
import { claimLease, conflictOption, type DispatchContext } from './review-kinds.js'
import type { RunSnapshotView } from './run-position.js'
import { type VerifiedAnswer, verifiedAnswer } from './verified-answer.js'
import { runEndedWithout, withdrawQuestion } from './withdraw-question.js'
import { checkedWorkflowPosition } from './worker-capability.js'

/**
 * Resumes a claimed review's exact target (it must be suspended on it) and
 * ends the review.
 *
 * @example
 * return resumeClaimed(context, review, verified)
 */
export async function resumeClaimed(
  context: DispatchContext,
  review: PusharyWorkflowReview,
  verified: VerifiedAnswer,
): Promise<PusharyDispatchResult> {
  // The step takes this read instead of asking the service again; the proof
  // is single-use and ends with this resume (see steps/verified-handoff.ts).
  const handoff = handOverVerifiedDecision(context.client, review, verified.decision)
  const attempt = await attemptResume(
    {
      mastra: context.mastra,
      workflowId: review.workflowId,
      runId: review.runId,
      label: review.resumeLabel,
      resumeData: {
        ...verified.resumeData,
        proof: handoff.proof,
        // Several approvers: names the decision the proof is for (never authority).
        ...(review.approverSet ? { decisionId: review.decisionId } : {}),
      },
      ...conflictOption(context),
    },
    review,
  )
  handoff.discard()
  return endResumedReview(context, review, verified, attempt)
}

/**
 * The queue body of `resumeDecision` for a `pending` workflow review.
 *
 * @example
 * return blocked ?? resumePendingReview(context, review)
 */
export async function resumePendingReview(
  context: DispatchContext,
  review: PusharyWorkflowReview,
): Promise<PusharyDispatchResult> {
  const decisionId = review.decisionId
  // The capability check reads the run (it must exist in this worker's
  // storage); that read is the one this resume decides from before the claim.
  const position = await checkedWorkflowPosition(context.mastra, review)
  if (position.problem) return { status: 'misconfigured', decisionId, ...position.problem }
  const { snapshot, progress } = position
  const verified = await verifiedAnswer(context, review)
  // Approval spans in the asking trace (nothing when Mastra traced no ask).
  const spans = startResumeSpans(context.mastra, traceRefOf(snapshot.context, review.stepId), {
    decisionId,
    questionType: review.question.type ?? 'confirm',
    externalId: review.externalId,
    kind: review.target,
  })
  if (review.approverSet && progress === 'completed') {
    // The step settled its set without this decision's resume.
    const set = settledSetOf(snapshot.context, review.stepId)
    if (set) return endSetMember(context, review, set, verified)
  }
  if ('status' in verified) {
    // Several approvers: a waiting member wakes its run when the next tier is due.
    const now = context.options.now?.() ?? new Date()
    if (verified.status === 'pending' && progress === 'suspended' && escalationDue(snapshot, review, now)) {
      return wakeForEscalation(context, review, snapshot)
    }
    // Still open, but nobody will ever resume it: withdraw the question.
    if (verified.status === 'pending' && runEndedWithout(snapshot, progress)) {
      return withdrawQuestion(context, review, snapshot.status)
    }
    return verified
  }

  // Mastra persists the snapshot only after the suspending step returns, so
  // a fast answer can arrive before the run is suspended. Do not claim then.
  spans.answered({
    status: verified.answer.status,
    approved: verified.answer.approved,
    answeredAt: verified.decision.answeredAt,
  })
  return spans.ended(await claimAndResume(context, review, verified, position, spans))
}

async function claimAndResume(
  context: DispatchContext,
  review: PusharyWorkflowReview,
  verified: VerifiedAnswer,
  { snapshot, progress }: { snapshot: RunSnapshotView; progress: string },
  spans: ResumeSpans,
): Promise<PusharyDispatchResult> {
  const decisionId = review.decisionId
  if (['running', 'pending', 'waiting'].includes(snapshot.status)) {
    return { status: 'not_suspended_yet', decisionId, runStatus: snapshot.status }
  }
  const claim = await claimNotingAnswer(context.store, decisionId, review.runId, verified.answeredAt)
  spans.claimed(claim)
  switch (claim) {
    case 'busy':
      return { status: 'busy', decisionId }
    case 'settled':
      return { status: 'duplicate', decisionId }
    case 'claimed':
      break
  }
  return whileHoldingClaim(context.store, decisionId, claimLease(context), async () => {
    if (progress === 'completed') {
      return completeElsewhere(
        context,
        review,
        verified.answer.approved,
        snapshot,
        'the step was resumed outside the dispatcher with this answer',
      )
    }
    if (progress !== 'suspended') {
      return endStale(context, review, `the run is ${snapshot.status} and no longer waits on this decision`)
    }
    return resumeClaimed(context, review, verified)
  })
}
