/**
 * Several approvers on the agent paths (issue 41): who an agent approval
 * asks (one customer, or a set: the rule of `steps/approver-set.ts`, the
 * requester removed), checked before anything is asked, and the member
 * reviews that stand behind a set's one review run (one per decision, each
 * resumable like a single approver's review).
 */
import { isPusharyValidationError, PusharyValidationError } from '../pushary/errors.js'
import type { PusharyApprovers } from '../steps/approver-set.js'
import {
  type ApproverOutcome,
  approverCardParameters,
  approverSetRule,
  refuseSelfApproval,
} from '../steps/approver-set.js'
import type { PusharyAgentReview } from '../store/review-schema.js'
import type { PusharyAgentReviewBinding } from './agent-binding.js'
import { checkedId } from './review-subject.js'

/**
 * One approver of a settled set, as an agent result reports it: who, on
 * which decision, what they answered (`approved` is true only for a confirm
 * answered yes) and when; `late: true` for an answer given after the set was
 * settled (recorded, changes nothing).
 *
 * @example
 * const approvedBy = (outcome.approvers ?? []).filter((a: PusharyApproverOutcome) => a.approved).map((a) => a.externalId)
 */
export type PusharyApproverOutcome = ApproverOutcome

/** The set an agent approval asks, as its binding and every member's review keep it. */
export type AgentApproverSet = NonNullable<PusharyAgentReview['approverSet']>

/** Who one agent approval asks: one customer, or a set whose first member names the binding. */
export interface AgentRecipients {
  /** The one approver; for a set, its first member (each member's review names its own). */
  externalId: string
  /** Set for several approvers (`decisionIds` empty until the review run asked them). */
  set?: AgentApproverSet
}

