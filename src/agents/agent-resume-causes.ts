/**
 * What an agent resume found when it cannot resume the review itself, named
 * by its actual cause. Two records tell the causes apart: the review's own
 * workflow run (`pushary-agent-review`, moved out of `suspended` only by a
 * package resume) and the agent's suspended run. An agent run that is no
 * longer suspended on the call while the review run still waits was resumed
 * outside the package; a review run that is running or finished was resumed
 * by another package caller that does not share this review store.
 */
import type { Mastra } from '@mastra/core/mastra'
import { PusharyValidationError } from '../pushary/errors.js'
import type { PusharySuspendedAgentRun } from '../resume/dispatch-types.js'
import type { PusharyReasonCode } from '../resume/review-status.js'
import { loadRunSnapshot } from '../resume/run-position.js'
import type { PusharyAgentReview } from '../store/review-schema.js'
import {
  AGENT_REVIEW_ASK_STEP,
  AGENT_REVIEW_WORKFLOW_ID,
  agentWorkflowBinding,
  inputFingerprint,
} from './agent-binding.js'
import { waitingMembers } from './agent-review-run.js'
import { normalizeSuspendedCall } from './agent-shapes.js'
import { questionSuspensionOf } from './question-suspension.js'

/**
 * What the review's `resume-agent` step did, read from its finished run.
 *
 * @example
 * if (outcome.status === 'duplicate' && outcome.action === 'approved') await markApproved(outcome.decisionId)
 */
export type PusharyAgentReviewAction = 'approved' | 'declined' | 'answered'

/** Where the review's workflow run stands. */
export type ReviewRunState =
  /** Waiting on this decision; `context` is the run's step context as just read (the ask's trace reference). */
  | { state: 'waiting'; context: Record<string, unknown> }
  /** Several approvers: the run counted this member's answer and waits on the others. */
  | { state: 'counted'; runId: string; approvals: number; required: number }
  | { state: 'resuming'; runId: string }
  | {
      state: 'finished'
      runId: string
      action?: PusharyAgentReviewAction
      /** The review's kind and the run's result: the evidence of what the tool did. */
      kind: 'approval' | 'question'
      result: unknown
    }
  | { state: 'ended'; runId: string; status: string }

/** A stale cause: its stable code and its text. */
export interface StaleCause {
  reasonCode: Extract<PusharyReasonCode, 'resumed_outside' | 'call_changed'>
  reason: string
}

function actionOf(result: unknown): PusharyAgentReviewAction | undefined {
  const action = (result as { action?: unknown } | null | undefined)?.action
  return action === 'approved' || action === 'declined' || action === 'answered' ? action : undefined
}

/**
 * Reads the review's workflow run as Mastra persisted it. A run the agent's
 * storage does not know is a configuration error (another database, or one
 * that lost it), refused before anything is claimed.
 *
 * @example
 * const run = await reviewRunState(mastra, review, 'resumePusharyAgentReview')
 */
export async function reviewRunState(
  mastra: Mastra,
  review: PusharyAgentReview,
  operation: string,
): Promise<ReviewRunState> {
  const { runId } = agentWorkflowBinding(review, operation)
  const snapshot = await loadRunSnapshot(mastra, AGENT_REVIEW_WORKFLOW_ID, runId)
  if (!snapshot) {
    throw new PusharyValidationError({
      code: 'invalid_options',
      operation,
      field: 'mastra.storage',
      message: `the agent's Mastra storage does not know the review workflow run ${runId}; resume with the storage the review was opened on`,
    })
  }
  switch (snapshot.status) {
    case 'suspended': {
      const ask = snapshot.context[AGENT_REVIEW_ASK_STEP] as
        | { suspendPayload?: { decisionId?: unknown } }
        | undefined
      if (ask?.suspendPayload?.decisionId === review.decisionId) {
        return { state: 'waiting', context: snapshot.context }
      }
      // Several approvers: the run waits on every member still open.
      const members = review.approverSet ? waitingMembers(snapshot) : null
      const self = members?.find((member) => member.decisionId === review.decisionId)
      if (members && self?.status === 'pending') return { state: 'waiting', context: snapshot.context }
      if (members && self) {
        const approvals = members.filter((member) => member.approved).length
        return { state: 'counted', runId, approvals, required: review.approverSet?.required ?? 0 }
      }
      return { state: 'ended', runId, status: 'suspended on another decision' }
    }
    case 'running':
    case 'pending':
      return { state: 'resuming', runId }
    case 'success': {
      const action = actionOf(snapshot.result)
      const finished = { state: 'finished' as const, runId, kind: review.kind, result: snapshot.result }
      return action ? { ...finished, action } : finished
    }
    default:
      return { state: 'ended', runId, status: snapshot.status }
  }
}

/**
 * Why the suspended run no longer holds exactly the call the review was
 * opened for, or `null` when it does. Only meaningful while the review's own
 * run still waits (see the module comment).
 *
 * @example
 * const cause = staleCallCause(review, suspended)
 */
export function staleCallCause(
  review: PusharyAgentReview,
  run: PusharySuspendedAgentRun | undefined,
): StaleCause | null {
  const outside = (detail: string): StaleCause => ({
    reasonCode: 'resumed_outside',
    reason: `The agent run was resumed outside the package (a native approveToolCall/declineToolCall, or a resume without the shared review store) while this review still waited: ${detail}. This review ran nothing.`,
  })
  if (!run) return outside(`run ${review.runId} is no longer suspended`)
  const raw = run.toolCalls.find((call) => call.toolCallId === review.toolCallId)
  if (!raw) return outside(`run ${review.runId} is no longer suspended on tool call ${review.toolCallId}`)
  const changed = (what: string): StaleCause => ({
    reasonCode: 'call_changed',
    reason: `The suspended call changed before resumption: ${what}.`,
  })
  if (run.threadId !== review.threadId || run.resourceId !== review.resourceId) {
    return changed('its thread or resource differs')
  }
  const call = normalizeSuspendedCall(raw)
  if (call.toolName !== review.toolName) return changed('its tool differs')
  if (review.kind === 'approval') {
    if (call.kind !== 'approval') return changed('it no longer waits for an approval')
    return inputFingerprint(call.args) === review.inputHash ? null : changed('its arguments differ')
  }
  const question = call.kind === 'suspend' ? questionSuspensionOf(call.suspendPayload) : null
  if (question === null) return changed('it no longer waits for a question answer')
  if (question.externalId !== review.externalId) return changed('its recipient differs')
  return inputFingerprint(question.request) === review.inputHash ? null : changed('its question differs')
}
