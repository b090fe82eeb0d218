/**
 * Several approvers for one action: the set's configuration (who, how many,
 * veto, never the requester), checked before anyone is asked, and the rule
 * that settles the set from the answers the service holds.
 *
 * The rule reads the answers in the order they were given (the service's
 * `answeredAt`), not in the order the dispatcher happened to resume them, so
 * the outcome and the decisions that settled it are the same whichever
 * worker, callback or reconcile got there first. An answer given after the
 * set was settled is late: kept in the record, it changes nothing.
 */
import { z } from 'zod/v4'
import { PusharyValidationError } from '../pushary/errors.js'
import { externalIdSchema } from '../pushary/identity.js'
import { PUSHARY_LIMITS } from '../pushary/limits.js'
import { answerPusharyQuestion, type PusharyQuestion } from '../pushary/question.js'
import {
  ESCALATION_TIERS_MAX,
  type EscalationTier,
  pusharyEscalationTierSchema,
  readableDelay,
} from './approver-escalation.js'

/** Most approvers one action may ask, escalation tiers included (each is one decision and one review). */
export const APPROVERS_MAX = 20

/**
 * Who must approve one action: `externalIds` (each asked on their own
 * decision), how many approvals are `required` (default: all of them, the
 * requester removed; with `escalation`, as many as `externalIds` holds),
 * whether one denial declines (`veto`, default true), and `escalation`:
 * later tiers, each asked `afterSeconds` after the first approvers if the
 * set is still undecided then (sooner when every question asked so far has
 * ended undecided). Every tier's approvals count toward `required`.
 *
 * @example
 * pusharyApproversSchema.parse({ externalIds: ['alice', 'bob', 'carol'], required: 2 })
 * pusharyApproversSchema.parse({ externalIds: ['alice'], escalation: [{ afterSeconds: 600, externalIds: ['bob'] }] })
 */
export const pusharyApproversSchema = z.object({
  externalIds: z.array(externalIdSchema).min(1).max(APPROVERS_MAX),
  required: z.number().int().optional(),
  veto: z.boolean().optional(),
  escalation: z.array(pusharyEscalationTierSchema).min(1).max(ESCALATION_TIERS_MAX).optional(),
})
/** @example const approvers: PusharyApprovers = { externalIds: ['alice', 'bob'], required: 1 } */
export type PusharyApprovers = z.infer<typeof pusharyApproversSchema>

/** The settled configuration of one set, as saved in each member's review. */
export interface ApproverSetRule {
  /** Every approver, the first ones then each tier's, in the order they are asked. */
  externalIds: string[]
  required: number
  veto: boolean
  /** Later tiers (the requester removed, emptied tiers dropped); absent without escalation. */
  escalation?: EscalationTier[]
}

/**
 * The approvers asked at once (those before any escalation tier).
 *
 * @example
 * firstApprovers({ externalIds: ['a', 'b'], required: 1, veto: true, escalation: [{ afterSeconds: 60, externalIds: ['b'] }] }) // ['a']
 */
export function firstApprovers(rule: ApproverSetRule): string[] {
  const later = (rule.escalation ?? []).reduce((sum, tier) => sum + tier.externalIds.length, 0)
  return rule.externalIds.slice(0, rule.externalIds.length - later)
}

function refused(field: string, message: string): PusharyValidationError {
  return new PusharyValidationError({
    code: field.endsWith('requestedBy') ? 'invalid_external_id' : 'invalid_decision_input',
    operation: 'pusharyApprovalStep',
    field,
    message,
  })
}

/**
 * The rule of a set, or `null` when no set is configured (one approver,
 * today's path). `requestedBy` never counts: it is removed from the set, and
 * a set it leaves too small is refused. Throws a {@link PusharyValidationError}
 * naming the field, before anything is asked.
 *
 * @example
 * approverSetRule({ externalIds: ['alice', 'bob', 'carol'], required: 2 }, 'bob', 'approvers') // 2 of alice, carol
 */
