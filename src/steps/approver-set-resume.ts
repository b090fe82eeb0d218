/**
 * The resume pass of several approvers: re-read every member's decision,
 * settle the set by the rule or suspend again on the decisions still open,
 * and withdraw what a settled set no longer needs.
 */
import type { Mastra } from '@mastra/core/mastra'
import type { PusharyClient } from '../pushary/client.js'
import type { PusharyQuestion } from '../pushary/question.js'
import type { Decision } from '../pushary/wire-responses.js'
import type { PusharyReviewStore } from '../store/review-store.js'
import { noteApprovedDecision } from './approval-delivery.js'
import type {
  PusharyApprovalResume,
  PusharyApprovalStepInput,
  PusharyApprovalSuspend,
} from './approval-schemas.js'
import {
  type ApproverSetRule,
  type ApproverSetState,
  type MemberDecision,
  settleApproverSet,
  withdrawReason,
} from './approver-set.js'
import { takeVerifiedDecision } from './verified-handoff.js'
import { checkWorkflowDecision, type PusharyWorkflowBinding } from './workflow-binding.js'

export type RequestContextLike = { get(key: never): unknown; set(key: never, value: never): void } | undefined
/** Mastra's `suspend`; what it returns is Mastra's own marker, handed back unchanged. */
export type Suspend<S> = (payload: PusharyApprovalSuspend, options: { resumeLabel: string | string[] }) => S

/** What one run of the step hands to the set's passes. */
export interface ApproverSetRun<S = unknown> {
  client: PusharyClient
  store: PusharyReviewStore | undefined
  mastra: Mastra | undefined
  requestContext: RequestContextLike
  suspend: Suspend<S>
  rule: ApproverSetRule
  /** The step's binding without its approver (each member adds its own). */
  binding: Omit<PusharyWorkflowBinding, 'externalId'>
  question: PusharyQuestion
  input: PusharyApprovalStepInput
  delivery: {
    callbackUrl?: string | undefined
    expiresInSeconds?: number | undefined
    requireReachable?: boolean | undefined
    sandboxOutcome?: 'approve' | 'deny' | 'no_answer' | undefined
  }
  agentName: string | undefined
  /** Set only inside `dispatcher.recover`'s restart of this run. */
  recovering: boolean
}

/**
 * The step's answer for a settled set: the decisive answer (the approval
 * that reached the quorum, or the denial, expiry or cancellation that made
 * it impossible) plus every approver, the rule and what settled it. The
 * gate reads `status`, `value` and `approved` as for one approver.
 */
export interface PusharyApproverSetAnswer {
  status: 'answered' | 'expired' | 'cancelled' | 'unknown'
  value: string | null
  approved: boolean
  approvers: ApproverSetState['approvers']
  rule: ApproverSetRule
  settledBy: string[]
}

export function memberBinding<S>(run: ApproverSetRun<S>, externalId: string): PusharyWorkflowBinding {
  return { ...run.binding, externalId }
}

export function suspendPayload<S>(
  run: ApproverSetRun<S>,
  approvers: NonNullable<PusharyApprovalSuspend['approvers']>,
  open: string[],
): PusharyApprovalSuspend {
  const first = open[0] ?? (approvers[0]?.decisionId as string)
  return {
    decisionId: first,
    correlationId: first,
    question: run.question.question,
    operationId: run.binding.operationId,
    approvers,
    rule: run.rule,
  }
}

/**
 * Reads every member's decision: the one the dispatcher verified through the
 * handoff, the others from the service. `null` when any read fails or any
 * decision does not match its binding (the step keeps waiting: fail closed).
 */
