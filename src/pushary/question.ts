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
 * Statuses a decision can end in. `'unknown'` is a status the service
 * reported that this package does not know: it settles the question as not
 * approved instead of leaving a run waiting on a value it cannot read.
 *
 * @example
 * terminalDecisionStatusSchema.parse('expired') // 'expired'
 */
export const terminalDecisionStatusSchema = z.enum(['answered', 'expired', 'cancelled', 'unknown'])
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
 * answered affirmatively (see {@link isAffirmative}); a choice or a typed
 * answer is data, never permission.
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
 * The confirm answers that approve, as the official Pushary SDK reads them:
 * compared after trimming and lower-casing. Anything else declines.
 *
 * @example
 * PUSHARY_AFFIRMATIVE_ANSWERS.includes('approve') // true
 */
export const PUSHARY_AFFIRMATIVE_ANSWERS = [
  'yes',
  'y',
  'approve',
  'approved',
  'ok',
  'okay',
  'confirm',
  'accept',
  'true',
] as const

const AFFIRMATIVE = new Set<string>(PUSHARY_AFFIRMATIVE_ANSWERS)

/**
 * Turns a terminal decision into a {@link PusharyAnswer}. Anything but
 * `answered` is `{ value: null, approved: false }`. A confirm is approved
 * only by an affirmative answer ({@link isAffirmative}); any other confirm
 * answer declines and is kept exactly as given, so an odd value from a
 * relay settles the run instead of leaving it hanging. A select answer must
 * be one of the options (it becomes data a later step acts on, so an
 * unoffered choice is `invalid_answer`); an input answer is data. Neither
 * is ever approval.
 *
 * @example
 * answerPusharyQuestion({ question: 'Refund?', type: 'confirm' }, 'answered', 'Yes') // approved: true
 * answerPusharyQuestion({ question: 'Refund?', type: 'confirm' }, 'answered', 'maybe') // approved: false
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
  switch (question.type) {
    case 'confirm':
      // An answered confirm without a value is a decline, never a throw.
      return { status, value, approved: isAffirmative(value) }
    case 'select':
      if (value === null) return fail('an answered select decision has no value')
      if (!(question.options ?? []).includes(value)) fail('the answer is not a configured option')
      return { status, value, approved: false }
    case 'input':
      if (value === null) return fail('an answered input decision has no value')
      return { status, value, approved: false }
    default: {
      const unreachable: never = question.type
      return fail(`unknown question type ${String(unreachable)}`)
    }
  }
}

/**
 * The one approval rule of this package, the official SDK's rule for
 * confirm: an answered decision whose type is `confirm` (or absent, as on a
 * hosted callback) and whose value is affirmative ({@link isAffirmative}).
 * A select or input answer is data, never permission, even when its text is
 * `yes`; an unknown type or status is not approval. Fail closed on
 * everything else.
 *
 * @example
 * isApproved({ status: 'answered', type: 'confirm', value: ' OK ' }) // true
 * isApproved({ status: 'answered', type: 'select', value: 'yes' }) // false
 */
export function isApproved(decision: {
  status: string
  type?: string | null | undefined
  value: string | null | undefined
}): boolean {
  const type = decision.type ?? 'confirm'
  return decision.status === 'answered' && type === 'confirm' && isAffirmative(decision.value)
}

/**
 * True when a raw confirm answer approves: trimmed and lower-cased, it is
 * one of {@link PUSHARY_AFFIRMATIVE_ANSWERS}. Null or missing never is.
 *
 * @example
 * isAffirmative(' Approve ') // true
 * isAffirmative('maybe') // false
 */
export function isAffirmative(answer: string | null | undefined): boolean {
  return typeof answer === 'string' && AFFIRMATIVE.has(answer.trim().toLowerCase())
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
