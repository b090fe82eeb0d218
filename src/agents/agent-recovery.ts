/**
 * Operator recovery of an agent review (`dispatcher.recover`), by the same
 * rules as a workflow review:
 * - a live resumer keeps its claim alive, so its claim is never taken over
 *   (`busy`, "the claim holder is alive"); a crash-left claim is taken over
 *   with a compare-and-set (`store.reclaim`), one recoverer wins;
 * - never past a completed approval: once the review run's approval step
 *   returned, its last step may have approved the native call (the tool may
 *   have run), and Mastra's agent loop cannot say whether it did, so the
 *   review ends `uncertain` for the operator;
 * - a review run still waiting on its approval step (killed between the
 *   claim and the resume) ran nothing: the claim is released and the answer
 *   applied once through the normal path; one killed inside the approval
 *   step's own resume pass is restarted first (it lands on the same decision).
 */

import { finishWithOutcome, recordActionOutcome } from '../resume/action-evidence.js'
import { takeOverClaim, whileHoldingClaim } from '../resume/claim-lease.js'
import type { PusharyDispatchResult } from '../resume/dispatch-types.js'
import { restartRunForRecovery } from '../resume/resume-guard.js'
import { endReview } from '../resume/review-endings.js'
import type { DispatchContext } from '../resume/review-kinds.js'
import { claimLease } from '../resume/review-kinds.js'
import { settledResult } from '../resume/review-status.js'
import { approvalProgress, loadRunSnapshot } from '../resume/run-position.js'
import type { PusharyAgentReview } from '../store/review-schema.js'
import { AGENT_REVIEW_ASK_STEP, AGENT_REVIEW_WORKFLOW_ID, agentWorkflowBinding } from './agent-binding.js'
import { resumeAgentForDispatch } from './agent-dispatch.js'
import { waitingMembers } from './agent-review-run.js'
import { ensureAgentReviewWorkflow } from './agent-review-workflow.js'
import { agentRunEnding } from './tool-call-outcome.js'

/** The taken-over claim was released: nothing ran, resume normally. */
const RELEASED = 'released'

/**
 * An uncertain review whose review run finished: the run's result says what
 * the tool did (`agentRunEnding`). Only a tool that ran settles it
 * `completed`; a refused input is confirmed not run (`stale`); a thrown tool,
 * or a run without that evidence, stays `uncertain` for the operator.
 */
async function recoverUncertain(
  context: DispatchContext,
  review: PusharyAgentReview,
): Promise<PusharyDispatchResult> {
  const decisionId = review.decisionId
  const { runId } = agentWorkflowBinding(review, 'dispatcher.recover')
  const snapshot = await loadRunSnapshot(context.mastra, AGENT_REVIEW_WORKFLOW_ID, runId)
  if (snapshot?.status === 'success') {
    const ending = agentRunEnding(review.kind, snapshot.result)
    const reason = `recovered: the agent review workflow run finished; ${ending.reason}`
    const described = {
      decisionId,
      reason,
      ...(ending.outcome === null ? {} : { actionOutcome: ending.outcome }),
      ...(ending.reasonCode === undefined ? {} : { reasonCode: ending.reasonCode }),
    }
    await recordActionOutcome(context.store, decisionId, { outcome: ending.outcome, reason })
    if (ending.state === 'uncertain') return { status: 'uncertain', ...described }
    await context.store.recover(decisionId, ending.state, reason)
    return ending.state === 'completed'
      ? { status: 'duplicate', ...described }
      : { status: 'stale', ...described }
  }
  return {
    status: 'uncertain',
    decisionId,
    reason: `the agent review workflow run is ${snapshot?.status ?? 'missing'}; inspect the agent run and the business receipt, then store.recover`,
  }
}

