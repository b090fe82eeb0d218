import { z } from 'zod/v4'
import { DISPLAYED_TEXT_MESSAGE, isDisplayedTextExact } from './display-text.js'
import { PusharyValidationError } from './errors.js'
import { PUSHARY_LIMITS } from './limits.js'
import { isChoosableText, storableString } from './text-rules.js'

/**
 * The three kinds of question a person can be asked.
 *
 * @example
 * decisionTypeSchema.parse('select') // 'select'
 */
export const decisionTypeSchema = z.enum(['confirm', 'select', 'input'])
/** @example const type: DecisionType = 'confirm' */
export type DecisionType = z.infer<typeof decisionTypeSchema>

/**
 * Lifecycle status of a decision on the service.
 *
 * @example
 * decisionStatusSchema.parse('answered') // 'answered'
 */
export const decisionStatusSchema = z.enum(['pending', 'answered', 'expired', 'cancelled'])
/** @example const status: DecisionStatus = 'pending' */
export type DecisionStatus = z.infer<typeof decisionStatusSchema>

/**
 * Statuses a decision can end in.
 *
 * @example
 * terminalDecisionStatusSchema.parse('expired') // 'expired'
 */
export const terminalDecisionStatusSchema = z.enum(['answered', 'expired', 'cancelled'])
/** @example const status: TerminalDecisionStatus = 'cancelled' */
export type TerminalDecisionStatus = z.infer<typeof terminalDecisionStatusSchema>

const SELECT_NEEDS_OPTIONS =
  'select questions require at least two distinct, nonempty options (compared after Unicode NFC normalization)'
const OPTIONS_ONLY_ON_SELECT = 'only select questions accept options'

/**
 * Shared refinement: a select needs two distinct options, and only a select may
 * carry options (even an empty array is refused), both reported at `options`.
 *
 * @example
 * z.object({ type: decisionTypeSchema, options: z.array(z.string()).optional() }).superRefine(refineOptions)
 */
export function refineOptions(
  value: { type?: DecisionType | undefined; options?: readonly string[] | undefined },
  context: z.RefinementCtx,
): void {
  const type = value.type ?? 'confirm'
  if (type === 'select') {
    const options = value.options ?? []
    // Options that differ only in Unicode normalization look identical on the
    // page, so the reviewer could not tell which one they tap.
    if (
      options.length < 2 ||
      new Set(options.map((option) => option.normalize('NFC'))).size !== options.length
    ) {
      context.addIssue({ code: 'custom', path: ['options'], message: SELECT_NEEDS_OPTIONS })
    }
  } else if (value.options !== undefined) {
    context.addIssue({ code: 'custom', path: ['options'], message: OPTIONS_ONLY_ON_SELECT })
  }
}

/**
 * Text of a question: 1–500 characters after trimming, storable byte for
 * byte, so what the reviewer reads is exactly what was asked (a NUL would
 * otherwise hide everything after it on the page and in the store).
 *
 * @example
 * questionTextSchema.parse('  Refund EUR 48?  ') // 'Refund EUR 48?'
 */
export const questionTextSchema = storableString()
  .trim()
  .min(1)
  .max(PUSHARY_LIMITS.questionMax)
  .refine(isDisplayedTextExact, { message: DISPLAYED_TEXT_MESSAGE })

/**
 * One select option: 1–200 characters, storable, and free of control
 * characters (a CR, LF or NUL in a button value is rewritten by the browser's
 * form encoding, so that option could never be chosen).
 *
 * @example
 * optionSchema.parse('Refund to card')
 */
export const optionSchema = storableString()
  .min(1)
  .max(PUSHARY_LIMITS.optionMax)
  .refine(isChoosableText, { message: 'an option must not contain control characters (CR, LF, tab, NUL…)' })
  .refine(isDisplayedTextExact, { message: DISPLAYED_TEXT_MESSAGE })

/**
 * Schema of the options list: at most 20 {@link optionSchema} strings.
 *
 * @example
 * optionsSchema.parse(['refund', 'credit'])
 */
export const optionsSchema = z.array(optionSchema).max(PUSHARY_LIMITS.optionsMax)

/**
 * A question to put to one person. `question` is trimmed to 1–500
 * characters; `type` defaults to `'confirm'`.
 *
 * @example
 * pusharyQuestionSchema.parse({ question: 'Refund EUR 48?' }) // { question: 'Refund EUR 48?', type: 'confirm' }
 */
export const pusharyQuestionSchema = z
  .object({
    question: questionTextSchema,
    type: decisionTypeSchema.default('confirm'),
    options: optionsSchema.optional(),
  })
  .superRefine(refineOptions)
/** @example const q: PusharyQuestion = { question: 'Ship it?', type: 'confirm' } */
export type PusharyQuestion = z.infer<typeof pusharyQuestionSchema>

