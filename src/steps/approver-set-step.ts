/**
 * The approval step when several people approve one action: one decision
 * per approver (the same question and binding, the approver's own
 * idempotency key and context), one review per decision, one suspension
 * labelled with every open decision. Each resume re-reads the whole set from
 * the service and applies the rule (`approver-set.ts`); a settled set
 * withdraws its still-open decisions and returns the outcome with every
 * approver's answer. One approver never comes here: that is today's path.
 */
import type { Mastra } from '@mastra/core/mastra'
import type { PusharyClient } from '../pushary/client.js'
import { PusharyValidationError } from '../pushary/errors.js'
import { fingerprintPusharyAction } from '../pushary/identity.js'
import type { PusharyQuestion } from '../pushary/question.js'
import { type PusharyWorkflowReview, pusharyReviewParentSchema } from '../store/review-schema.js'
import type { PusharyReviewStore } from '../store/review-store.js'
import type {
  PusharyApprovalResume,
  PusharyApprovalStepInput,
  PusharyApprovalSuspend,
} from './approval-schemas.js'
import { type ApproverSetRule, approverCardParameters, settleApproverSet } from './approver-set.js'
import {
  type ApproverSetRun,
  finishSet,
  memberBinding,
  type PusharyApproverSetAnswer,
  type RequestContextLike,
  readMembers,
  resumeApproverSet,
  type Suspend,
  suspendPayload,
  withdrawMembers,
} from './approver-set-resume.js'
import { decisionExpiresAt } from './decision-expiry.js'
import { refuseAutoRestarted, refuseUnresumable } from './run-guards.js'
import {
  type PusharyWorkflowBinding,
  workflowApprovalKey,
  workflowBindingContext,
} from './workflow-binding.js'

/** Request-context keys the step shares with the approval step (kept in step with it). */
const PARENT_KEY = 'pushary.parent'
const RECOVERY_KEY = 'pushary.recovery'

/** Everything one execution of the approval step hands over when a set is configured. */
export interface ApproverSetStepCall<S> {
  client: PusharyClient
  store: PusharyReviewStore | undefined
  mastra: Mastra | undefined
  requestContext: RequestContextLike
  suspend: Suspend<S>
  resumeData: PusharyApprovalResume | undefined
  suspendData: PusharyApprovalSuspend | undefined
  question: PusharyQuestion
  input: PusharyApprovalStepInput
  rule: ApproverSetRule
  workflowId: string
  runId: string
  stepId: string
  /** A single approver named as well: refused, a step asks either one person or a set. */
  externalId: string | undefined
  delivery: ApproverSetRun['delivery']
  agentName: string | undefined
  warnIfUngated: (mastra: Mastra | undefined, workflowId: string) => void
}

function refuse(field: string, message: string): never {
  throw new PusharyValidationError({
    code: 'invalid_decision_input',
    operation: 'pusharyApprovalStep',
    field,
    message,
  })
}

/**
 * The approval step's body for a set: the checks of its first pass, then
 * {@link askApproverSet}, or {@link resumeApproverSet} on a resume.
 *
 * @example
 * if (rule) return runApproverSetStep({ ...call, rule })
 */
export async function runApproverSetStep<S>(
  call: ApproverSetStepCall<S>,
): Promise<PusharyApproverSetAnswer | Awaited<S>> {
  if (call.externalId !== undefined) {
    refuse('approvers', 'name either externalId (one approver) or approvers (several), not both')
  }
  if ((call.question.type ?? 'confirm') !== 'confirm') {
    refuse(
      'type',
      'several approvers approve a confirm question; a choice or a typed answer is data, not a vote',
    )
  }
  const parentRaw = call.requestContext?.get(PARENT_KEY as never)
  const parent = pusharyReviewParentSchema.optional().parse(parentRaw)
  const run: ApproverSetRun<S> = {
    client: call.client,
    store: call.store,
    mastra: call.mastra,
    requestContext: call.requestContext,
    suspend: call.suspend,
    rule: call.rule,
    binding: {
      workflowId: call.workflowId,
      runId: call.runId,
      stepId: call.stepId,
      operationId: call.input.operationId,
      question: call.question,
      parent,
      approverSet: { required: call.rule.required },
    },
    question: call.question,
    input: call.input,
    delivery: call.delivery,
    agentName: call.agentName,
    recovering: call.requestContext?.get(RECOVERY_KEY as never) === call.runId,
  }
  if (call.resumeData) {
    if (!call.suspendData) {
      refuse('suspendData.approvers', 'on resume: the step was resumed without the decisions it asked')
    }
    return resumeApproverSet(run, call.suspendData, call.resumeData)
  }
  refuseUnresumable(call.mastra, call.workflowId)
  refuseAutoRestarted(call.mastra, call.workflowId, 'pusharyApprovalStep')
  call.warnIfUngated(call.mastra, call.workflowId)
  return askApproverSet(run)
}