export function approverSetRule(
  raw: unknown,
  requestedBy: string | undefined,
  field: string,
): ApproverSetRule | null {
  if (raw === undefined) return null
  const parsed = pusharyApproversSchema.safeParse(raw)
  if (!parsed.success) {
    throw PusharyValidationError.fromZod(parsed.error, {
      operation: 'pusharyApprovalStep',
      code: 'invalid_decision_input',
      fieldPrefix: field,
    })
  }
  const { externalIds, required, veto, escalation } = parsed.data
  const seen = new Set<string>()
  const tiers = [{ field: `${field}.externalIds`, ids: externalIds }].concat(
    (escalation ?? []).map((tier, index) => ({
      field: `${field}.escalation.${index}.externalIds`,
      ids: tier.externalIds,
    })),
  )
  for (const tier of tiers) {
    for (const id of tier.ids) {
      if (seen.has(id)) throw refused(tier.field, `approver ${JSON.stringify(id)} is named twice`)
      seen.add(id)
    }
  }
  if (seen.size > APPROVERS_MAX) {
    throw refused(
      `${field}.escalation`,
      `at most ${APPROVERS_MAX} approvers in all, escalation tiers included`,
    )
  }
  for (const [index, tier] of (escalation ?? []).entries()) {
    const before = escalation?.[index - 1]
    if (before && tier.afterSeconds <= before.afterSeconds) {
      throw refused(
        `${field}.escalation.${index}.afterSeconds`,
        'each tier is asked later than the one before it (afterSeconds counts from the first ask)',
      )
    }
  }
  const keep = (ids: string[]) => (requestedBy === undefined ? ids : ids.filter((id) => id !== requestedBy))
  const first = keep(externalIds)
  const later = (escalation ?? [])
    .map((tier) => ({ afterSeconds: tier.afterSeconds, externalIds: keep(tier.externalIds) }))
    .filter((tier) => tier.externalIds.length > 0)
  const eligible = [...first, ...later.flatMap((tier) => tier.externalIds)]
  if (first.length === 0) {
    throw refused(
      requestedBy === undefined ? `${field}.externalIds` : 'requestedBy',
      later.length === 0
        ? 'no approver is left once the requester is removed (the requester never approves their own request)'
        : 'nobody is asked first once the requester is removed (the requester never approves their own request)',
    )
  }
  const need = required ?? (escalation === undefined ? eligible.length : first.length)
  if (need < 1) throw refused(`${field}.required`, 'at least one approval must be required')
  if (need > eligible.length) {
    throw refused(
      `${field}.required`,
      `${need} approvals are required but only ${eligible.length} approver(s) can give one${
        eligible.length < externalIds.length ? ' (the requester was removed from the set)' : ''
      }`,
    )
  }
  return {
    externalIds: eligible,
    required: need,
    veto: veto ?? true,
    ...(escalation === undefined ? {} : { escalation: later }),
  }
}

/**
 * Refuses a single approver who is also the requester (separation of duties).
 *
 * @example
 * refuseSelfApproval(input.requestedBy, externalId)
 */
export function refuseSelfApproval(requestedBy: string | undefined, externalId: string): void {
  if (requestedBy === externalId) {
    throw refused('requestedBy', 'the requester is the only approver; nobody approves their own request')
  }
}

/**
 * The card parameters each approver sees: how many approvals are needed and
 * who else is asked (by customer id, as given). Refused when the subject's
 * own parameters leave no room or already use these names.
 *
 * @example
 * approverCardParameters({ externalIds: ['a', 'b'], required: 2, veto: true }, 'a', undefined)
 */
export function approverCardParameters(
  rule: ApproverSetRule,
  externalId: string,
  parameters: Record<string, string | number | boolean> | undefined,
): Record<string, string | number | boolean> {
  const card = {
    'Approvals needed': `${rule.required} of ${rule.externalIds.length}${rule.veto ? ', one denial declines' : ''}`,
    'Also asked': clip(alsoAsked(rule, externalId)),
  }
  const own = parameters ?? {}
  for (const key of Object.keys(card)) {
    if (Object.hasOwn(own, key)) {
      throw refused('subject.parameters', `"${key}" is shown by the approvers' card; rename this parameter`)
    }
  }
  if (Object.keys(own).length + 2 > PUSHARY_LIMITS.parametersMaxKeys) {
    throw refused(
      'subject.parameters',
      `several approvers add 2 card parameters; at most ${PUSHARY_LIMITS.parametersMaxKeys - 2} of your own fit`,
    )
  }
  return { ...own, ...card }
}

/** Who else is asked, as one approver reads it: the tiers after theirs with their delay. */
function alsoAsked(rule: ApproverSetRule, externalId: string): string {
  const tiers = [{ afterSeconds: 0, externalIds: firstApprovers(rule) }, ...(rule.escalation ?? [])]
  const own = tiers.findIndex((tier) => tier.externalIds.includes(externalId))
  const parts: string[] = []
  for (const [index, tier] of tiers.entries()) {
    const ids = tier.externalIds.filter((id) => id !== externalId)
    if (ids.length === 0) continue
    parts.push(
      index <= own
        ? ids.join(', ')
        : `then ${ids.join(', ')} if undecided after ${readableDelay(tier.afterSeconds)}`,
    )
  }
  return parts.length === 0 ? 'nobody else' : parts.join('; ')
}

