/**
 * The dispatcher's agent branch: agent reviews take the same verified,
 * claimed path as every other review (`resumeAgentReview`), their results
 * mapped onto the dispatcher's union.
 */

import type { PusharyDispatchResult } from '../resume/dispatch-types.js'
import { claimLease, type DispatchContext } from '../resume/review-resumer.js'
import { AGENT_REVIEW_WORKFLOW_ID, agentWorkflowBinding } from './agent-binding.js'
import { resumeAgentReview } from './agent-review-resume.js'

/**
 * Resumes one agent review for the dispatcher (callback, reconcile, resumeDecision).
 *
 * @example
 * if (review.target === 'agent') return resumeAgentForDispatch(context, decisionId)
 */
export async function resumeAgentForDispatch(
  context: DispatchContext,
  decisionId: string,
): Promise<PusharyDispatchResult> {
  const outcome = await resumeAgentReview({
    client: context.client,
    store: context.store,
    decisionId,
    mastra: context.mastra,
    currentActionVersion: context.options.agentActionVersion,
    claimLeaseMs: claimLease(context),
    now: context.options.now,
  })
  switch (outcome.status) {
    case 'resumed':
      return {
        status: 'resumed',
        decisionId,
        workflowId: AGENT_REVIEW_WORKFLOW_ID,
        runId: agentWorkflowBinding(outcome.review, 'dispatcher').runId,
        answer: outcome.answer,
        runStatus: 'success',
        agent: {
          output: outcome.output,
          pending: outcome.pending,
          ...(outcome.discoveryError === undefined ? {} : { discoveryError: outcome.discoveryError }),
        },
      }
    case 'unknown':
      return {
        status: 'unknown',
        decisionId,
        reason: outcome.reason ?? 'no review is saved',
        ...(outcome.reasonCode ? { reasonCode: outcome.reasonCode } : {}),
      }
    case 'pending':
    case 'busy':
    case 'duplicate':
      return {
        status: outcome.status,
        decisionId,
        ...(outcome.reason ? { reason: outcome.reason } : {}),
        ...(outcome.reasonCode ? { reasonCode: outcome.reasonCode } : {}),
      }
    case 'recovery_needed':
      return { status: 'recovery_needed', decisionId, reason: outcome.reason, reasonCode: outcome.reasonCode }
    default:
      return outcome
  }
}
