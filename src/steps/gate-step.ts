import { createStep } from '@mastra/core/workflows'
import { z } from 'zod/v4'
import { PusharyValidationError } from '../pushary/errors.js'
import { idSchema } from '../pushary/identity.js'
import { isAffirmative, type PusharyAnswer, pusharyAnswerSchema } from '../pushary/question.js'
import { PUSHARY_GUARD_METADATA_KEY } from './gate-warning.js'

/**
 * The only answer that is permission, as {@link pusharyGate} passes it on.
 *
 * `'pusharyGate()'` is a type-only mark (like a zod brand: the value has no
 * such key at runtime). Only the gate's output carries it in the types, so a
 * step declaring {@link pusharyApprovedAnswerSchema} as its input compiles
 * after the gate and nowhere else; wired straight after the approval step,
 * the compiler says `Property ''pusharyGate()'' is missing`.
 *
 * @example
 * const approved = (answer: PusharyApprovedAnswer) => answer.value // 'yes', ' OK '…
 */
export interface PusharyApprovedAnswer {
  status: 'answered'
  /** The answer as given ('yes', ' OK '…): one of the affirmative words. */
  value: string
  approved: true
  /** Type-only: present in the types of the gate's output, absent from the value. */
  readonly 'pusharyGate()': 'a protected step runs only on an answer that passed pusharyGate()'
}

/**
 * The approval step's answer in the types: a {@link PusharyAnswer} (a denial
 * fits it too) whose printed name carries the fix. Wired straight into a
 * protected step that declares {@link pusharyApprovedAnswerSchema}, the
 * compiler's first line then reads `… parameter of type 'Step<"refund", …,
 * PusharyUngatedAnswer<"insert .then(pusharyGate()) after pusharyApprovalStep">, …>'`
 * instead of naming the gate on its tenth. The type parameter is that message
 * and nothing else; the value is a plain answer.
 *
 * @example
 * const answer: PusharyUngatedAnswer = { status: 'answered', value: 'no', approved: false }
 */
export interface PusharyUngatedAnswer<
  _Fix extends string = 'insert .then(pusharyGate()) after pusharyApprovalStep',
> extends PusharyAnswer {}

/**
 * {@link pusharyAnswerSchema} typed as {@link PusharyUngatedAnswer}: the approval step's output schema.
 *
 * @example
 * createStep({ id: 'approve', inputSchema, outputSchema: pusharyUngatedAnswerSchema, execute })
 */
export const pusharyUngatedAnswerSchema = pusharyAnswerSchema as unknown as z.ZodType<
  PusharyUngatedAnswer,
  PusharyUngatedAnswer
>

const approvedAnswerShape = z.object({
  status: z.literal('answered'),
  value: z.string().refine(isAffirmative, { message: 'an approved answer is an affirmative confirm answer' }),
  approved: z.literal(true),
})

/**
 * The only answer that is permission: a confirm answered affirmatively.
 * Declare it as the `inputSchema` of a protected step, never
 * `pusharyAnswerSchema` (which a denial also fits):
 *
 * - at compile time, Mastra's typed `.then` accepts that step after
 *   {@link pusharyGate} and refuses it straight after the approval step with
 *   an error naming `pusharyGate()`;
 * - at run time, Mastra validates a step's input before its body runs, so a
 *   declined answer forced past the gate (a cast, an untyped workflow) fails
 *   the run before the protected action, and a run resumed again finds the
 *   step never executed.
 *
 * @example
 * const refund = createStep({ id: 'refund', inputSchema: pusharyApprovedAnswerSchema, outputSchema, execute })
 * createWorkflow({ id, inputSchema, outputSchema }).then(approvalStep).then(pusharyGate()).then(refund).commit()
 */
export const pusharyApprovedAnswerSchema = approvedAnswerShape as unknown as z.ZodType<
  PusharyApprovedAnswer,
  PusharyApprovedAnswer
>

/**
 * Why a gate refused to continue. `not_approved` covers a select or input
 * answer: data, never permission.
 *
 * @example
 * const reason: PusharyDeclineReason = 'expired'
 */
export type PusharyDeclineReason = 'denied' | 'expired' | 'cancelled' | 'not_approved'

/**
 * The run result when {@link pusharyGate} ends a run: the run status is
 * `success`, its `result` is this object, and no later step ran.
 *
 * @example
 * if (isPusharyDeclined(result.result)) console.log('not executed:', result.result.reason)
 */
export const pusharyDeclinedSchema = z.object({
  outcome: z.literal('declined'),
  reason: z.enum(['denied', 'expired', 'cancelled', 'not_approved']),
  answer: pusharyAnswerSchema,
})
/** @example const d: PusharyDeclined = { outcome: 'declined', reason: 'denied', answer } */
export type PusharyDeclined = z.infer<typeof pusharyDeclinedSchema>

