/**
 * Operator recovery (`dispatcher.recover`). The rules, in order:
 * - a crash-left `resuming` claim is taken over with a compare-and-set
 *   (`store.reclaim`), so of several concurrent recoverers exactly one acts;
 * - a run is never restarted past a completed approval: once the approval
 *   step returned, later steps may have run, so the review ends `uncertain`
 *   for the operator instead;
 * - a run whose approval step never suspended (a crash in its first pass) or
 *   never returned (a crash in its resume pass) is restarted: the step lands
 *   on the same decision and suspends again, and the verified answer is
 *   applied once.
 */
import { z } from 'zod/v4'
import type { PusharyWorkflowReview } from '../store/review-schema.js'
import { recordActionOutcome } from './action-evidence.js'
import { recoverSetMemberEnding } from './approver-set-endings.js'
import { permitHolderOf, readHeldPermitEvidence } from './approver-set-permit.js'
import { endRestartedSet } from './approver-set-recovery.js'
import { takeOverClaim, whileHoldingClaim } from './claim-lease.js'
import type { PusharyDispatchResult } from './dispatch-types.js'
import { errorMessage } from './resume-error.js'
import { restartRunForRecovery } from './resume-guard.js'
import { completeElsewhere, endReview } from './review-endings.js'
import { claimLease, type DispatchContext } from './review-kinds.js'
import { resumeClaimed, resumePendingReview } from './review-resumer.js'
import { settledResult } from './review-status.js'
import { approvalProgress, loadRunSnapshot, type RunSnapshotView } from './run-position.js'
import { type VerifiedAnswer, verifiedAnswer } from './verified-answer.js'
import { checkedCapability } from './worker-capability.js'

const workflowContextSchema = z.object({
  pushary: z.literal('workflow-step'),
  workflowId: z.string().min(1),
  runId: z.string().min(1),
  stepId: z.string().min(1),
  operationId: z.string().min(1),
  externalId: z.string().min(1),
})

/** Takes over a crash-left claim under this dispatcher's lease (`takeOverClaim`). */
function takeOver(context: DispatchContext, decisionId: string): Promise<PusharyDispatchResult | null> {
  return takeOverClaim(context.store, decisionId, claimLease(context), context.options.now?.() ?? new Date())
}

/** No review was saved: the first pass died between creating the decision and saving. */
async function recoverUnsaved(context: DispatchContext, decisionId: string): Promise<PusharyDispatchResult> {
  const decision = await context.client.decisions.get(decisionId)
  let binding: z.infer<typeof workflowContextSchema> | null = null
  try {
    const parsed = workflowContextSchema.safeParse(JSON.parse(decision.context ?? 'null'))
    binding = parsed.success ? parsed.data : null
  } catch {
    binding = null
  }
  if (!binding) return { status: 'unknown', decisionId, reason: 'no review is saved for this decision' }
  // A context is only text a decision's creator chose: another customer's
  // decision carrying a copy of a run's context must not restart that run.
  if (decision.externalId !== null && decision.externalId !== binding.externalId) {
    return {
      status: 'unknown',
      decisionId,
      reason: 'no review is saved, and the decision was asked of another customer than its context names',
    }
  }
  const snapshot = await loadRunSnapshot(context.mastra, binding.workflowId, binding.runId)
  if (!snapshot) return { status: 'unknown', decisionId, reason: 'the run that asked has no snapshot' }
  const progress = approvalProgress(snapshot, { ...binding, resumeLabel: decisionId })
  // Only a run left `running` by a crash in its first pass is restarted; a
  // run suspended on another decision has its own review and is not ours.
  if (progress !== 'in_progress' || snapshot.status !== 'running') {
    return {
      status: 'unknown',
      decisionId,
      reason: `no review is saved and the run is ${snapshot.status} with the approval step ${progress}`,
    }
  }
  const restarted = await restartRunForRecovery(context.mastra, binding.workflowId, binding.runId)
  const saved = await context.store.get(decisionId)
  if (saved?.target !== 'workflow-step') {
    return { status: 'unknown', decisionId, reason: 'the restarted run saved no review for this decision' }
  }
  // Several approvers answered before the restart: it settled the set at once.
  return (await endRestartedSet(context, saved, restarted)) ?? resumePendingReview(context, saved)
}

/**
 * Several approvers: another member's review that holds the run (`resuming`,
 * or `uncertain`), or `null`. While it does, a `running` run is that
 * member's resume (live, or crash-left for its own recovery), not a first
 * pass this review may restart.
 */
