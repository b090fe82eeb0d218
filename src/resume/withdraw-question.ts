/**
 * Withdrawing a question whose run ended without it. A run that fails or is
 * cancelled while its approval step waits leaves the decision open at the
 * service, and its approval link answerable: the person could approve
 * something that will never run. The resume path meets such a review when
 * the decision is still pending but the run no longer waits on it; it then
 * cancels the decision (idempotent at the service), claims the review and
 * ends it `stale` (`run_ended`, action `not_run`), saying so in the log and
 * in the review's history.
 */
import type { PusharyWorkflowReview } from '../store/review-schema.js'
import type { PusharyDispatchResult } from './dispatch-types.js'
import { errorMessage } from './resume-error.js'
import { endStale } from './review-endings.js'
import type { DispatchContext } from './review-kinds.js'
import type { ApprovalProgress, RunSnapshotView } from './run-position.js'

const WAITING_RUN = new Set(['running', 'pending', 'waiting', 'suspended'])

/**
 * Whether the run ended without this approval: it is no longer active and
 * the approval neither waits nor returned.
 *
 * @example
 * if (runEndedWithout(snapshot, progress)) return withdrawQuestion(context, review, snapshot.status)
 */
export function runEndedWithout(snapshot: RunSnapshotView, progress: ApprovalProgress): boolean {
  return !WAITING_RUN.has(snapshot.status) && progress !== 'completed' && progress !== 'suspended'
}

/**
 * Cancels the still-open decision of a run that ended, then ends its review
 * `stale`. A cancel that fails leaves the review `pending` (retried by the
 * next reconcile), never a review that says withdrawn while the link works.
 *
 * @example
 * return withdrawQuestion(context, review, 'failed')
 */
export async function withdrawQuestion(
  context: DispatchContext,
  review: PusharyWorkflowReview,
  runStatus: string,
): Promise<PusharyDispatchResult> {
  const decisionId = review.decisionId
  const log = context.mastra.getLogger()
  try {
    await context.client.decisions.cancel(decisionId)
  } catch (error) {
    const reason = `the run is ${runStatus} and no longer waits on this decision, but withdrawing it failed (${errorMessage(error)}); retried by the next reconcile`
    return { status: 'pending', decisionId, reason }
  }
  const reason = `the run is ${runStatus} and no longer waits on this decision; the question was withdrawn (cancelled at the service) so nobody approves what will never run`
  log?.warn(`[pushary] withdrew decision ${decisionId} of run ${review.runId}: ${reason}`)
  switch (await context.store.claim(decisionId, review.runId, 'withdrawing the question of an ended run')) {
    case 'busy':
      return {
        status: 'busy',
        decisionId,
        reason: 'another resumer holds this review; the question is withdrawn',
      }
    case 'settled':
      return {
        status: 'duplicate',
        decisionId,
        reason: 'the review was settled elsewhere; the question is withdrawn',
      }
    case 'claimed':
      return endStale(context, review, reason, { outcome: 'not_run', reasonCode: 'run_ended' })
  }
}