/**
 * @example
 * if (isPusharyDeclined(run.result)) notifyRequester(run.result.reason)
 */
export function isPusharyDeclined(value: unknown): value is PusharyDeclined {
  return pusharyDeclinedSchema.safeParse(value).success
}

/**
 * Classifies an answer for a gate. Fail closed: anything but a confirm
 * answered `yes` (`approved: true`) is a decline.
 *
 * @example
 * declineReason({ status: 'expired', value: null, approved: false }) // 'expired'
 */
export function declineReason(answer: PusharyAnswer): PusharyDeclineReason | null {
  if (answer.approved === true && answer.status === 'answered') return null
  switch (answer.status) {
    case 'expired':
      return 'expired'
    case 'cancelled':
      return 'cancelled'
    case 'answered':
      return answer.value?.trim().toLowerCase() === 'no' ? 'denied' : 'not_approved'
    case 'unknown':
      return 'not_approved'
    default: {
      const unreachable: never = answer.status
      return unreachable
    }
  }
}

function gateId(id: unknown, fallback: string): string {
  const parsed = idSchema.optional().safeParse(id)
  if (!parsed.success) {
    throw PusharyValidationError.fromZod(parsed.error, {
      operation: 'pusharyGate',
      code: 'invalid_identifier',
      fieldPrefix: 'opts.id',
    })
  }
  return parsed.data ?? fallback
}

/**
 * Place between {@link pusharyApprovalStep} and a protected step. Passes the
 * answer on only when `approved` is true; otherwise ends the run (status
 * `success`) with a {@link PusharyDeclined} result, so the protected step is
 * never reached on deny, expiry, cancellation, or a select/input answer.
 *
 * @example
 * createWorkflow({ id: 'refund', inputSchema, outputSchema })
 *   .then(pusharyApprovalStep(config, opts)).then(pusharyGate()).then(issueRefund).commit()
 */
export function pusharyGate(opts: { id?: string } = {}) {
  return createStep({
    id: gateId(opts.id, 'pushary-gate'),
    description: 'Continue only when the person approved; otherwise end the run as declined.',
    metadata: { [PUSHARY_GUARD_METADATA_KEY]: 'gate' },
    inputSchema: pusharyAnswerSchema,
    outputSchema: pusharyApprovedAnswerSchema,
    execute: async ({ inputData, bail }) => {
      const answer = pusharyAnswerSchema.parse(inputData)
      const reason = declineReason(answer)
      // Fail closed: anything that is not exactly the approved shape declines.
      const approved = pusharyApprovedAnswerSchema.safeParse(answer)
      if (reason === null && approved.success) return approved.data
      const declined: PusharyDeclined = { outcome: 'declined', reason: reason ?? 'not_approved', answer }
      return bail(declined)
    },
  })
}

/**
 * One approved item after {@link pusharyGateItems}: its index in the input
 * list and its answer.
 *
 * @example
 * const item: PusharyApprovedItem = { index: 2, answer: { status: 'answered', value: 'yes', approved: true } }
 */
export const pusharyApprovedItemSchema = z.object({
  index: z.number().int().min(0),
  answer: pusharyApprovedAnswerSchema,
})
/** @example const items: PusharyApprovedItem[] = [] */
export type PusharyApprovedItem = z.infer<typeof pusharyApprovedItemSchema>

/**
 * The multi-item gate: takes the per-item answers (from `.foreach` over the
 * approval step or from the batch step) and passes on only the approved ones,
 * with their input index, so a following `.foreach(protectedStep)` never sees
 * a declined, expired, cancelled, select or input item.
 *
 * @example
 * wf.then(pusharyApprovalBatchStep({ childWorkflowId, store })).then(pusharyGateItems()).foreach(refundItem)
 */
export function pusharyGateItems(opts: { id?: string } = {}) {
  return createStep({
    id: gateId(opts.id, 'pushary-gate-items'),
    description: 'Keep only the items the person approved.',
    metadata: { [PUSHARY_GUARD_METADATA_KEY]: 'gate' },
    inputSchema: z.array(pusharyAnswerSchema),
    outputSchema: z.array(pusharyApprovedItemSchema),
    execute: async ({ inputData }) => {
      const answers = z.array(pusharyAnswerSchema).parse(inputData)
      return answers.flatMap((answer, index) => {
        const approved = pusharyApprovedAnswerSchema.safeParse(answer)
        return approved.success && declineReason(answer) === null ? [{ index, answer: approved.data }] : []
      })
    },
  })
}
