/**
 * The dispatcher's half of escalation (`steps/approver-escalation.ts`): when
 * `reconcile` (or any resume) meets a waiting member of a set whose next
 * tier is due, it claims that member's review and wakes the run with
 * `{ escalate: true }`. The step asks the tier only if it finds it due
 * itself, and suspends again; the review goes back to `pending` (its
 * question is still open). A wake never settles the set, so nothing past
 * the approval runs from here.
 *
 * Never twice: the review's claim and Mastra's claim on the resume let one
 * wake through at a time; a later wake finds the tier asked in the snapshot
 * and does nothing; a crash between asking and suspending repeats the ask on
 * the next wake, which the approver's idempotency key lands on the same
 * decision.
 */

import { pusharyApprovalSuspendSchema } from '../steps/approval-schemas.js'
import { dueTiers, nextEscalationAt } from '../steps/approver-escalation.js'
import type { PusharyWorkflowReview } from '../store/review-schema.js'
import { whileHoldingClaim } from './claim-lease.js'
import type { PusharyDispatchResult } from './dispatch-types.js'
import { errorMessage } from './resume-error.js'
import { attemptResume } from './resume-guard.js'
import { endStale, releaseReview } from './review-endings.js'
import { claimLease, conflictOption, type DispatchContext } from './review-kinds.js'
import { loadRunSnapshot, type RunSnapshotView } from './run-position.js'

const escalationPayloadSchema = pusharyApprovalSuspendSchema.pick({ rule: true, escalation: true })

function payloadOf(snapshot: RunSnapshotView, stepId: string) {
  const step = snapshot.context[stepId] as { suspendPayload?: unknown } | undefined
  const parsed = escalationPayloadSchema.safeParse(step?.suspendPayload)
  return parsed.success ? parsed.data : null
}

/**
 * When the set's next tier is due by the timer, from the run's snapshot;
 * `null` when the set has no escalation left (or none at all).
 *
 * @example
 * const at = escalationDueAt(snapshot, review.stepId)
 */
export function escalationDueAt(snapshot: RunSnapshotView, stepId: string): Date | null {
  const payload = payloadOf(snapshot, stepId)
  return nextEscalationAt(payload?.rule?.escalation, payload?.escalation)
}

/**
 * Whether a waiting member's resume should wake its run for an escalation.
 *
 * @example
 * if (escalationDue(snapshot, review, now)) return wakeForEscalation(context, review, snapshot)
 */
export function escalationDue(snapshot: RunSnapshotView, review: PusharyWorkflowReview, now: Date): boolean {
  if (!review.approverSet?.escalation) return false
  const payload = payloadOf(snapshot, review.stepId)
  return dueTiers(payload?.rule?.escalation, payload?.escalation, now.getTime(), { nothingOpen: false }) > 0
}

/**
 * Claims the member's review, wakes the run for its escalation, and puts the
 * review back to `pending` (its own question is still open).
 *
 * @example
 * return wakeForEscalation(context, review, snapshot)
 */
export async function wakeForEscalation(
  context: DispatchContext,
  review: PusharyWorkflowReview,
  snapshot: RunSnapshotView,
): Promise<PusharyDispatchResult> {
  const decisionId = review.decisionId
  if (['running', 'pending', 'waiting'].includes(snapshot.status)) {
    return { status: 'not_suspended_yet', decisionId, runStatus: snapshot.status }
  }
  const claim = await context.store.claim(decisionId, review.runId, 'waking the run: an escalation is due')
  if (claim === 'busy') return { status: 'busy', decisionId }
  if (claim === 'settled') return { status: 'duplicate', decisionId }
  return whileHoldingClaim(context.store, decisionId, claimLease(context), async () => {
    const attempt = await attemptResume(
      {
        mastra: context.mastra,
        workflowId: review.workflowId,
        runId: review.runId,
        label: review.resumeLabel,
        resumeData: { answer: null, status: 'answered', decisionId, escalate: true },
        ...conflictOption(context),
      },
      review,
    )
    if ('outcome' in attempt && attempt.outcome.stillSuspended) {
      const after = await loadAfter(context, review)
      const reason =
        after === null
          ? 'woken for its escalation; the step waits on its approvers'
          : `woken for its escalation; the step waits on its approvers (next tier due ${after})`
      return releaseReview(context, decisionId, reason)
    }
    if ('refused' in attempt) {
      return releaseReview(context, decisionId, `the escalation wake was refused: ${attempt.refused.message}`)
    }
    // The step itself failed (or the run ended) on a wake: nothing past the
    // approval ran, and this review's run no longer waits on it.
    const why =
      'failed' in attempt
        ? errorMessage(attempt.failed)
        : `the run is ${attempt.outcome.result.status} after the escalation wake`
    return endStale(context, review, `the escalation wake did not leave the run waiting (${why})`)
  })
}

async function loadAfter(context: DispatchContext, review: PusharyWorkflowReview): Promise<string | null> {
  const snapshot = await loadRunSnapshot(context.mastra, review.workflowId, review.runId)
  return snapshot ? (escalationDueAt(snapshot, review.stepId)?.toISOString() ?? null) : null
}