async function siblingHoldingRun(
  context: DispatchContext,
  review: PusharyWorkflowReview,
  snapshot: RunSnapshotView | null,
): Promise<PusharyWorkflowReview | null> {
  if (!review.approverSet) return null
  // Members asked by a later escalation are in the run's suspend payload, not
  // in the set this review was saved with.
  const payload = (
    snapshot?.context[review.stepId] as { suspendPayload?: { approvers?: unknown } } | undefined
  )?.suspendPayload
  const asked = Array.isArray(payload?.approvers)
    ? payload.approvers.flatMap((member: { decisionId?: unknown }) =>
        typeof member?.decisionId === 'string' ? [member.decisionId] : [],
      )
    : []
  for (const decisionId of new Set([...review.approverSet.decisionIds, ...asked])) {
    if (decisionId === review.decisionId) continue
    const member = await context.store.get(decisionId)
    if (member?.target === 'workflow-step' && (member.state === 'resuming' || member.state === 'uncertain'))
      return member
  }
  return null
}

/** A `pending` review whose run never persisted its suspension. */
async function recoverPending(
  context: DispatchContext,
  review: PusharyWorkflowReview,
): Promise<PusharyDispatchResult> {
  const snapshot = await loadRunSnapshot(context.mastra, review.workflowId, review.runId)
  const holder = await siblingHoldingRun(context, review, snapshot)
  if (holder) {
    return {
      status: 'busy',
      decisionId: review.decisionId,
      reason: `the review of approver ${holder.externalId} (${holder.decisionId}) is ${holder.state} and holds the run; recover that decision, this one ends with it`,
    }
  }
  if (snapshot && snapshot.status === 'running' && approvalProgress(snapshot, review) === 'in_progress') {
    // Killed after saving the review but before Mastra persisted the
    // suspension: only the first pass ran, so a restart asks nothing new.
    const restarted = await restartRunForRecovery(context.mastra, review.workflowId, review.runId)
    // Several approvers answered before the restart: it settled the set at once.
    const ended = await endRestartedSet(context, review, restarted)
    if (ended) return ended
  }
  return resumePendingReview(context, review)
}

/** A claimed review whose resumer died. */
async function recoverClaimed(
  context: DispatchContext,
  review: PusharyWorkflowReview,
): Promise<PusharyDispatchResult> {
  const decisionId = review.decisionId
  const problem = await checkedCapability(context.mastra, review, context.kinds.agent.capabilityProblem)
  if (problem) return { status: 'misconfigured', decisionId, ...problem }
  const verified = await verifiedAnswer(context, review)
  if ('status' in verified) {
    // A waiting member claimed only to wake its run for an escalation.
    if (verified.status === 'pending' && review.approverSet?.escalation) return recoverWake(context, review)
    return verified
  }
  const refused = await takeOver(context, decisionId)
  if (refused) return refused
  return whileHoldingClaim(context.store, decisionId, claimLease(context), () =>
    recoverTakenOver(context, review, verified),
  )
}

/**
 * A crash-left escalation wake: the member's own question is still open, so
 * nothing past the approval ran. A run left `running` by the wake is
 * restarted (its first pass re-asks whom it had asked, by the same keys, and
 * keeps the escalation's timer); the review goes back to `pending`.
 */
async function recoverWake(
  context: DispatchContext,
  review: PusharyWorkflowReview,
): Promise<PusharyDispatchResult> {
  const decisionId = review.decisionId
  const refused = await takeOver(context, decisionId)
  if (refused) return refused
  return whileHoldingClaim(context.store, decisionId, claimLease(context), async () => {
    const snapshot = await loadRunSnapshot(context.mastra, review.workflowId, review.runId)
    if (snapshot?.status === 'running' && approvalProgress(snapshot, review) === 'in_progress') {
      await restartRunForRecovery(context.mastra, review.workflowId, review.runId)
    }
    const reason = 'recovered: an escalation wake was cut short; the question is still open'
    try {
      await context.store.finish(decisionId, 'pending', reason)
    } catch (error) {
      return { status: 'uncertain', decisionId, reason, persistenceError: errorMessage(error) }
    }
    return { status: 'pending', decisionId, reason }
  })
}