/** First pass: ask every approver, save one review each, suspend on all of them. */
export async function askApproverSet<S>(
  run: ApproverSetRun<S>,
): Promise<PusharyApproverSetAnswer | Awaited<S>> {
  const { client, rule, question, input } = run
  // Everything that can be refused is built before the first request.
  const asks = rule.externalIds.map((externalId) => {
    const binding = memberBinding(run, externalId)
    return {
      externalId,
      binding,
      context: workflowBindingContext(binding),
      parameters: approverCardParameters(rule, externalId, input.subject?.parameters),
    }
  })
  const created: {
    externalId: string
    binding: PusharyWorkflowBinding
    decisionId: string
    expiresAt?: string
  }[] = []
  try {
    for (const ask of asks) {
      const result = await client.decisions.create({
        question: question.question,
        type: question.type,
        ...(input.placeholder === undefined ? {} : { placeholder: input.placeholder }),
        ...input.subject,
        parameters: ask.parameters,
        externalId: ask.externalId,
        context: ask.context,
        // The single approver's key with this approver: a retry or a recovery
        // restart lands on the same decisions.
        idempotencyKey: workflowApprovalKey(ask.binding),
        ...(run.delivery.callbackUrl === undefined ? {} : { callbackUrl: run.delivery.callbackUrl }),
        ...(run.delivery.expiresInSeconds === undefined
          ? {}
          : { expiresInSeconds: run.delivery.expiresInSeconds }),
        ...(run.delivery.requireReachable === undefined
          ? {}
          : { requireReachable: run.delivery.requireReachable }),
        ...(run.agentName === undefined ? {} : { agentName: run.agentName }),
        ...(run.delivery.sandboxOutcome === undefined ? {} : { sandboxOutcome: run.delivery.sandboxOutcome }),
      })
      const expiresAt = decisionExpiresAt(result, run.delivery, Date.now())
      created.push({
        externalId: ask.externalId,
        binding: ask.binding,
        decisionId: result.decisionId,
        ...(expiresAt === undefined ? {} : { expiresAt }),
      })
    }
  } catch (error) {
    await withdrawMembers(
      run,
      created.map((member) => member.decisionId),
      error,
    )
    throw error
  }
  const decisionIds = created.map((member) => member.decisionId)

  // A recovery restart re-runs this pass after answers may have settled the
  // set (a crash inside the resume): the same keys name the same decisions,
  // so read them and settle instead of asking nobody-will-resume questions.
  if (run.recovering) {
    const members = await readMembers(run, decisionIds, undefined)
    if (members) {
      const state = settleApproverSet(rule, question, members)
      if (state.settled) return finishSet(run, state)
    }
  }

  const approverSet = { decisionIds, externalIds: rule.externalIds, required: rule.required, veto: rule.veto }
  try {
    if (run.store) {
      for (const member of created) {
        const review: PusharyWorkflowReview = {
          target: 'workflow-step',
          version: 1,
          workflowId: member.binding.workflowId,
          runId: member.binding.runId,
          stepId: member.binding.stepId,
          forEachIndex: null,
          resumeLabel: member.decisionId,
          externalId: member.externalId,
          operationId: member.binding.operationId,
          questionHash: fingerprintPusharyAction(question),
          question,
          ...(member.binding.parent ? { parent: member.binding.parent } : {}),
          approverSet,
          decisionId: member.decisionId,
          correlationId: member.decisionId,
          ...(member.expiresAt === undefined ? {} : { expiresAt: member.expiresAt }),
          state: 'pending',
        }
        await run.store.save(review)
      }
    }
  } catch (error) {
    await withdrawMembers(run, decisionIds, error)
    throw error
  }
  const approvers = created.map((member) => ({
    externalId: member.externalId,
    decisionId: member.decisionId,
    status: 'pending',
    approved: false,
    answeredAt: null,
  }))
  return await run.suspend(suspendPayload(run, approvers, decisionIds), { resumeLabel: decisionIds })
}
