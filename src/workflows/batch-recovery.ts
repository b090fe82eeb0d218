/**
 * Operator recovery of a multi-item parent (`dispatcher.recover` of its
 * review), by the rules of `resume/recovery.ts`: never past a completed batch
 * step; a parent killed between its claim and its resume is released and
 * resumed once; one killed inside its batch step (fan-out or resume pass) is
 * restarted under the claim.
 */
import { takeOverClaim, whileHoldingClaim } from '../resume/claim-lease.js'
import type { PusharyDispatchResult } from '../resume/dispatch-types.js'
import { errorMessage } from '../resume/resume-error.js'
import { restartRunForRecovery } from '../resume/resume-guard.js'
import { endReview } from '../resume/review-endings.js'
import { claimLease, conflictOption, type DispatchContext, parentOptions } from '../resume/review-kinds.js'
import { loadRunSnapshot, type RunSnapshotView } from '../resume/run-position.js'
import type { PusharyBatchParentReview } from '../store/review-schema.js'
import { resumeBatchParent, settleBatchParent } from './batch-parent.js'

/**
 * A batch parent whose fan-out or resume died. Same rule: never past a
 * completed batch step. A `pending` parent on a `running` run was killed
 * after its fan-out released the claim but before Mastra persisted the
 * suspension: claiming it (one winner; `busy` while another review of the
 * run is being resumed) makes this recoverer the one that restarts it.
 *
 * @example
 * const result = await recoverBatchParent(context, parentReview)
 */
export async function recoverBatchParent(
  context: DispatchContext,
  review: PusharyBatchParentReview,
): Promise<PusharyDispatchResult> {
  const decisionId = review.decisionId
  if (review.state === 'pending' && (await parentRunning(context, review))) {
    const reason = 'dispatcher.recover: the parent run was left running by a fan-out that never suspended'
    switch (await context.store.claim(decisionId, review.runId, reason)) {
      case 'busy':
        return { status: 'busy', decisionId, reason: 'another resume or recovery of this run holds it' }
      case 'settled':
        return { status: 'duplicate', decisionId }
      case 'claimed':
        return whileHoldingClaim(context.store, decisionId, claimLease(context), () =>
          recoverParentTakenOver(context, review),
        )
    }
  }
  if (review.state === 'pending') {
    const outcome = await resumeBatchParent({
      mastra: context.mastra,
      store: context.store,
      review,
      claimLeaseMs: claimLease(context),
    })
    return { status: 'parent', decisionId, parent: outcome }
  }
  if (review.state !== 'resuming') return { status: 'duplicate', decisionId }
  const refused = await takeOverClaim(
    context.store,
    decisionId,
    claimLease(context),
    context.options.now?.() ?? new Date(),
  )
  if (refused) return refused
  return whileHoldingClaim(context.store, decisionId, claimLease(context), () =>
    recoverParentTakenOver(context, review),
  )
}

async function recoverParentTakenOver(
  context: DispatchContext,
  review: PusharyBatchParentReview,
): Promise<PusharyDispatchResult> {
  const decisionId = review.decisionId
  const snapshot = await loadRunSnapshot(context.mastra, review.workflowId, review.runId)
  const step = batchStepStatus(snapshot, review)
  if (snapshot?.status === 'success') {
    await context.store.finish(decisionId, 'completed', 'recovered: the parent run had finished')
    return { status: 'duplicate', decisionId, reason: 'recovered: the parent run had finished' }
  }
  if (snapshot?.status === 'suspended' && step === 'suspended') {
    // Killed between the claim and the resume: the parent still waits on its
    // batch step, so nothing past it ran. Release the claim and resume it.
    await context.store.finish(
      decisionId,
      'pending',
      'recovered: the parent was still suspended; nothing ran',
    )
    const outcome = await resumeBatchParent({
      mastra: context.mastra,
      store: context.store,
      review: { ...review, state: 'pending' },
      claimLeaseMs: claimLease(context),
      ...conflictOption(context),
    })
    return { status: 'parent', decisionId, parent: outcome }
  }
  if (step === 'success' || snapshot?.status !== 'running') {
    const reason =
      'the batch step completed before the crash, so the protected steps may have run; confirm them, then store.recover(...)'
    return endReview(context, decisionId, 'uncertain', reason)
  }
  // The crash hit the batch step itself (its fan-out or its resume pass):
  // restart it under this claim; it re-reads every child (asking only items
  // never asked) and continues only when all settled.
  let after: RunSnapshotView | null
  try {
    after = await restartRunForRecovery(context.mastra, review.workflowId, review.runId)
  } catch (error) {
    return endReview(context, decisionId, 'uncertain', `restart failed: ${errorMessage(error)}`)
  }
  return finishRestartedParent(context, review, after)
}

/** The status of the parent's batch step in a run snapshot (`undefined` when it never started). */
function batchStepStatus(
  snapshot: RunSnapshotView | null,
  review: PusharyBatchParentReview,
): string | undefined {
  return (snapshot?.context[review.stepId] as { status?: string } | undefined)?.status
}

async function parentRunning(context: DispatchContext, review: PusharyBatchParentReview): Promise<boolean> {
  const snapshot = await loadRunSnapshot(context.mastra, review.workflowId, review.runId)
  const step = batchStepStatus(snapshot, review)
  return snapshot?.status === 'running' && step !== 'success'
}

/** Records what the restarted parent did: finished, waits on its items again, or anything else for the operator. */
async function finishRestartedParent(
  context: DispatchContext,
  review: PusharyBatchParentReview,
  after: RunSnapshotView | null,
): Promise<PusharyDispatchResult> {
  const decisionId = review.decisionId
  const where = { workflowId: review.workflowId, runId: review.runId }
  const step = batchStepStatus(after, review)
  if (after?.status === 'success') {
    await context.store.finish(
      decisionId,
      'completed',
      'recovered: restarted the batch step; the run finished',
    )
    return {
      status: 'parent',
      decisionId,
      parent: { ...where, status: 'resumed', runStatus: 'success', reviewId: decisionId },
    }
  }
  if (after?.status === 'suspended' && step === 'suspended') {
    await context.store.finish(
      decisionId,
      'pending',
      'recovered: restarted the batch step; the parent waits on its items again',
    )
    const outcome = await settleBatchParent({
      mastra: context.mastra,
      store: context.store,
      parent: review,
      ...parentOptions(context),
    })
    return { status: 'parent', decisionId, parent: outcome }
  }
  const reason = `recovery restarted the batch step and the run is ${after?.status ?? 'missing'} (batch step ${step ?? 'not reached'}); inspect it before marking this review`
  return endReview(context, decisionId, 'uncertain', reason)
}
