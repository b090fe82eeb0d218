/**
 * Asking members of a set of approvers: one decision each (the same
 * question and binding, the approver's own idempotency key, context and
 * card), then one review each. Used by the first pass and by each
 * escalation. Everything that can be refused is built before the first
 * request.
 */
import { fingerprintPusharyAction } from '../pushary/identity.js'
import type { PusharyWorkflowReview } from '../store/review-schema.js'
import { logAsked } from './approval-log.js'
import type { ApproverEscalationState } from './approver-escalation.js'
import { approverCardParameters } from './approver-set.js'
import { type ApproverSetRun, memberBinding } from './approver-set-run.js'
import { decisionExpiresAt } from './decision-expiry.js'
import {
  type PusharyWorkflowBinding,
  workflowApprovalKey,
  workflowBindingContext,
} from './workflow-binding.js'

/** One member asked: who, their binding and decision. */
export interface AskedMember {
  externalId: string
  binding: PusharyWorkflowBinding
  decisionId: string
  expiresAt?: string
}

/**
 * Creates one decision per approver, all at once (each has its own key, so
 * the order they reach the service changes nothing), returned in the order
 * asked. On a failure the first error is thrown with the members that were
 * created attached as `created` (so the caller decides whether to withdraw
 * them).
 *
 * @example
 * const created = await createMembers(run, ['alice', 'bob'])
 */
export async function createMembers<S>(
  run: ApproverSetRun<S>,
  externalIds: readonly string[],
): Promise<AskedMember[]> {
  const { client, rule, question, input } = run
  const asks = externalIds.map((externalId) => {
    const binding = memberBinding(run, externalId)
    return {
      externalId,
      binding,
      context: workflowBindingContext(binding),
      parameters: approverCardParameters(rule, externalId, input.subject?.parameters),
    }
  })
  const results = await Promise.allSettled(
    asks.map(async (ask): Promise<AskedMember> => {
      const result = await client.decisions.create({
        question: question.question,
        type: question.type,
        ...(input.placeholder === undefined ? {} : { placeholder: input.placeholder }),
        ...input.subject,
        parameters: ask.parameters,
        externalId: ask.externalId,
        context: ask.context,
        // The single approver's key with this approver: a retry, a recovery
        // restart or a repeated escalation lands on the same decisions.
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
      return {
        externalId: ask.externalId,
        binding: ask.binding,
        decisionId: result.decisionId,
        ...(expiresAt === undefined ? {} : { expiresAt }),
      }
    }),
  )
  const created = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []))
  const failed = results.find((result) => result.status === 'rejected')
  if (failed) {
    const error: unknown = failed.reason
    throw Object.assign(error instanceof Error ? error : new Error(String(error)), { created })
  }
  return created
}

/** The members created before a {@link createMembers} failure. */
export function createdBefore(error: unknown): AskedMember[] {
  const created = (error as { created?: unknown } | null)?.created
  return Array.isArray(created) ? (created as AskedMember[]) : []
}

/**
 * Saves one pending review per member (idempotent: saving the same member
 * again is a no-op). `decisionIds` are every member asked so far, in order.
 *
 * @example
 * await saveMemberReviews(run, created, decisionIds)
 */
export async function saveMemberReviews<S>(
  run: ApproverSetRun<S>,
  members: readonly AskedMember[],
  decisionIds: readonly string[],
): Promise<void> {
  const { rule, question } = run
  const approverSet = {
    decisionIds: [...decisionIds],
    externalIds: rule.externalIds,
    required: rule.required,
    veto: rule.veto,
    ...(rule.escalation === undefined ? {} : { escalation: rule.escalation }),
  }
  for (const member of members) {
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
    if (run.store) await run.store.save(review)
    logAsked(run.mastra, {
      decisionId: member.decisionId,
      workflowId: member.binding.workflowId,
      runId: member.binding.runId,
      stepId: member.binding.stepId,
      delivery: 'push',
      toolName: run.input.subject?.toolName,
      agent: run.asking,
    })
  }
}

/**
 * The members as the suspend payload lists them before anyone answered.
 *
 * @example
 * pendingOutcomes(created) // [{ externalId: 'alice', decisionId: 'd_1', status: 'pending', … }]
 */
export function pendingOutcomes(members: readonly AskedMember[]) {
  return members.map((member) => ({
    externalId: member.externalId,
    decisionId: member.decisionId,
    status: 'pending' as const,
    value: null,
    approved: false,
    answeredAt: null,
  }))
}

/** Pages of one approver's decisions read while looking for a member's decision. */
const LOOKUP_PAGES = 20

/** Whether the service holds a decision asked of this member of the set (its exact binding context). */
async function askedAtService<S>(run: ApproverSetRun<S>, externalId: string, from: string | undefined) {
  const context = workflowBindingContext(memberBinding(run, externalId))
  let cursor: string | undefined
  for (let page = 0; page < LOOKUP_PAGES; page++) {
    const list = await run.client.decisions.list({
      externalId,
      limit: 100,
      ...(from === undefined ? {} : { from }),
      ...(cursor === undefined ? {} : { cursor }),
    })
    if (list.decisions.some((decision) => decision.context === context)) return true
    if (!list.nextCursor) return false
    cursor = list.nextCursor
  }
  return false
}

/**
 * Where a set's escalation stands, read from the service, for a recovery
 * restart whose snapshot no longer holds it (Mastra drops a step's suspend
 * payload once a resume of it starts): the timer started when the first
 * approver's decision was created, and a tier was asked if the service holds
 * a decision of any of its members with this run's binding (the restart then
 * asks the rest of that tier by the same keys).
 *
 * @example
 * const escalation = await escalationAtService(run, created[0]?.decisionId)
 */
export async function escalationAtService<S>(
  run: ApproverSetRun<S>,
  firstDecisionId: string | undefined,
): Promise<ApproverEscalationState> {
  const first = firstDecisionId === undefined ? null : await run.client.decisions.get(firstDecisionId)
  const created = first?.createdAt ? Date.parse(first.createdAt) : Number.NaN
  const startedAt = Number.isFinite(created) ? new Date(created).toISOString() : new Date().toISOString()
  // A minute's margin: `from` is the service's own clock, as createdAt is.
  const from = Number.isFinite(created) ? new Date(created - 60_000).toISOString() : undefined
  let asked = 0
  for (const tier of run.rule.escalation ?? []) {
    const found = await Promise.all(tier.externalIds.map((id) => askedAtService(run, id, from)))
    if (!found.some(Boolean)) break
    asked++
  }
  return { startedAt, asked }
}
