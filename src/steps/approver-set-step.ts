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
import type { PusharyQuestion } from '../pushary/question.js'
import { pusharyReviewParentSchema } from '../store/review-schema.js'
import type { PusharyReviewStore } from '../store/review-store.js'
import type { AskingAgent } from './approval-log.js'
import type {
  PusharyApprovalResume,
  PusharyApprovalStepInput,
  PusharyApprovalSuspend,
} from './approval-schemas.js'
import { type ApproverEscalationState, askedApprovers } from './approver-escalation.js'
import { type ApproverSetRule, firstApprovers, settleApproverSet } from './approver-set.js'
import {
  type AskedMember,
  createdBefore,
  createMembers,
  escalationAtService,
  pendingOutcomes,
  saveMemberReviews,
} from './approver-set-ask.js'
import {
  finishSet,
  type PusharyApproverSetAnswer,
  readMembers,
  resumeApproverSet,
  suspendPayload,
} from './approver-set-resume.js'
import {
  type ApproverSetRun,
  type RequestContextLike,
  type Suspend,
  withdrawMembers,
} from './approver-set-run.js'
import { refuseAutoRestarted, refuseUnresumable } from './run-guards.js'

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
  /** The agent call an agent review's run asks about (its `asked` lines name it). */
  asking: AskingAgent | undefined
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
      approverSet: { required: call.rule.required, veto: call.rule.veto },
    },
    question: call.question,
    input: call.input,
    delivery: call.delivery,
    agentName: call.agentName,
    asking: call.asking,
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

/** First pass: ask the first approvers, save one review each, suspend on all of them. */
export async function askApproverSet<S>(
  run: ApproverSetRun<S>,
): Promise<PusharyApproverSetAnswer | Awaited<S>> {
  const { rule, question } = run
  let created: AskedMember[]
  // A recovery restart keeps the escalation where it stood.
  let restored: ApproverEscalationState | undefined
  try {
    const first = firstApprovers(rule)
    created = await createMembers(run, first)
    if (run.recovering && rule.escalation) {
      // The snapshot cannot say (Mastra drops a step's suspend payload once
      // a resume starts): the service says which tiers were asked, and their
      // members are asked again by the same keys (the same decisions).
      restored = await escalationAtService(run, created[0]?.decisionId)
      const later = askedApprovers(first, rule.escalation, restored.asked).slice(first.length)
      if (later.length > 0) created = [...created, ...(await createMembers(run, later))]
    }
  } catch (error) {
    await withdrawMembers(
      run,
      createdBefore(error).map((member) => member.decisionId),
      error,
    )
    throw error
  }
  const decisionIds = created.map((member) => member.decisionId)

  // Every decision asked has its review before anything settles: a first
  // pass cut short after the creates (or some of the saves) and restarted by
  // recovery after the answers came in settles at once below, and its
  // members' reviews are what records the set and the action.
  try {
    await saveAskedMembers(run, created, decisionIds)
  } catch (error) {
    await withdrawMembers(run, decisionIds, error)
    throw error
  }

  // A recovery restart re-runs this pass after answers may have settled the
  // set (a crash inside the resume, or in this first pass): the same keys
  // name the same decisions, so read them and settle instead of asking
  // nobody-will-resume questions.
  if (run.recovering) {
    const members = await readMembers(run, decisionIds, undefined)
    if (members) {
      const state = settleApproverSet(rule, question, members)
      if (state.settled) return finishSet(run, state)
    }
  }
  // The escalation timer starts now; it lives in the snapshot, not in a process.
  const escalation =
    rule.escalation === undefined
      ? undefined
      : (restored ?? { startedAt: new Date().toISOString(), asked: 0 })
  return await run.suspend(suspendPayload(run, pendingOutcomes(created), decisionIds, escalation), {
    resumeLabel: decisionIds,
  })
}

/**
 * Saves one review per member asked. A recovery restart re-asks every member
 * the run had asked, escalated tiers included, whose reviews were saved then
 * with the decisions asked up to their tier: only a member without a review
 * (a first pass cut short before its save) is saved now.
 */
async function saveAskedMembers<S>(
  run: ApproverSetRun<S>,
  created: readonly AskedMember[],
  decisionIds: readonly string[],
): Promise<void> {
  const { store } = run
  if (!store || !run.recovering) return saveMemberReviews(run, created, decisionIds)
  const missing: AskedMember[] = []
  for (const member of created) if ((await store.get(member.decisionId)) === null) missing.push(member)
  await saveMemberReviews(run, missing, decisionIds)
}
