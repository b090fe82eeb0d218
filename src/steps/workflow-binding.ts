import { PusharyValidationError } from '../pushary/errors.js'
import { canonicalJson, deterministicKey, fingerprintPusharyAction } from '../pushary/identity.js'
import { PUSHARY_LIMITS } from '../pushary/limits.js'
import type { PusharyQuestion } from '../pushary/question.js'
import type { Decision } from '../pushary/wire-responses.js'
import type { PusharyWorkflowReview } from '../store/review-schema.js'

type PusharyReviewParent = NonNullable<PusharyWorkflowReview['parent']>

/**
 * The immutable identity of one workflow approval: which run and step asked
 * whom about which business operation, and the exact question.
 */
export interface PusharyWorkflowBinding {
  workflowId: string
  runId: string
  stepId: string
  operationId: string
  externalId: string
  question: PusharyQuestion
  /** Set on the child run of a multi-item approval: the batch step that fanned it out. */
  parent?: PusharyReviewParent | undefined
  /** Set on each member of several approvers: how many approvals the set needs. */
  approverSet?: { required: number; veto?: boolean | undefined } | undefined
}

/**
 * The group key every item of one multi-item approval carries in its decision
 * context (`batch`): the same for all items of one batch step of one run, and
 * different for any other. A reviewer page groups decisions by it.
 *
 * @example
 * batchGroupKey({ workflowId: 'refunds', runId: 'run-1', stepId: 'approve-all' }) // 'b_3f9c…'
 */
export function batchGroupKey(parent: Pick<PusharyReviewParent, 'workflowId' | 'runId' | 'stepId'>): string {
  return `b_${deterministicKey(['batch-group', parent.workflowId, parent.runId, parent.stepId])}`
}

/**
 * The group key every member of one set of approvers carries in its decision
 * context (`approverSet`): the same for all approvers one step of one run
 * asks (escalated ones included), different for any other. A reviewer page
 * counts the set's answers by it.
 *
 * @example
 * approverSetGroupKey({ workflowId: 'payment', runId: 'run-1', stepId: 'approve' }) // 'a_9d41…'
 */
export function approverSetGroupKey(
  binding: Pick<PusharyWorkflowBinding, 'workflowId' | 'runId' | 'stepId'>,
): string {
  return `a_${deterministicKey(['approver-set', binding.workflowId, binding.runId, binding.stepId])}`
}

/**
 * Idempotency key of the decision a workflow step creates. A re-run of the
 * same step (retry, `run.restart()`) derives the same key and so lands on the
 * same decision instead of paging the person twice.
 *
 * @example
 * const key = workflowApprovalKey({ workflowId: 'refund', runId, stepId: 'approve', operationId: 'o1', externalId: 'c1', question })
 */
export function workflowApprovalKey(binding: PusharyWorkflowBinding): string {
  return deterministicKey([
    'workflow-step',
    binding.workflowId,
    binding.runId,
    binding.stepId,
    binding.externalId,
    binding.operationId,
    fingerprintPusharyAction(binding.question),
  ])
}

/**
 * The decision `context`: canonical JSON of the binding with the question
 * replaced by its fingerprint. The service echoes it back, so the dispatcher
 * can prove a re-read decision belongs to this exact run, step and operation.
 * Checked against the service's 2,000-character limit before any request.
 *
 * @example
 * const context = workflowBindingContext(binding)
 */
export function workflowBindingContext(binding: PusharyWorkflowBinding): string {
  const context = canonicalJson({
    pushary: 'workflow-step',
    version: 1,
    workflowId: binding.workflowId,
    runId: binding.runId,
    stepId: binding.stepId,
    operationId: binding.operationId,
    externalId: binding.externalId,
    questionHash: fingerprintPusharyAction(binding.question),
    // Only batch items carry these (undefined is dropped), so every other
    // context is byte for byte what it was before batches were grouped.
    batch: binding.parent === undefined ? undefined : batchGroupKey(binding.parent),
    batchItem: binding.parent?.itemIndex,
    // Only members of several approvers carry these.
    approverSet: binding.approverSet === undefined ? undefined : approverSetGroupKey(binding),
    approversRequired: binding.approverSet?.required,
    // Whether one denial declines the set: the reviewer page says why a question was withdrawn.
    approversVeto: binding.approverSet?.veto,
  })
  if (context.length > PUSHARY_LIMITS.contextMax) {
    throw new PusharyValidationError({
      code: 'invalid_decision_input',
      operation: 'pusharyApprovalStep',
      field: 'context',
      message: `the workflow binding exceeds the decision context limit of ${PUSHARY_LIMITS.contextMax} characters`,
    })
  }
  return context
}

/**
 * Compares a decision re-read from the service with the saved review. Returns
 * `null` when it matches, else the reason. The service may omit the
 * recipient (`externalId: null`); the exact context match covers that case.
 *
 * @example
 * const mismatch = checkWorkflowDecision(review, await client.decisions.get(review.decisionId))
 * if (mismatch) throw new Error(mismatch)
 */
export function checkWorkflowDecision(
  review: PusharyWorkflowBinding & Pick<PusharyWorkflowReview, 'decisionId'>,
  decision: Decision,
): string | null {
  if (decision.decisionId !== review.decisionId) return 'decisionId differs from the saved review'
  if (decision.externalId !== null && decision.externalId !== review.externalId) {
    return 'externalId differs from the saved review'
  }
  if (decision.type !== review.question.type) return 'type differs from the saved question'
  if (decision.question.trim() !== review.question.question) return 'question differs from the saved question'
  if (
    fingerprintPusharyAction(decision.options ?? []) !==
    fingerprintPusharyAction(review.question.options ?? [])
  ) {
    return 'options differ from the saved question'
  }
  // A batch item asked before items carried their group key has the context
  // without it; the group key only groups cards, the rest still binds.
  if (
    decision.context !== workflowBindingContext(review) &&
    (review.parent === undefined ||
      decision.context !== workflowBindingContext({ ...review, parent: undefined }))
  ) {
    return 'context differs from the saved binding'
  }
  return null
}
