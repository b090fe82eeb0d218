/**
 * How a claimed workflow review ends: `completed`, `stale`, `uncertain`, or
 * released back to `pending` when provably nothing ran. Every write that
 * fails is reported (`persistenceError`), never thrown, so an outcome is
 * never lost.
 */
import type { PusharyActionOutcome, PusharyWorkflowReview } from '../store/review-schema.js'
import { endingOfRun, finishWithOutcome } from './action-evidence.js'
import { describeSet, endAppliedMember, endOtherMembers, settledSetOf } from './approver-set-endings.js'
import type { PusharyDispatchResult } from './dispatch-types.js'
import { errorMessage } from './resume-error.js'
import type { PusharyResumeAttempt } from './resume-guard.js'
import { type DispatchContext, parentOptions } from './review-kinds.js'
import type { PusharyReasonCode } from './review-status.js'
import { loadRunSnapshot, type RunSnapshotView } from './run-position.js'
import type { VerifiedAnswer } from './verified-answer.js'

/**
 * Ends a claimed review and reports it. With `action`, the action outcome is
 * recorded first (evidence before the ending). A failed write leaves the
 * claim `resuming` (visible as `busy`) and is reported as `persistenceError`.
 *
 * @example
 * return endReview(context, decisionId, 'uncertain', 'recovery found no snapshot of the run')
 */
export async function endReview(
  context: DispatchContext,
  decisionId: string,
  state: 'stale' | 'uncertain',
  reason: string,
  action?: { outcome: PusharyActionOutcome; reasonCode?: PusharyReasonCode | undefined },
): Promise<PusharyDispatchResult> {
  const described = {
    ...(action?.reasonCode === undefined ? {} : { reasonCode: action.reasonCode }),
    ...(action === undefined ? {} : { actionOutcome: action.outcome }),
  }
  try {
    if (action) await finishWithOutcome(context.store, decisionId, state, reason, { ...action, reason })
    else await context.store.finish(decisionId, state, reason)
    return { status: state, decisionId, reason, ...described }
  } catch (error) {
    return { status: state, decisionId, reason, ...described, persistenceError: errorMessage(error) }
  }
}

/**
 * Ends a claimed review `stale`; for a multi-item child, also settles its
 * parent (the stale item counts as not approved), so the parent never waits
 * on an item that will never resume.
 *
 * @example
 * return endStale(context, review, 'the run is success and no longer waits on this decision')
 */
export async function endStale(
  context: DispatchContext,
  review: PusharyWorkflowReview,
  reason: string,
  action?: { outcome: PusharyActionOutcome; reasonCode?: PusharyReasonCode | undefined },
): Promise<PusharyDispatchResult> {
  const result = await endReview(context, review.decisionId, 'stale', reason, action)
  if (result.status !== 'stale' || !review.parent || result.persistenceError) return result
  try {
    const parent = await context.kinds.parent.settle({
      mastra: context.mastra,
      store: context.store,
      parent: review.parent,
      ...parentOptions(context),
    })
    return { ...result, parent }
  } catch (error) {
    return { ...result, parent: { status: 'failed', reason: errorMessage(error) } }
  }
}

/**
 * Releases a claim whose resume provably ran nothing; the answer is retried.
 *
 * @example
 * return releaseReview(context, decisionId, 'the step is still suspended after the resume; nothing ran')
 */
export async function releaseReview(
  context: DispatchContext,
  decisionId: string,
  reason: string,
): Promise<PusharyDispatchResult> {
  try {
    await context.store.finish(decisionId, 'pending', reason)
    return { status: 'pending', decisionId, reason }
  } catch (error) {
    return { status: 'uncertain', decisionId, reason, persistenceError: errorMessage(error) }
  }
}

/**
 * A review whose target finished without the dispatcher (a direct resume
 * that the step verified against the service, or a re-driven run): what
 * happened to the action is read from the evidence (the permit's receipt,
 * the run's output) before the run's status, so a run that met a refused or
 * spent permit is never recorded `completed` with nothing run.
 *
 * @example
 * if (progress === 'completed') return completeElsewhere(context, review, verified.answer.approved, snapshot)
 */
export async function completeElsewhere(
  context: DispatchContext,
  review: PusharyWorkflowReview,
  approved: boolean | null,
  snapshot: RunSnapshotView | null,
  elsewhere: string,
): Promise<PusharyDispatchResult> {
  const decisionId = review.decisionId
  const ending = await endingOfRun(
    context,
    review,
    {
      approved,
      runStatus: snapshot?.status ?? 'missing',
      runResult: snapshot?.result,
      steps: snapshot?.context,
    },
    { probe: true },
  )
  if (ending.state !== 'completed') {
    const reason = `${elsewhere}; ${ending.reason}`
    const action = { outcome: ending.outcome, reasonCode: ending.reasonCode }
    return ending.state === 'stale'
      ? endStale(context, review, reason, action)
      : endReview(context, decisionId, 'uncertain', reason, action)
  }
  const reason = `${elsewhere}; ${ending.reason}`
  try {
    await finishWithOutcome(context.store, decisionId, 'completed', reason, {
      outcome: ending.outcome,
      reason,
    })
    return {
      status: 'duplicate',
      decisionId,
      reason,
      ...(ending.outcome === null ? {} : { actionOutcome: ending.outcome }),
      ...(ending.reasonCode === undefined ? {} : { reasonCode: ending.reasonCode }),
    } as PusharyDispatchResult
  } catch (error) {
    return {
      status: 'uncertain',
      decisionId,
      reason,
      ...(ending.outcome === null ? {} : { actionOutcome: ending.outcome }),
      persistenceError: errorMessage(error),
    }
  }
}

