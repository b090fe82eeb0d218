import { answerPusharyQuestion, type PusharyAnswer } from '../pushary/question.js'
import type { Decision } from '../pushary/wire-responses.js'
import type { PusharyApprovalResume } from '../steps/approval-schemas.js'
import { readReviewedDecision } from '../steps/decision-expiry.js'
import { handOverVerifiedDecision } from '../steps/verified-handoff.js'
import { checkWorkflowDecision } from '../steps/workflow-binding.js'
import type { PusharyReview, PusharyWorkflowReview } from '../store/review-schema.js'
import { DEFAULT_CLAIM_LEASE_MS, whileHoldingClaim } from './claim-lease.js'
import type { PusharyDispatchResult } from './dispatch-types.js'
import { isPusharyResumeError } from './resume-error.js'
import { resumePusharyApproval } from './resume-guard.js'
import type { DispatchContext } from './review-kinds.js'
import { approvalProgress, loadRunSnapshot, type RunSnapshotView } from './run-position.js'
import { capabilityProblem, type PusharyCapabilityProblem, workflowCapability } from './worker-capability.js'

/** A verified answer, ready to resume with, and the decision it was read from. */
export interface VerifiedAnswer {
  answer: PusharyAnswer
  resumeData: PusharyApprovalResume
  decision: Decision
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

function toResumeData(decision: Decision): PusharyApprovalResume {
  const status = decision.status === 'pending' ? 'answered' : decision.status
  return { answer: status === 'answered' ? decision.value : null, status }
}

export function conflictOption(context: DispatchContext): { conflictTimeoutMs?: number } {
  const ms = context.options.conflictTimeoutMs
  return ms === undefined ? {} : { conflictTimeoutMs: ms }
}

/** Timing options of the multi-item parent calls: the resume conflict wait and the claim lease. */
export function parentOptions(context: DispatchContext): {
  conflictTimeoutMs?: number
  claimLeaseMs: number
} {
  return { ...conflictOption(context), claimLeaseMs: context.options.claimLeaseMs ?? DEFAULT_CLAIM_LEASE_MS }
}

/**
 * Re-reads the decision from the service (the callback body is never
 * authority) and checks it against the saved binding.
 */
export async function verifiedAnswer(
  context: DispatchContext,
  review: PusharyWorkflowReview,
): Promise<VerifiedAnswer | PusharyDispatchResult> {
  const decisionId = review.decisionId
  const decision = await readReviewedDecision(context.client, review, context.options.now?.() ?? new Date())
  const mismatch = checkWorkflowDecision(review, decision)
  if (mismatch) return { status: 'mismatch', decisionId, reason: mismatch }
  if (decision.status === 'pending') return { status: 'pending', decisionId }
  const resumeData = toResumeData(decision)
  try {
    return {
      answer: answerPusharyQuestion(review.question, resumeData.status, resumeData.answer),
      resumeData,
      decision,
    }
  } catch (error) {
    return { status: 'invalid_answer', decisionId, reason: errorMessage(error) }
  }
}

/**
 * An error in this process's own configuration (a workflow of the review not
 * registered here or letting Mastra restart its runs, Mastra on no or another
 * storage, the agent or its tool missing) is never a verdict about the
 * review: checked before any claim, reported as retryable `misconfigured`
 * (`worker-capability.ts`).
 */
export async function configurationProblem(
  context: DispatchContext,
  review: PusharyReview,
): Promise<Misconfigured | null> {
  try {
    return misconfigured(
      review,
      await capabilityProblem(context.mastra, review, context.kinds.agent.capabilityProblem),
    )
  } catch (error) {
    return misconfigured(review, storageUnreadable(error))
  }
}

type Misconfigured = Extract<PusharyDispatchResult, { status: 'misconfigured' }>

function misconfigured(
  review: PusharyReview,
  problem: PusharyCapabilityProblem | null,
): Misconfigured | null {
  return problem ? { status: 'misconfigured', decisionId: review.decisionId, ...problem } : null
}

function storageUnreadable(error: unknown): PusharyCapabilityProblem {
  return { missing: 'storage', reason: `this process cannot read its Mastra storage: ${errorMessage(error)}` }
}

/**
 * {@link configurationProblem} for a workflow step, keeping the run snapshot
 * the check read: the one read of the run before the claim.
 */
async function checkedSnapshot(
  context: DispatchContext,
  review: PusharyWorkflowReview,
): Promise<{ misconfigured: Misconfigured } | { misconfigured: null; snapshot: RunSnapshotView }> {
  let checked: Awaited<ReturnType<typeof workflowCapability>>
  try {
    checked = await workflowCapability(context.mastra, review)
  } catch (error) {
    return { misconfigured: misconfigured(review, storageUnreadable(error)) as Misconfigured }
  }
  if (checked.problem) return { misconfigured: misconfigured(review, checked.problem) as Misconfigured }
  return { misconfigured: null, snapshot: checked.snapshot }
}

/**
 * Ends a claimed review and reports it. A failed write leaves the claim
 * `resuming` (visible as `busy`) and is reported as `persistenceError`
 * rather than thrown, so the outcome is never lost.
 */
export async function endReview(
  context: DispatchContext,
  decisionId: string,
  state: 'stale' | 'uncertain',
  reason: string,
): Promise<PusharyDispatchResult> {
  try {
    await context.store.finish(decisionId, state, reason)
    return { status: state, decisionId, reason }
  } catch (error) {
    return { status: state, decisionId, reason, persistenceError: errorMessage(error) }
  }
}

/**
 * Ends a claimed review `stale`; for a multi-item child, also settles its
 * parent (the stale item counts as not approved), so the parent never waits
 * on an item that will never resume.
 */
async function endStale(
  context: DispatchContext,
  review: PusharyWorkflowReview,
  reason: string,
): Promise<PusharyDispatchResult> {
  const result = await endReview(context, review.decisionId, 'stale', reason)
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

/** Releases a claim whose resume provably ran nothing; the answer is retried. */
async function releaseReview(
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
 * that the step verified against the service): the approval executed, so
 * the review is recorded `completed` with the reason, never `stale`.
 */
export async function completeElsewhere(
  context: DispatchContext,
  decisionId: string,
  reason: string,
): Promise<PusharyDispatchResult> {
  try {
    await context.store.finish(decisionId, 'completed', reason)
    return { status: 'duplicate', decisionId, reason }
  } catch (error) {
    return { status: 'uncertain', decisionId, reason, persistenceError: errorMessage(error) }
  }
}

/** Resumes a claimed review's exact target and finishes the review. */
export async function resumeClaimed(
  context: DispatchContext,
  review: PusharyWorkflowReview,
  verified: VerifiedAnswer,
): Promise<PusharyDispatchResult> {
  const { mastra, store, options } = context
  const decisionId = review.decisionId
  let outcome: Awaited<ReturnType<typeof resumePusharyApproval>>
  // The step takes this read instead of asking the service again; the proof
  // is single-use and ends with this resume (see steps/verified-handoff.ts).
  const handoff = handOverVerifiedDecision(context.client, review, verified.decision)
  try {
    outcome = await resumePusharyApproval({
      mastra,
      workflowId: review.workflowId,
      runId: review.runId,
      label: review.resumeLabel,
      resumeData: { ...verified.resumeData, proof: handoff.proof },
      ...conflictOption(context),
    })
  } catch (error) {
    handoff.discard()
    if (!isPusharyResumeError(error)) return endReview(context, decisionId, 'uncertain', errorMessage(error))
    // Refused before Mastra ran anything. Find out what became of the target.
    const snapshot = await loadRunSnapshot(mastra, review.workflowId, review.runId)
    const progress = snapshot ? approvalProgress(snapshot, review) : 'ended'
    if (progress === 'completed') {
      return completeElsewhere(
        context,
        decisionId,
        'the step was resumed outside the dispatcher with this answer',
      )
    }
    if (
      error.code === 'resume_conflict' ||
      error.code === 'no_storage' ||
      error.code === 'unknown_workflow'
    ) {
      return releaseReview(context, decisionId, error.message)
    }
    return endStale(context, review, error.message)
  }
  handoff.discard()
  if (outcome.stillSuspended) {
    // The step suspended itself again (e.g. it could not re-read its
    // decision): it returned nothing, so nothing after it ran. Retry later.
    return releaseReview(context, decisionId, 'the step is still suspended after the resume; nothing ran')
  }
  if (outcome.result.status === 'failed') {
    // A failed run never finishes a review `completed`: what ran of it is
    // for an operator to confirm (`reviews show`, then `reviews recover`).
    const cause = (outcome.result.error as { message?: string } | undefined)?.message
    return endReview(
      context,
      decisionId,
      'uncertain',
      `the run ended failed after the resume${cause ? ` (${cause})` : ''}; confirm which of its steps ran, then reviews recover ${decisionId} completed|stale`,
    )
  }
  try {
    await store.finish(decisionId, 'completed')
  } catch (error) {
    return {
      status: 'uncertain',
      decisionId,
      reason: 'the run resumed but the review could not be finished',
      persistenceError: errorMessage(error),
    }
  }
  const resumed: PusharyDispatchResult = {
    status: 'resumed',
    decisionId,
    workflowId: review.workflowId,
    runId: review.runId,
    answer: verified.answer,
    runStatus: outcome.result.status,
  }
  if (review.parent) {
    // The child is done whatever happens to its parent; a failure here is
    // reported, and the next child's settle (or reconcile) retries it.
    try {
      resumed.parent = await context.kinds.parent.settle({
        mastra,
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

/** The queue body of `resumeDecision` for a `pending` workflow review. */
export async function resumePendingReview(
  context: DispatchContext,
  review: PusharyWorkflowReview,
): Promise<PusharyDispatchResult> {
  const decisionId = review.decisionId
  // The capability check reads the run (it must exist in this worker's
  // storage); that read is the one this resume decides from before the claim.
  const checked = await checkedSnapshot(context, review)
  if (checked.misconfigured) return checked.misconfigured
  const { snapshot } = checked
  const verified = await verifiedAnswer(context, review)
  if ('status' in verified) return verified

  // Mastra persists the snapshot only after the suspending step returns, so
  // a fast answer can arrive before the run is suspended. Do not claim then.
  if (['running', 'pending', 'waiting'].includes(snapshot.status)) {
    return { status: 'not_suspended_yet', decisionId, runStatus: snapshot.status }
  }
  const progress = approvalProgress(snapshot, review)

  switch (await context.store.claim(decisionId, review.runId)) {
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
        decisionId,
        'the step was resumed outside the dispatcher with this answer',
      )
    }
    if (progress !== 'suspended') {
      return endStale(context, review, `the run is ${snapshot.status} and no longer waits on this decision`)
    }
    return resumeClaimed(context, review, verified)
  })
}

/** The claim lease this dispatcher uses. */
export function claimLease(context: DispatchContext): number {
  return context.options.claimLeaseMs ?? DEFAULT_CLAIM_LEASE_MS
}
