/**
 * The dispatcher's agent branch: agent reviews take the same verified,
 * claimed path as every other review (`resumeAgentReview`), their results
 * mapped onto the dispatcher's union.
 */
import type { PusharyAgentReview } from '../store/review-schema.js'
import { AGENT_REVIEW_WORKFLOW_ID, agentWorkflowBinding } from './agent-binding.js'
import { resumeAgentReview } from './agent-review-resume.js'
import type { PusharyDispatchResult } from './dispatch-types.js'
import type { DispatchContext } from './review-resumer.js'
import { loadRunSnapshot } from './run-snapshot.js'

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
      return { status: 'unknown', decisionId, reason: outcome.reason ?? 'no review is saved' }
    case 'pending':
    case 'busy':
    case 'duplicate':
      return { status: outcome.status, decisionId, ...(outcome.reason ? { reason: outcome.reason } : {}) }
    default:
      return outcome
  }
}

/**
 * Operator recovery of an agent review. A pending review takes the normal
 * path. A claimed (`resuming`) or `uncertain` one is settled `completed`
 * only when its review workflow run finished (the native resume returned);
 * anything else is left for the operator, since Mastra's agent loop cannot
 * tell whether the tool ran.
 *
 * @example
 * if (review.target === 'agent') return recoverAgentForDispatch(context, review)
 */
export async function recoverAgentForDispatch(
  context: DispatchContext,
  review: PusharyAgentReview,
): Promise<PusharyDispatchResult> {
  const decisionId = review.decisionId
  if (review.state === 'pending') return resumeAgentForDispatch(context, decisionId)
  if (review.state === 'completed') return { status: 'duplicate', decisionId }
  if (review.state === 'stale')
    return { status: 'stale', decisionId, reason: 'the review was already found stale' }
  const { runId } = agentWorkflowBinding(review, 'dispatcher.recover')
  const snapshot = await loadRunSnapshot(context.mastra, AGENT_REVIEW_WORKFLOW_ID, runId)
  if (snapshot?.status === 'success') {
    await context.store.recover(decisionId, 'completed', 'recovered: the agent review workflow run finished')
    return { status: 'duplicate', decisionId, reason: 'the agent was resumed before the crash' }
  }
  return {
    status: 'uncertain',
    decisionId,
    reason: `the agent review workflow run is ${snapshot?.status ?? 'missing'}; inspect the agent run and the business receipt, then store.recover`,
  }
}
