/**
 * A permit after several approvers (issue 41). The approval step settles the
 * set and names its decisive decision (the approval that reached the quorum)
 * for the permit step; one permit is spent on that decision, for the approver
 * who gave it. The service checks only that this one decision approved, so
 * before spending it the permit step proves the rest at the service: every
 * decision the step says settled the set was asked by this run's step in the
 * same set, each by another approver, each approved, at least as many as the
 * set requires, the spent one last. Anything else fails closed: nothing is spent.
 *
 * The action presented for the permit carries the two card parameters each
 * member's decision was asked with (`approverCardParameters`): the service
 * compares the action with what the approver saw, and their card said how
 * many approvals are needed and who else was asked.
 */
import { z } from 'zod/v4'
import type { PusharyClient } from '../pushary/client.js'
import { PusharyValidationError } from '../pushary/errors.js'
import { isApproved } from '../pushary/question.js'
import type { Decision } from '../pushary/wire-responses.js'
import { approverCardParameters } from './approver-set.js'
import { approverSetGroupKey } from './workflow-binding.js'

type Parameters = Record<string, string | number | boolean>

/** The parts of a member's decision context (`workflowBindingContext`) the permit relies on. */
const memberContextSchema = z.object({
  pushary: z.literal('workflow-step'),
  workflowId: z.string(),
  runId: z.string(),
  stepId: z.string(),
  externalId: z.string(),
  approverSet: z.string(),
  approversRequired: z.number().int().min(1),
})
type MemberContext = z.infer<typeof memberContextSchema>

/** The approval step's answer for an approved set (`PusharyApproverSetAnswer`), as the run kept it. */
const approvedSetSchema = z.object({
  approved: z.literal(true),
  settledBy: z.array(z.string()).min(1),
  rule: z.object({
    externalIds: z.array(z.string()).min(1),
    required: z.number().int().min(1),
    veto: z.boolean(),
    // Escalation tiers change what each card says ("then bob if undecided after 10 min").
    escalation: z.array(z.object({ afterSeconds: z.number(), externalIds: z.array(z.string()) })).optional(),
  }),
})

/** What a permit on a set's decisive decision adds to the single approver's permit. */
export interface PermitApproverSet {
  /** The decisions whose approvals settled the set, in answer order; the spent one is last. */
  settledBy: string[]
  /** The action's parameters as the decisive approver's card showed them. */
  parameters: Parameters
}

function refuse(message: string): PusharyValidationError {
  return new PusharyValidationError({
    code: 'invalid_options',
    operation: 'withPusharyPermit',
    field: 'approvalStepId',
    message: `before the action: ${message}`,
  })
}

function contextOf(decision: Decision): Record<string, unknown> | null {
  try {
    const parsed: unknown = JSON.parse(decision.context ?? 'null')
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : null
  } catch {
    return null
  }
}

function memberContext(decision: Decision, where: Where): MemberContext {
  const parsed = memberContextSchema.safeParse(contextOf(decision))
  if (
    !parsed.success ||
    parsed.data.workflowId !== where.workflowId ||
    parsed.data.runId !== where.runId ||
    parsed.data.stepId !== where.stepId ||
    parsed.data.approverSet !== approverSetGroupKey(where)
  ) {
    throw refuse(`decision ${decision.decisionId} was not asked by this run's set of approvers`)
  }
  return parsed.data
}

interface Where {
  workflowId: string
  runId: string
  stepId: string
}

/**
 * `null` when the decision to spend was asked of one approver (its context
 * names no set). For a member of a set: the set proven at the service and
 * the action's parameters with the card's; throws a
 * {@link PusharyValidationError} (nothing spent) when the proof fails.
 *
 * @example
 * const set = await permitApproverSet(client, decision, getStepResult('approve'), where, action.parameters)
 * if (set) request.parameters = set.parameters
 */
export async function permitApproverSet(
  client: Pick<PusharyClient, 'decisions'>,
  decision: Decision,
  stepOutput: unknown,
  where: Where,
  parameters: Parameters | undefined,
): Promise<PermitApproverSet | null> {
  if (contextOf(decision)?.approverSet === undefined) return null
  const own = memberContext(decision, where)
  const set = approvedSetSchema.safeParse(stepOutput)
  if (!set.success) {
    throw refuse(
      `decision ${decision.decisionId} belongs to a set of approvers, but step "${where.stepId}" returned no approved set`,
    )
  }
  const { settledBy, rule } = set.data
  if (settledBy.at(-1) !== decision.decisionId) {
    throw refuse(
      `decision ${decision.decisionId} is not the approval that settled the set (settled by ${settledBy.join(', ')})`,
    )
  }
  if (rule.required !== own.approversRequired || new Set(settledBy).size < own.approversRequired) {
    throw refuse(
      `the set was asked for ${own.approversRequired} approvals; step "${where.stepId}" names ${settledBy.length} (rule: ${rule.required})`,
    )
  }
  const approvers = new Set<string>()
  for (const decisionId of settledBy) {
    const member = decisionId === decision.decisionId ? decision : await client.decisions.get(decisionId)
    const context = memberContext(member, where)
    if (!isApproved(member)) throw refuse(`decision ${decisionId} of the set did not approve`)
    if (approvers.has(context.externalId) || !rule.externalIds.includes(context.externalId)) {
      throw refuse(`decision ${decisionId} is not another approver of the set`)
    }
    approvers.add(context.externalId)
  }
  return { settledBy, parameters: approverCardParameters(rule, own.externalId, parameters) }
}
