/**
 * The immutable identity of one agent review (which agent, run and tool call
 * asks which customer about which exact input, subject and business
 * version) and everything derived from it: the run ID of the package
 * workflow that asks, the operation ID it asks under, and the decision
 * context the service echoes back.
 */

import { PusharyValidationError } from '../pushary/errors.js'
import { canonicalJson, deterministicKey, fingerprintPusharyAction } from '../pushary/identity.js'
import { PUSHARY_LIMITS } from '../pushary/limits.js'
import type { Decision } from '../pushary/wire-responses.js'
import { checkWorkflowDecision, type PusharyWorkflowBinding } from '../steps/workflow-binding.js'
import type { PusharyAgentReview } from '../store/review-schema.js'

/**
 * The binding fields of a {@link PusharyAgentReview}: everything but
 * `decisionId`, `correlationId` and `state`.
 *
 * @example
 * const binding: PusharyAgentReviewBinding = { version: 1, agentId, runId, toolCallId, toolName, externalId,
 *   actionVersion, inputHash, subjectHash, kind: 'approval', question }
 */
export type PusharyAgentReviewBinding = Omit<
  PusharyAgentReview,
  'decisionId' | 'correlationId' | 'state' | 'target'
>

/** ID of the package workflow every agent question and approval runs through. */
export const AGENT_REVIEW_WORKFLOW_ID = 'pushary-agent-review'
/** Step ID of the approval step inside it (the decision's resume label is the decision ID). */
export const AGENT_REVIEW_ASK_STEP = 'ask'

/**
 * The binding as canonical JSON in schema order, question replaced by its
 * fingerprint (the context "stores fingerprints instead of duplicating the
 * question"). Refused over the API's 2,000-character context limit before any
 * request.
 *
 * @example
 * const context = agentBindingContext(binding, 'openPusharyAgentReview')
 */
export function agentBindingContext(binding: PusharyAgentReviewBinding, operation: string): string {
  const set = binding.approverSet
  // Only the binding fields: a full review (state, decision ID) must give the same context.
  const context = canonicalJson({
    pushary: 'agent-review',
    version: binding.version,
    agentId: binding.agentId,
    runId: binding.runId,
    toolCallId: binding.toolCallId,
    toolName: binding.toolName,
    // Several approvers share one review run: the set (never its decisions,
    // asked by that run) names it instead of the member. Undefined is dropped,
    // so one approver's context is byte for byte what it was.
    externalId: set === undefined ? binding.externalId : undefined,
    approvers:
      set === undefined
        ? undefined
        : fingerprintPusharyAction({
            externalIds: set.externalIds,
            required: set.required,
            veto: set.veto,
            requestedBy: set.requestedBy ?? null,
          }),
    actionVersion: binding.actionVersion,
    inputHash: binding.inputHash,
    subjectHash: binding.subjectHash,
    kind: binding.kind,
    questionHash: fingerprintPusharyAction(binding.question),
    threadId: binding.threadId,
    resourceId: binding.resourceId,
  })
  if (context.length > PUSHARY_LIMITS.contextMax) {
    throw new PusharyValidationError({
      code: 'invalid_decision_input',
      operation,
      field: 'context',
      message: `the review binding exceeds the decision context limit of ${PUSHARY_LIMITS.contextMax} characters (${context.length})`,
    })
  }
  return context
}

/**
 * The workflow binding of the package workflow run that asks for this agent
 * review. Its run ID and operation ID are fingerprints of the whole agent
 * binding, so the decision context the service stores (and the idempotency
 * key) change whenever recipient, question, arguments, subject or version do.
 * The members of several approvers share the run; each binding names its own
 * member (`externalId`).
 *
 * @example
 * const { runId } = agentWorkflowBinding(binding, 'openPusharyAgentReview')
 */
export function agentWorkflowBinding(
  binding: PusharyAgentReviewBinding,
  operation: string,
): PusharyWorkflowBinding {
  const context = agentBindingContext(binding, operation)
  return {
    workflowId: AGENT_REVIEW_WORKFLOW_ID,
    runId: `pushary-agent-${deterministicKey([context])}`,
    stepId: AGENT_REVIEW_ASK_STEP,
    operationId: `agent:${fingerprintPusharyAction(context)}`,
    externalId: binding.externalId,
    question: binding.question,
    // A member of several approvers: its decision's context carries the set (steps/approver-set-step.ts).
    ...(binding.approverSet === undefined
      ? {}
      : { approverSet: { required: binding.approverSet.required, veto: binding.approverSet.veto } }),
  }
}

/**
 * `null` when a decision re-read from the service belongs to exactly this
 * saved agent review, else the reason. A missing recipient (`externalId:
 * null`, the API cache) is accepted only because the context must match
 * exactly.
 *
 * @example
 * const mismatch = checkAgentDecision(review, await client.decisions.get(review.decisionId))
 */
export function checkAgentDecision(review: PusharyAgentReview, decision: Decision): string | null {
  const workflow = agentWorkflowBinding(review, 'resumePusharyAgentReview')
  return checkWorkflowDecision({ ...workflow, decisionId: review.decisionId }, decision)
}

/**
 * Fingerprint of a tool input; the value fingerprinted for a question is the
 * suspended request, for an approval the native arguments (`null` when absent).
 *
 * @example
 * const inputHash = inputFingerprint(call.args)
 */
export function inputFingerprint(input: unknown): string {
  return fingerprintPusharyAction(input === undefined ? null : input)
}