/** Refusals after which nothing ran and the same answer may be retried. */
const RETRY_LATER: ReadonlySet<string> = new Set(['resume_conflict', 'no_storage', 'unknown_workflow'])

/**
 * Ends a claimed review after its resume: `completed` (then its multi-item
 * parent settles and `onResumed` runs), released when nothing ran, `stale`
 * when the target is gone, `uncertain` when what ran is unknown.
 *
 * @example
 * return endResumedReview(context, review, verified, await attemptResume(request, review))
 */
export async function endResumedReview(
  context: DispatchContext,
  review: PusharyWorkflowReview,
  verified: VerifiedAnswer,
  attempt: PusharyResumeAttempt,
): Promise<PusharyDispatchResult> {
  const { store, options } = context
  const decisionId = review.decisionId
  if ('failed' in attempt) {
    return endReview(context, decisionId, 'uncertain', errorMessage(attempt.failed), {
      outcome: 'unknown',
      reasonCode: 'resume_failed',
    })
  }
  if ('refused' in attempt) {
    // Refused before Mastra ran anything; the attempt says what became of the target.
    if (attempt.progress === 'completed') {
      const snapshot = await loadRunSnapshot(context.mastra, review.workflowId, review.runId)
      return completeElsewhere(
        context,
        review,
        verified.answer.approved,
        snapshot,
        'the step was resumed outside the dispatcher with this answer',
      )
    }
    if (RETRY_LATER.has(attempt.refused.code))
      return releaseReview(context, decisionId, attempt.refused.message)
    return endStale(context, review, attempt.refused.message)
  }
  const { outcome } = attempt
  if (outcome.stillSuspended && review.approverSet) {
    // Several approvers: the step applied this answer and waits on the others.
    const applied = await endAppliedMember(context, review, verified)
    if (applied) return applied
  }
  if (outcome.stillSuspended) {
    // The step suspended itself again (e.g. it could not re-read its
    // decision): it returned nothing, so nothing after it ran. Retry later.
    return releaseReview(context, decisionId, 'the step is still suspended after the resume; nothing ran')
  }
  // Evidence before status: a run that ended `success` with a refused permit
  // ran nothing; one that ended `failed` may still have a receipt.
  const cause = (outcome.result.error as { message?: string } | undefined)?.message
  // Several approvers: the set's verdict, not this one answer, decided what ran.
  const set = review.approverSet
    ? settledSetOf((outcome.result as { steps?: unknown }).steps, review.stepId)
    : null
  const ending = await endingOfRun(
    context,
    review,
    {
      approved: set ? set.approved : verified.answer.approved,
      runStatus: outcome.result.status,
      runResult: outcome.result.result,
      steps: (outcome.result as { steps?: unknown }).steps,
    },
    { probe: false },
  )
  if (ending.state !== 'completed') {
    // A failed run never finishes a review `completed`: what ran of it is
    // for an operator to confirm (`reviews show`, then `reviews recover`).
    const reason =
      outcome.result.status === 'failed'
        ? `the run ended failed after the resume${cause ? ` (${cause})` : ''}; ${ending.reason}`
        : ending.reason
    const action = { outcome: ending.outcome, reasonCode: ending.reasonCode }
    return ending.state === 'stale'
      ? endStale(context, review, reason, action)
      : endReview(context, decisionId, 'uncertain', reason, action)
  }
  try {
    await finishWithOutcome(
      store,
      decisionId,
      'completed',
      set ? `${describeSet(set)}; ${ending.reason}` : ending.reasonCode ? ending.reason : undefined,
      ending,
    )
  } catch (error) {
    return {
      status: 'uncertain',
      decisionId,
      reason: 'the run resumed but the review could not be finished',
      ...(ending.outcome === null ? {} : { actionOutcome: ending.outcome }),
      persistenceError: errorMessage(error),
    }
  }
  if (review.approverSet) await endOtherMembers(context, review, set)
  const resumed: PusharyDispatchResult = {
    status: 'resumed',
    decisionId,
    workflowId: review.workflowId,
    runId: review.runId,
    answer: verified.answer,
    runStatus: outcome.result.status,
    ...(ending.outcome === null ? {} : { actionOutcome: ending.outcome }),
  }
  if (review.parent) {
    // The child is done whatever happens to its parent; a failure here is
    // reported, and the next child's settle (or reconcile) retries it.
    try {
      resumed.parent = await context.kinds.parent.settle({
        mastra: context.mastra,
        store,
        parent: review.parent,
        ...parentOptions(context),
      })
    } catch (error) {
      resumed.parent = { status: 'failed', reason: errorMessage(error) }
    }
  }
  if (options.onResumed) {
    try {
      await options.onResumed({
        review,
        answer: verified.answer,
        runStatus: outcome.result.status,
        runResult: outcome.result.result,
      })
    } catch (error) {
      resumed.hookError = errorMessage(error)
    }
  }
  return resumed
}