/** An error of the shared set rule, re-told by the agent entry point that met it. */
function retold(error: unknown, operation: string, prefix: string): unknown {
  if (!isPusharyValidationError(error)) return error
  const message = error.message.replace(/^Pushary [^:]+: /, '').replace(/ \(field "[^"]*"\)$/, '')
  return new PusharyValidationError({
    code: error.code,
    operation,
    field: error.field === 'requestedBy' ? `${prefix}requestedBy` : error.field,
    message,
    issues: error.issues,
    cause: error,
  })
}

function refuse(operation: string, field: string, message: string): never {
  throw new PusharyValidationError({ code: 'invalid_options', operation, field, message })
}

/**
 * The requester, checked like a customer ID (it comes from your
 * authenticated session, never from the model).
 *
 * @example
 * const requestedBy = checkedRequester(config.requestedBy, 'resolvePusharyApprovals', 'config.')
 */
export function checkedRequester(value: unknown, operation: string, prefix: string): string | undefined {
  return value === undefined ? undefined : checkedId(value, `${prefix}requestedBy`, operation, true)
}

/**
 * The set of several approvers for one agent approval (`approvers`, and
 * `requestedBy`, who never counts), or a typed error naming the field,
 * before anything is asked: both `externalId` and `approvers`, a set that
 * escalates (not on the agent paths yet), a quorum the set cannot reach, or
 * a set the requester empties.
 *
 * @example
 * const set = agentApproverSet({ externalId: undefined, approvers, requestedBy }, 'openPusharyAgentReview', '')
 */
export function agentApproverSet(
  input: { externalId: unknown; approvers: unknown; requestedBy: string | undefined },
  operation: string,
  prefix: string,
): AgentApproverSet {
  if (input.externalId !== undefined) {
    refuse(
      operation,
      `${prefix}approvers`,
      'name either externalId (one approver) or approvers (several), not both',
    )
  }
  const raw = input.approvers as { escalation?: unknown } | null
  if (typeof raw === 'object' && raw !== null && raw.escalation !== undefined) {
    refuse(
      operation,
      `${prefix}approvers.escalation`,
      'escalation is not available on agent approvals yet; name every approver in externalIds',
    )
  }
  let rule: ReturnType<typeof approverSetRule>
  try {
    rule = approverSetRule(input.approvers, input.requestedBy, `${prefix}approvers`)
  } catch (error) {
    throw retold(error, operation, prefix)
  }
  if (!rule) return refuse(operation, `${prefix}approvers`, 'approvers is required')
  return {
    decisionIds: [],
    externalIds: rule.externalIds,
    required: rule.required,
    veto: rule.veto,
    ...(input.requestedBy === undefined ? {} : { requestedBy: input.requestedBy }),
  }
}

/**
 * One approver named together with a requester: refused when they are the
 * same person (nobody approves their own request).
 *
 * @example
 * refuseOwnRequest(requestedBy, externalId, 'resolvePusharyApprovals', 'config.')
 */
export function refuseOwnRequest(
  requestedBy: string | undefined,
  externalId: string,
  operation: string,
  prefix: string,
): void {
  try {
    refuseSelfApproval(requestedBy, externalId)
  } catch (error) {
    throw retold(error, operation, prefix)
  }
}

/**
 * A set approves a native tool call only (a confirm): a deferred question is
 * answered by the one customer its tool names. Refused before the call's
 * review is prepared.
 *
 * @example
 * if (set) refuseSetQuestion(call.kind, 'openPusharyAgentReview')
 */
export function refuseSetQuestion(kind: 'approval' | 'suspend', operation: string): void {
  if (kind === 'approval') return
  refuse(
    operation,
    'approvers',
    'several approvers approve a tool call (a confirm); a deferred question is answered by the one customer its tool names, so it cannot go to a set',
  )
}

/**
 * Each member's card gains the set's two parameters ("Approvals needed",
 * "Also asked"), which must fit beside the subject's own: refused before
 * anyone is asked.
 *
 * @example
 * checkSetCard(set, stepSubject.parameters, 'openPusharyAgentReview')
 */
export function checkSetCard(
  set: AgentApproverSet,
  parameters: Record<string, string | number | boolean> | undefined,
  operation: string,
): void {
  const rule = { externalIds: set.externalIds, required: set.required, veto: set.veto }
  try {
    for (const externalId of set.externalIds) approverCardParameters(rule, externalId, parameters)
  } catch (error) {
    throw retold(error, operation, '')
  }
}

/** Each member of a started set: who, and the decision the review run asked them on. */
export interface AskedMember {
  externalId: string
  decisionId: string
}

/**
 * The member reviews of a set the review run asked: the binding with each
 * member and every decision. Refused (thrown) when the run asked other
 * people than the binding names: nothing may be saved for them.
 *
 * @example
 * for (const review of setMemberReviews(binding, started.approvers, expiresAt)) await store.save(review)
 */
export function setMemberReviews(
  binding: PusharyAgentReviewBinding,
  asked: readonly AskedMember[],
  expiresAt: string | undefined,
): PusharyAgentReview[] {
  const set = binding.approverSet
  const names = asked.map((member) => member.externalId)
  if (!set || names.join('\u0000') !== set.externalIds.join('\u0000')) {
    throw new Error('the agent review workflow run asked other approvers than the review names')
  }
  const decisionIds = asked.map((member) => member.decisionId)
  return asked.map((member) => ({
    target: 'agent',
    ...binding,
    externalId: member.externalId,
    approverSet: { ...set, decisionIds },
    decisionId: member.decisionId,
    correlationId: member.decisionId,
    ...(expiresAt === undefined ? {} : { expiresAt }),
    state: 'pending',
  }))
}

/**
 * When a set's decisions expire. The run's suspension does not say, so it is
 * the lifetime asked for, counted from now (after the creates, so never
 * before the service's own expiry); `undefined` when none was asked.
 *
 * @example
 * const expiresAt = setExpiresAt({ expiresInSeconds: 3600 })
 */
export function setExpiresAt(delivery: { expiresInSeconds?: number | undefined }): string | undefined {
  const seconds = delivery.expiresInSeconds
  return seconds === undefined ? undefined : new Date(Date.now() + seconds * 1000).toISOString()
}

/** Who a resolver asks, each possibly a function of the pending approval. */
export interface ResolverRecipients<P> {
  externalId?: string | ((pending: P) => string)
  approvers?: PusharyApprovers | ((pending: P) => PusharyApprovers)
  requestedBy?: string | ((pending: P) => string)
  onFallback?: unknown
}

/**
 * The resolver's recipients as far as they are known before any run is
 * listed: either `externalId` or `approvers`, a valid requester, and a set
 * (when given as a value) that can reach its quorum.
 *
 * @example
 * checkResolverRecipients(config, 'resolvePusharyApprovals')
 */
export function checkResolverRecipients<P>(config: ResolverRecipients<P>, operation: string): void {
  const requestedBy = typeof config.requestedBy === 'function' ? undefined : config.requestedBy
  checkedRequester(requestedBy, operation, 'config.')
  if (config.approvers === undefined) {
    if (typeof config.externalId === 'string' && requestedBy !== undefined) {
      refuseOwnRequest(requestedBy, config.externalId, operation, 'config.')
    }
    return
  }
  if (config.externalId !== undefined) {
    refuse(
      operation,
      'config.approvers',
      'name either externalId (one approver) or approvers (several), not both',
    )
  }
  if (config.onFallback !== undefined) {
    refuse(
      operation,
      'config.onFallback',
      'approval links (onFallback) are not available for several approvers yet',
    )
  }
  if (typeof config.approvers !== 'function') {
    agentApproverSet(
      { externalId: undefined, approvers: config.approvers, requestedBy },
      operation,
      'config.',
    )
  }
}

/**
 * Who one pending approval asks: the customer, or the set (its functions
 * called with the pending approval). Typed errors name the field.
 *
 * @example
 * const { externalId, set } = resolverRecipients(config, pending, 'resolvePusharyApprovals')
 */
export function resolverRecipients<P>(
  config: ResolverRecipients<P>,
  pending: P,
  operation: string,
): AgentRecipients {
  const requestedBy = checkedRequester(
    typeof config.requestedBy === 'function' ? config.requestedBy(pending) : config.requestedBy,
    operation,
    'config.',
  )
  if (config.approvers === undefined) {
    const externalId =
      typeof config.externalId === 'function' ? config.externalId(pending) : config.externalId
    refuseOwnRequest(requestedBy, externalId as string, operation, 'config.')
    return { externalId: externalId as string }
  }
  const approvers = typeof config.approvers === 'function' ? config.approvers(pending) : config.approvers
  const set = agentApproverSet(
    { externalId: config.externalId, approvers, requestedBy },
    operation,
    'config.',
  )
  return { externalId: set.externalIds[0] as string, set }
}