export async function readMembers<S>(
  run: ApproverSetRun<S>,
  decisionIds: readonly string[],
  verified: { decisionId: string; decision: Decision } | undefined,
): Promise<MemberDecision[] | null> {
  const members: MemberDecision[] = []
  for (const [index, decisionId] of decisionIds.entries()) {
    const externalId = run.rule.externalIds[index]
    if (externalId === undefined) return null
    let decision: Decision
    if (verified?.decisionId === decisionId) decision = verified.decision
    else {
      try {
        decision = await run.client.decisions.get(decisionId)
      } catch {
        return null
      }
    }
    if (checkWorkflowDecision({ ...memberBinding(run, externalId), decisionId }, decision) !== null)
      return null
    members.push({
      externalId,
      decisionId,
      status: decision.status,
      value: decision.status === 'answered' ? decision.value : null,
      answeredAt: decision.answeredAt ?? null,
    })
  }
  return members
}

/**
 * Resume pass: re-reads the set, settles it or suspends again on the
 * decisions still open. Resume data only names which decision the
 * dispatcher verified; the outcome comes from the service alone.
 */
export async function resumeApproverSet<S>(
  run: ApproverSetRun<S>,
  suspendData: PusharyApprovalSuspend,
  resumeData: PusharyApprovalResume,
): Promise<PusharyApproverSetAnswer | Awaited<S>> {
  const approvers = suspendData.approvers ?? []
  const decisionIds = approvers.map((member) => member.decisionId)
  const stillOpen = approvers
    .filter((member) => member.status === 'pending')
    .map((member) => member.decisionId)
  const keepWaiting = async (): Promise<Awaited<S>> =>
    await run.suspend(suspendData, { resumeLabel: stillOpen.length > 0 ? stillOpen : decisionIds })
  if (decisionIds.length !== run.rule.externalIds.length) return keepWaiting()
  let verified: { decisionId: string; decision: Decision } | undefined
  const named = resumeData.decisionId
  if (named !== undefined && decisionIds.includes(named)) {
    const decision = takeVerifiedDecision(run.client, resumeData.proof, {
      workflowId: run.binding.workflowId,
      runId: run.binding.runId,
      stepId: run.binding.stepId,
      decisionId: named,
    })
    if (decision) verified = { decisionId: named, decision }
  }
  const members = await readMembers(run, decisionIds, verified)
  if (!members) return keepWaiting()
  const state = settleApproverSet(run.rule, run.question, members)
  if (!state.settled) {
    return await run.suspend(suspendPayload(run, state.approvers, state.open), { resumeLabel: state.open })
  }
  return finishSet(run, state)
}

/** Withdraws the still-open decisions of a settled set and returns its answer. */
export async function finishSet<S>(
  run: ApproverSetRun<S>,
  state: Extract<ApproverSetState, { settled: true }>,
): Promise<PusharyApproverSetAnswer> {
  // Cancelled so they disappear from the other phones. A cancel that fails
  // is logged; the member's review then withdraws it when reconcile meets it.
  await withdrawMembers(run, state.open, withdrawReason(state))
  const decisive = state.decisive
  const status = decisive.status === 'pending' ? 'unknown' : decisive.status
  if (state.approved) noteApprovedDecision(run.requestContext, run.binding.stepId, decisive.decisionId)
  return {
    status,
    value: status === 'answered' ? decisive.value : null,
    approved: state.approved,
    approvers: state.approvers,
    rule: run.rule,
    settledBy: state.settledBy,
  }
}

/** Cancels decisions at the service; a failed cancel is logged, never thrown. */
export async function withdrawMembers<S>(
  run: ApproverSetRun<S>,
  decisionIds: readonly string[],
  why: unknown,
): Promise<void> {
  const log = run.mastra?.getLogger()
  const reason = why instanceof Error ? why.message : String(why)
  for (const decisionId of decisionIds) {
    try {
      await run.client.decisions.cancel(decisionId)
      log?.info(`[pushary] withdrew decision ${decisionId} of run ${run.binding.runId}: ${reason}`)
    } catch (error) {
      log?.warn(
        `[pushary] decision ${decisionId} of run ${run.binding.runId} stays open (${reason}); cancelling it failed: ${
          error instanceof Error ? error.message : String(error)
        }. The next reconcile withdraws it`,
      )
    }
  }
}
