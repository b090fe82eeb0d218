/**
 * The resume pass of several approvers: re-read every member's decision,
 * settle the set by the rule or suspend again on the decisions still open,
 * ask a due escalation tier, and withdraw what a settled set no longer needs.
 */
import type { Decision } from '../pushary/wire-responses.js'
import { noteApprovedDecision } from './approval-delivery.js'
import type { PusharyApprovalResume, PusharyApprovalSuspend } from './approval-schemas.js'
import {
  type ApproverEscalationState,
  askedApprovers,
  dueTiers,
  nextEscalationAt,
  readableDelay,
} from './approver-escalation.js'
import {
  type ApproverSetRule,
  type ApproverSetState,
  firstApprovers,
  type MemberDecision,
  settleApproverSet,
  withdrawReason,
} from './approver-set.js'
import { createdBefore, createMembers, pendingOutcomes, saveMemberReviews } from './approver-set-ask.js'
import { type ApproverSetRun, memberBinding, withdrawMembers } from './approver-set-run.js'
import { takeVerifiedDecision } from './verified-handoff.js'
import { checkWorkflowDecision } from './workflow-binding.js'

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

/**
 * The suspend payload of a set: every member as last read, the rule, and
 * where its escalation stands.
 *
 * @example
 * await run.suspend(suspendPayload(run, approvers, open, escalation), { resumeLabel: open })
 */
export function suspendPayload<S>(
  run: ApproverSetRun<S>,
  approvers: NonNullable<PusharyApprovalSuspend['approvers']>,
  open: string[],
  escalation: ApproverEscalationState | undefined,
): PusharyApprovalSuspend {
  const first = open[0] ?? (approvers[0]?.decisionId as string)
  return {
    decisionId: first,
    correlationId: first,
    question: run.question.question,
    operationId: run.binding.operationId,
    approvers,
    rule: run.rule,
    ...(escalation === undefined ? {} : { escalation }),
  }
}

type PayloadMember = NonNullable<PusharyApprovalSuspend['approvers']>[number]

const FINAL = new Set(['answered', 'expired', 'cancelled'])

/**
 * A member this step already read in an earlier pass and found final at the
 * service (answered, expired or cancelled never change again): kept from its
 * own suspend payload instead of asking the service again.
 */
function finalMember(known: PayloadMember | undefined, externalId: string): MemberDecision | null {
  if (!known || known.externalId !== externalId || !FINAL.has(known.status)) return null
  if (known.status === 'answered' && typeof known.value !== 'string') return null
  return {
    externalId,
    decisionId: known.decisionId,
    status: known.status as MemberDecision['status'],
    value: known.status === 'answered' ? (known.value as string) : null,
    answeredAt: known.answeredAt,
  }
}

/**
 * Reads every member's decision: the one the dispatcher verified through the
 * handoff, the ones the step's own payload holds as final, the others from
 * the service. `null` when any read fails or any decision does not match its
 * binding (the step keeps waiting: fail closed).
 */
export async function readMembers<S>(
  run: ApproverSetRun<S>,
  decisionIds: readonly string[],
  verified: { decisionId: string; decision: Decision } | undefined,
  known: readonly PayloadMember[] = [],
): Promise<MemberDecision[] | null> {
  // Each member is read on its own, all at once.
  const read = async (decisionId: string, index: number): Promise<MemberDecision | null> => {
    const externalId = run.rule.externalIds[index]
    if (externalId === undefined) return null
    const kept = verified?.decisionId === decisionId ? null : finalMember(known[index], externalId)
    if (kept && kept.decisionId === decisionId) return kept
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
    return {
      externalId,
      decisionId,
      status: decision.status,
      value: decision.status === 'answered' ? decision.value : null,
      answeredAt: decision.answeredAt ?? null,
    }
  }
  const members = await Promise.all(decisionIds.map(read))
  return members.some((member) => member === null) ? null : (members as MemberDecision[])
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
  const escalation = suspendData.escalation
  const asked = askedApprovers(firstApprovers(run.rule), run.rule.escalation, escalation?.asked ?? 0)
  if (
    approvers.length !== asked.length ||
    approvers.some((member, index) => member.externalId !== asked[index]) ||
    (run.rule.escalation !== undefined && escalation === undefined)
  ) {
    return keepWaiting()
  }
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
  const members = await readMembers(run, decisionIds, verified, approvers)
  if (!members) return keepWaiting()
  const state = settleApproverSet(run.rule, run.question, members)
  // A wake for an escalation never settles: the answered members' own
  // resumes do, so the review that settles the set is one that was answered.
  if (state.settled && resumeData.escalate) return keepWaiting()
  if (!state.settled) {
    const due = dueTiers(run.rule.escalation, escalation, Date.now(), {
      nothingOpen: state.open.length === 0,
    })
    if (due > 0 && escalation) return escalate(run, state, escalation, due, keepWaiting)
    return await run.suspend(suspendPayload(run, state.approvers, state.open, escalation), {
      resumeLabel: state.open,
    })
  }
  return finishSet(run, state)
}

/**
 * Asks the due tiers, saves their reviews and suspends on every open
 * decision. A failure leaves the escalation where it was (the next wake asks
 * the same tier again, landing on the same decisions by their keys) and is
 * logged with the decisions it had already created.
 */
async function escalate<S>(
  run: ApproverSetRun<S>,
  state: Extract<ApproverSetState, { settled: false }>,
  escalation: ApproverEscalationState,
  due: number,
  keepWaiting: () => Promise<Awaited<S>>,
): Promise<Awaited<S>> {
  const tiers = (run.rule.escalation ?? []).slice(escalation.asked, escalation.asked + due)
  const externalIds = tiers.flatMap((tier) => tier.externalIds)
  const log = run.mastra?.getLogger()
  let created: Awaited<ReturnType<typeof createMembers>>
  try {
    created = await createMembers(run, externalIds)
    const decisionIds = [
      ...state.approvers.map((member) => member.decisionId),
      ...created.map((m) => m.decisionId),
    ]
    await saveMemberReviews(run, created, decisionIds)
  } catch (error) {
    const made = createdBefore(error).map((member) => member.decisionId)
    log?.warn(
      `[pushary] escalating run ${run.binding.runId} to ${externalIds.join(', ')} failed (${
        error instanceof Error ? error.message : String(error)
      })${made.length > 0 ? `; already created: ${made.join(', ')}` : ''}. The next reconcile asks again`,
    )
    return keepWaiting()
  }
  const timed =
    (nextEscalationAt(run.rule.escalation, escalation)?.getTime() ?? Number.POSITIVE_INFINITY) <= Date.now()
  log?.info(
    `[pushary] escalated run ${run.binding.runId} step ${run.binding.stepId}: asked ${created
      .map((member) => `${member.externalId} (decision ${member.decisionId})`)
      .join(', ')}; ${
      timed
        ? `the set was still undecided after ${readableDelay(tiers[0]?.afterSeconds ?? 0)}`
        : 'every question asked so far ended without deciding it'
    }`,
  )
  const approvers = [...state.approvers, ...pendingOutcomes(created)]
  const open = [...state.open, ...created.map((member) => member.decisionId)]
  return await run.suspend(
    suspendPayload(run, approvers, open, { ...escalation, asked: escalation.asked + due }),
    { resumeLabel: open },
  )
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