/**
 * The settled answer to a question. `approved` is true only for a confirm
 * answered `'yes'`; a choice or a typed answer is data, never permission.
 *
 * @example
 * pusharyAnswerSchema.parse({ status: 'expired', value: null, approved: false })
 */
export const pusharyAnswerSchema = z.object({
  status: terminalDecisionStatusSchema,
  value: z.string().nullable(),
  approved: z.boolean(),
})
/** @example const a: PusharyAnswer = { status: 'answered', value: 'yes', approved: true } */
export type PusharyAnswer = z.infer<typeof pusharyAnswerSchema>

/**
 * Parses a question, throwing `invalid_question` (or `invalid_options` when
 * only the options are wrong) with the zod issues attached.
 *
 * @example
 * const question = parsePusharyQuestion({ question: 'Pick one', type: 'select', options: ['a', 'b'] }, 'approvalStep')
 */
export function parsePusharyQuestion(input: unknown, operation = 'parsePusharyQuestion'): PusharyQuestion {
  const parsed = pusharyQuestionSchema.safeParse(input)
  if (parsed.success) return parsed.data
  const onlyOptions = parsed.error.issues.every((issue) => issue.path[0] === 'options')
  throw PusharyValidationError.fromZod(parsed.error, {
    operation,
    code: onlyOptions ? 'invalid_options' : 'invalid_question',
  })
}

/**
 * Strictly turns a terminal decision into a {@link PusharyAnswer}. Anything
 * but `answered` is `{ value: null, approved: false }`. An answered decision
 * must carry a value that fits the question: exactly `'yes'`/`'no'` for
 * confirm, one of the options for select; otherwise `invalid_answer`.
 *
 * @example
 * answerPusharyQuestion({ question: 'Refund?', type: 'confirm' }, 'answered', 'yes') // approved: true
 */
export function answerPusharyQuestion(
  question: PusharyQuestion,
  status: TerminalDecisionStatus,
  value: string | null,
): PusharyAnswer {
  if (status !== 'answered') return { status, value: null, approved: false }
  const fail = (message: string): never => {
    throw new PusharyValidationError({
      code: 'invalid_answer',
      operation: 'answerPusharyQuestion',
      field: 'value',
      message,
    })
  }
  if (value === null) return fail('an answered decision has no value')
  switch (question.type) {
    case 'confirm':
      if (value !== 'yes' && value !== 'no') fail('a confirm answer must be exactly "yes" or "no"')
      return { status, value, approved: value === 'yes' }
    case 'select':
      if (!(question.options ?? []).includes(value)) fail('the answer is not a configured option')
      return { status, value, approved: false }
    case 'input':
      return { status, value, approved: false }
    default: {
      const unreachable: never = question.type
      return fail(`unknown question type ${String(unreachable)}`)
    }
  }
}

/**
 * The one approval rule of this package: true only for an answered confirm
 * whose value is exactly `'yes'`. A select or input answer is data, never
 * permission, even when its text is `yes` or the tapped option reads
 * "Approve"; a decision without a known type is not approval either, since
 * it may have been a select. Fail closed on everything else.
 *
 * @example
 * isApproved({ status: 'answered', type: 'confirm', value: 'yes' }) // true
 * isApproved({ status: 'answered', type: 'select', value: 'yes' }) // false
 */
export function isApproved(decision: {
  status: string
  type?: DecisionType | null | undefined
  value: string | null | undefined
}): boolean {
  return decision.status === 'answered' && decision.type === 'confirm' && decision.value === 'yes'
}

/**
 * True when a raw confirm answer is exactly `'yes'`, the same rule as
 * {@link isApproved}. Null or missing is never yes.
 *
 * @example
 * isAffirmative('yes') // true
 * isAffirmative('ok') // false
 */
export function isAffirmative(answer: string | null | undefined): boolean {
  return isApproved({ status: 'answered', type: 'confirm', value: answer ?? null })
}

/**
 * One sentence an agent can read to decide what to do next. Anything but an
 * answered confirm-yes tells it not to proceed.
 *
 * @example
 * describeAnswer('confirm', { status: 'expired', value: null })
 * // 'No answer (status: expired). Treat this as NOT approved and do not proceed.'
 */
export function describeAnswer(
  type: DecisionType,
  result: { status: string; value: string | null | undefined },
): string {
  if (result.status !== 'answered') {
    return `No answer (status: ${result.status}). Treat this as NOT approved and do not proceed.`
  }
  if (type === 'confirm') {
    return isApproved({ status: result.status, type, value: result.value })
      ? 'The human approved. You may proceed.'
      : 'The human declined. Do not proceed.'
  }
  return `The human answered: ${result.value ?? ''}`
}