/** Decides a taken-over claim from the review run's persisted snapshot. */
async function settleTakenOver(
  context: DispatchContext,
  review: PusharyAgentReview,
): Promise<PusharyDispatchResult | typeof RELEASED> {
  const decisionId = review.decisionId
  const binding = agentWorkflowBinding(review, 'dispatcher.recover')
  let snapshot = await loadRunSnapshot(context.mastra, AGENT_REVIEW_WORKFLOW_ID, binding.runId)
  if (!snapshot) {
    return endReview(context, decisionId, 'uncertain', 'recovery found no agent review workflow run')
  }
  if (snapshot.status === 'success') {
    // The native resume returned; what it did to the tool is in the run's result.
    const ending = agentRunEnding(review.kind, snapshot.result)
    const reason = `recovered: the agent review workflow run had finished; ${ending.reason}`
    if (ending.state !== 'completed') {
      const action = { outcome: ending.outcome, reasonCode: ending.reasonCode }
      return endReview(context, decisionId, ending.state, reason, action)
    }
    await finishWithOutcome(context.store, decisionId, 'completed', reason, {
      outcome: ending.outcome,
      reason,
    })
    return {
      status: 'duplicate',
      decisionId,
      reason,
      ...(ending.outcome === null ? {} : { actionOutcome: ending.outcome }),
    }
  }
  const members = review.approverSet ? waitingMembers(snapshot) : null
  const self = members?.find((member) => member.decisionId === decisionId)
  if (members && self && self.status !== 'pending') {
    // Several approvers: the run counted this answer before the crash and waits on the others.
    const approvals = members.filter((member) => member.approved).length
    const reason = `recovered: the answer was counted; the approvers' set waits on the others (${approvals} of ${review.approverSet?.required} approvals so far)`
    await context.store.finish(decisionId, 'completed', reason)
    return { status: 'pending', decisionId, reason, reasonCode: 'awaiting_approvers' }
  }
  const location = {
    stepId: AGENT_REVIEW_ASK_STEP,
    resumeLabel: decisionId,
    operationId: binding.operationId,
  }
  let progress = approvalProgress(snapshot, location)
  if (progress === 'in_progress' && snapshot.status === 'running') {
    // Killed inside the approval step's own resume pass: the native call was
    // never touched. The restarted step lands on the same decision and suspends.
    ensureAgentReviewWorkflow(context.mastra, context.client)
    snapshot = await restartRunForRecovery(context.mastra, AGENT_REVIEW_WORKFLOW_ID, binding.runId)
    progress = snapshot ? approvalProgress(snapshot, location) : 'ended'
  }
  if (progress === 'suspended') {
    await context.store.finish(
      decisionId,
      'pending',
      'recovered: the review run still waited on its approval step; nothing ran',
    )
    return RELEASED
  }
  const reason =
    progress === 'completed'
      ? "the approval step completed before the crash, so the agent's tool may have run; confirm it from the business records, then store.recover(decisionId, 'completed' | 'stale', reason)"
      : `recovery found the agent review workflow run ${snapshot?.status ?? 'missing'} with the approval ${progress}; inspect it before marking this review`
  return endReview(context, decisionId, 'uncertain', reason)
}

/**
 * Operator recovery of an agent review (see the module comment).
 *
 * @example
 * if (review.target === 'agent') return recoverAgentForDispatch(context, review)
 */
export async function recoverAgentForDispatch(
  context: DispatchContext,
  review: PusharyAgentReview,
): Promise<PusharyDispatchResult> {
  const decisionId = review.decisionId
  switch (review.state) {
    case 'pending':
      return resumeAgentForDispatch(context, decisionId)
    case 'completed':
    case 'stale':
      return settledResult(decisionId, review.state)
    case 'uncertain':
      return recoverUncertain(context, review)
    case 'resuming':
      break
    default: {
      const unreachable: never = review.state
      return unreachable
    }
  }
  const leaseMs = claimLease(context)
  const refused = await takeOverClaim(
    context.store,
    decisionId,
    leaseMs,
    context.options.now?.() ?? new Date(),
  )
  if (refused) return refused
  const settled = await whileHoldingClaim(context.store, decisionId, leaseMs, () =>
    settleTakenOver(context, review),
  )
  // Released outside the lease of the taken-over claim: the normal path claims anew.
  return settled === RELEASED ? resumeAgentForDispatch(context, decisionId) : settled
}
