/**
 * The dispatcher's agent branch: agent reviews take the same verified,
 * claimed path as every other review (`resumeAgentReview`), their results
 * mapped onto the dispatcher's union; and what a worker needs to resume one.
 */
import type { Mastra } from '@mastra/core/mastra'

import type { PusharyDispatchResult } from '../resume/dispatch-types.js'
import type { DispatchContext } from '../resume/review-kinds.js'
import { claimLease } from '../resume/review-kinds.js'
import { type PusharyCapabilityProblem, runProblem } from '../resume/worker-capability.js'
import type { PusharyAgentReview } from '../store/review-schema.js'
import { AGENT_REVIEW_WORKFLOW_ID, agentWorkflowBinding } from './agent-binding.js'
import { agentToolProblem } from './agent-resume-data.js'
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
        ...(outcome.actionOutcome === undefined ? {} : { actionOutcome: outcome.actionOutcome }),
      }
    case 'unknown':
      return {
        status: 'unknown',
        decisionId,
        reason: outcome.reason ?? 'no review is saved',
        ...(outcome.reasonCode ? { reasonCode: outcome.reasonCode } : {}),
      }
    case 'duplicate':
      return {
        status: 'duplicate',
        decisionId,
        reason: outcome.reason,
        reasonCode: outcome.reasonCode,
        ...(outcome.actionOutcome === undefined ? {} : { actionOutcome: outcome.actionOutcome }),
      }
    case 'pending':
    case 'busy':
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

function agentOf(mastra: Mastra, agentId: string): unknown {
  for (const lookup of [() => mastra.getAgentById(agentId), () => mastra.getAgent(agentId as never)]) {
    try {
      const agent = lookup()
      if (agent) return agent
    } catch {
      // try the next lookup
    }
  }
  return null
}

/**
 * What this worker lacks to resume an agent review (the agent, its tool, the
 * review's run in this worker's storage), or `null`; the resume path asks it
 * before any claim, after its own storage check.
 *
 * @example
 * const problem = await agentCapabilityProblem(mastra, review)
 */
export async function agentCapabilityProblem(
  mastra: Mastra,
  review: PusharyAgentReview,
): Promise<PusharyCapabilityProblem | null> {
  const agent = agentOf(mastra, review.agentId)
  if (!agent) {
    return {
      missing: 'agent',
      reason: `agent "${review.agentId}" is not registered on this worker's Mastra`,
    }
  }
  const noTool = await agentToolProblem(agent, review.toolName)
  if (noTool) return { missing: 'tool', reason: `agent "${review.agentId}": ${noTool}` }
  const { runId } = agentWorkflowBinding(review, 'checkConfiguration')
  return runProblem(mastra, AGENT_REVIEW_WORKFLOW_ID, runId)
}
