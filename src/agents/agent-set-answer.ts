/**
 * The settled set of several approvers as an agent review carries it: the
 * review run's ask step returns it (`steps/approver-set-resume.ts`), its
 * last step keeps it in the run's result, and the agent results report it
 * (`approvers`, `settledBy`) with the set's verdict as the answer.
 */
import { z } from 'zod/v4'
import type { PusharyAnswer } from '../pushary/question.js'
import { terminalDecisionStatusSchema } from '../pushary/question.js'

/**
 * The ask step's answer for a settled set, as the review run keeps it.
 *
 * @example
 * const set = settledAgentSetSchema.parse(askStepOutput)
 */
export const settledAgentSetSchema = z.object({
  status: terminalDecisionStatusSchema,
  value: z.string().nullable(),
  approved: z.boolean(),
  approvers: z.array(
    z.object({
      externalId: z.string(),
      decisionId: z.string(),
      status: z.enum(['pending', 'answered', 'expired', 'cancelled', 'unknown']),
      approved: z.boolean(),
      answeredAt: z.string().nullable(),
      late: z.literal(true).optional(),
    }),
  ),
  settledBy: z.array(z.string()),
  rule: z.object({ externalIds: z.array(z.string()), required: z.number(), veto: z.boolean() }),
})
/** @example const set: SettledAgentSet = settledAgentSetSchema.parse(output) */
export type SettledAgentSet = z.infer<typeof settledAgentSetSchema>

/**
 * The settled set in a step's result (`{ status: 'success', output }`) or in
 * an output itself, else `null` (one approver's answer, or nothing settled).
 *
 * @example
 * const set = settledAgentSetOf(getStepResult('ask'))
 */
export function settledAgentSetOf(value: unknown): SettledAgentSet | null {
  const record = value as { status?: unknown; output?: unknown } | null | undefined
  const output = record?.status === 'success' && record.output !== undefined ? record.output : value
  const parsed = settledAgentSetSchema.safeParse(output)
  return parsed.success ? parsed.data : null
}

/**
 * The reason a call declined by its approvers carries; the model reads it.
 *
 * @example
 * setDeclineReason(set) // 'The approvers declined (1 of 2 required approvals; one said no).'
 */
export function setDeclineReason(set: SettledAgentSet): string {
  const counted = set.approvers.filter((member) => member.late !== true)
  const approvals = counted.filter((member) => member.approved).length
  const denied = counted.some((member) => member.status === 'answered' && !member.approved)
  return `The approvers declined (${approvals} of ${set.rule.required} required approvals${
    denied ? '; one said no' : '; the others did not answer in time'
  }).`
}

/**
 * The set's verdict as one answer: the decisive approver's status and value,
 * `approved` from the rule.
 *
 * @example
 * const answer = setAnswer(set) // { status: 'answered', value: 'yes', approved: true }
 */
export function setAnswer(set: SettledAgentSet): PusharyAnswer {
  return { status: set.status, value: set.value, approved: set.approved }
}