async function recoverTakenOver(
  context: DispatchContext,
  review: PusharyWorkflowReview,
  verified: VerifiedAnswer,
): Promise<PusharyDispatchResult> {
  const decisionId = review.decisionId
  let snapshot: RunSnapshotView | null = await loadRunSnapshot(
    context.mastra,
    review.workflowId,
    review.runId,
  )
  if (!snapshot) return endReview(context, decisionId, 'uncertain', 'recovery found no snapshot of the run')
  let progress = approvalProgress(snapshot, review)
  if (progress === 'completed') {
    // Several approvers: a member claimed only to be ended by the set's record.
    const ended = review.approverSet
      ? await recoverSetMemberEnding(context, review, snapshot, verified)
      : null
    if (ended) return ended
    // Evidence before status: the permit's receipt, then the run's output
    // (a re-driven run that met its own spent permit ends `success` with a
    // refusal and ran nothing), and only then whether the run finished.
    if (snapshot.status === 'success' || (await hasRecordedPermit(context, review, snapshot))) {
      return completeElsewhere(
        context,
        review,
        verified.answer.approved,
        snapshot,
        'recovered: the approval step had returned before the crash',
      )
    }
    const reason =
      'the approval step completed before the crash, so later steps may have run; confirm them, then store.recover(decisionId, "completed" | "stale", reason)'
    return endReview(context, decisionId, 'uncertain', reason, {
      outcome: 'unknown',
      reasonCode: 'action_unknown',
    })
  }
  if (progress === 'in_progress' && snapshot.status === 'running') {
    // The crash hit the approval step's own resume pass: nothing past it ran.
    snapshot = await restartRunForRecovery(context.mastra, review.workflowId, review.runId)
    progress = snapshot ? approvalProgress(snapshot, review) : 'ended'
    // Several approvers: the restarted step reads every answer and settles the
    // set itself, so the steps past it ran in this restart, not before the crash.
    if (review.approverSet && progress === 'completed' && snapshot?.status === 'success') {
      return completeElsewhere(
        context,
        review,
        verified.answer.approved,
        snapshot,
        "recovered: the restarted approval step settled the approvers' set and the run finished",
      )
    }
  }
  if (progress === 'suspended') return resumeClaimed(context, review, verified)
  const reason = `recovery found the run ${snapshot?.status ?? 'missing'} with the approval ${progress}; inspect it before marking this review`
  return endReview(context, decisionId, 'uncertain', reason)
}

/**
 * Whether a protected step recorded a permit for this review (a store without
 * permits has none); for several approvers, on whichever member it was spent.
 */
async function hasRecordedPermit(
  context: DispatchContext,
  review: PusharyWorkflowReview,
  snapshot: RunSnapshotView,
): Promise<boolean> {
  return (await permitHolderOf(context.store, review, snapshot.context)) !== null
}

/**
 * An `uncertain` review: a `succeeded` receipt recorded for its permit
 * settles it `completed`, no person asked. A `failed` receipt is evidence
 * too, but of an action that failed: the review stays `uncertain` with the
 * action `failed` recorded, as the normal path leaves it, so the two paths
 * agree. Otherwise it stays for the operator.
 */
async function recoverUncertain(
  context: DispatchContext,
  review: PusharyWorkflowReview,
): Promise<PusharyDispatchResult> {
  const decisionId = review.decisionId
  // Several approvers: the permit may be another member's (the set's decisive approval).
  const snapshot = review.approverSet
    ? await loadRunSnapshot(context.mastra, review.workflowId, review.runId)
    : null
  const evidence = await readHeldPermitEvidence(context.client, context.store, review, snapshot?.context)
  if (evidence.kind === 'receipt' && evidence.outcome === 'succeeded') {
    await recordActionOutcome(context.store, decisionId, { outcome: 'ran', reason: evidence.reason })
    await context.store.recover(decisionId, 'completed', evidence.reason)
    return {
      status: 'duplicate',
      decisionId,
      reason: evidence.reason,
      reasonCode: 'permit_receipt',
      actionOutcome: 'ran',
    }
  }
  if (evidence.kind === 'receipt') {
    const reason = `${evidence.reason}; decide what to do about the failed action, then store.recover(decisionId, "completed" | "stale", reason)`
    await recordActionOutcome(context.store, decisionId, { outcome: 'failed', reason })
    return {
      status: 'uncertain',
      decisionId,
      reason,
      reasonCode: 'permit_receipt_failed',
      actionOutcome: 'failed',
    }
  }
  if (evidence.kind === 'started') {
    return {
      status: 'uncertain',
      decisionId,
      reason: evidence.reason,
      reasonCode: 'permit_without_receipt',
      actionOutcome: 'unknown',
    }
  }
  return settledResult(decisionId, 'uncertain')
}

/**
 * The body of `dispatcher.recover` (run inside the per-run queue).
 *
 * @example
 * const result = await recoverDecision(context, decisionId)
 */
export async function recoverDecision(
  context: DispatchContext,
  decisionId: string,
): Promise<PusharyDispatchResult> {
  const review = await context.store.get(decisionId)
  if (!review) return recoverUnsaved(context, decisionId)
  if (review.target === 'batch-parent') return context.kinds.parent.recover(context, review)
  if (review.target === 'agent') return context.kinds.agent.recover(context, review)
  if (review.state === 'pending') return recoverPending(context, review)
  if (review.state === 'resuming') return recoverClaimed(context, review)
  if (review.state === 'uncertain') return recoverUncertain(context, review)
  return settledResult(decisionId, review.state)
}