function clip(text: string): string {
  const max = PUSHARY_LIMITS.parameterStringMax
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`
}

/** What the service says about one member's decision. */
export interface MemberDecision {
  externalId: string
  decisionId: string
  status: 'pending' | 'answered' | 'expired' | 'cancelled' | 'unknown'
  value: string | null
  answeredAt: string | null
}

/** One approver in the step's result and in the record. */
export interface ApproverOutcome {
  externalId: string
  decisionId: string
  status: MemberDecision['status']
  /** The answer as given; `null` when not answered. */
  value?: string | null
  /** True only for a confirm answered yes. */
  approved: boolean
  answeredAt: string | null
  /** Answered after the set was settled: recorded, changes nothing. */
  late?: true
}

/** How a set stands after reading its decisions. */
export type ApproverSetState =
  | { settled: false; approvers: ApproverOutcome[]; open: string[] }
  | {
      settled: true
      approved: boolean
      approvers: ApproverOutcome[]
      /** The decisions whose answers decided: the approvals that reached the quorum, or the denial(s). */
      settledBy: string[]
      /** Still pending: to be withdrawn. */
      open: string[]
      /** The decision whose answer is the step's answer (the last of `settledBy`). */
      decisive: MemberDecision
    }

function approves(question: PusharyQuestion, member: MemberDecision): boolean {
  if (member.status !== 'answered') return false
  try {
    return answerPusharyQuestion(question, 'answered', member.value).approved
  } catch {
    // An answer that does not fit the question never approves.
    return false
  }
}

const LAST = Number.POSITIVE_INFINITY

function timeOf(member: MemberDecision): number {
  if (member.status === 'answered' && member.answeredAt) {
    const at = Date.parse(member.answeredAt)
    if (Number.isFinite(at)) return at
  }
  // Expired or cancelled (or an answer without a time): after every timed answer.
  return LAST
}

/**
 * Applies the rule to the members' decisions, in answer order: approved once
 * `required` approve; declined on a denial under `veto`, or as soon as the
 * remaining decisions can no longer reach `required`.
 *
 * @example
 * const state = settleApproverSet(rule, question, members)
 * if (state.settled && state.approved) console.log('approved by', state.settledBy)
 */
export function settleApproverSet(
  rule: ApproverSetRule,
  question: PusharyQuestion,
  members: readonly MemberDecision[],
): ApproverSetState {
  const outcomes = members.map(
    (member): ApproverOutcome => ({
      externalId: member.externalId,
      decisionId: member.decisionId,
      status: member.status,
      value: member.value,
      approved: approves(question, member),
      answeredAt: member.answeredAt,
    }),
  )
  const open = members.filter((member) => member.status === 'pending').map((member) => member.decisionId)
  const order = members
    .map((member, index) => ({ member, index }))
    .filter(({ member }) => member.status !== 'pending')
    .sort((a, b) => timeOf(a.member) - timeOf(b.member) || a.index - b.index)
  const approvals: number[] = []
  const refusals: number[] = []
  let verdict: { approved: boolean; settledBy: number[] } | null = null
  let settledAt = 0
  for (const [position, { member, index }] of order.entries()) {
    if (outcomes[index]?.approved) approvals.push(index)
    else refusals.push(index)
    if (approvals.length >= rule.required) verdict = { approved: true, settledBy: approvals }
    else if (rule.veto && member.status === 'answered' && !outcomes[index]?.approved) {
      verdict = { approved: false, settledBy: [index] }
    } else if (rule.externalIds.length - refusals.length < rule.required) {
      // Approvers not asked yet (later tiers) can still approve.
      verdict = { approved: false, settledBy: refusals }
    }
    if (verdict) {
      settledAt = position
      break
    }
  }
  if (!verdict) return { settled: false, approvers: outcomes, open }
  for (const { index } of order.slice(settledAt + 1)) {
    const outcome = outcomes[index]
    if (outcome) outcome.late = true
  }
  const decisiveIndex = verdict.settledBy.at(-1) as number
  return {
    settled: true,
    approved: verdict.approved,
    approvers: outcomes,
    settledBy: verdict.settledBy.map((index) => members[index]?.decisionId as string),
    open,
    decisive: members[decisiveIndex] as MemberDecision,
  }
}

/**
 * Why the still-open decisions of a settled set are withdrawn, for the log.
 *
 * @example
 * withdrawReason(state) // 'the approvers' set was approved, settled by d_1, d_2'
 */
export function withdrawReason(state: Extract<ApproverSetState, { settled: true }>): string {
  return `the approvers' set was ${state.approved ? 'approved' : 'declined'}, settled by ${state.settledBy.join(', ')}`
}
