import { describe, expect, it } from 'vitest'
import { createDecisionInputSchema } from '../../src/pushary/decision-schemas.js'
import { isPusharyValidationError, PusharyValidationError } from '../../src/pushary/errors.js'
import {
  answerPusharyQuestion,
  decisionStatusSchema,
  describeAnswer,
  isAffirmative,
  isApproved,
  type PusharyQuestion,
  parsePusharyQuestion,
} from '../../src/pushary/question.js'
import { thrown } from '../helpers/errors.js'

const confirm: PusharyQuestion = { question: 'Refund EUR 48?', type: 'confirm' }
const select: PusharyQuestion = { question: 'Which plan?', type: 'select', options: ['basic', 'pro'] }

describe('parsePusharyQuestion', () => {
  it('trims the question and defaults the type to confirm', () => {
    expect(parsePusharyQuestion({ question: '  Ship it?  ' })).toEqual({
      question: 'Ship it?',
      type: 'confirm',
    })
  })

  it.each([
    ['a blank question', { question: '   ' }, 'invalid_question', 'question'],
    ['a 501-character question', { question: 'q'.repeat(501) }, 'invalid_question', 'question'],
    [
      'a select with one option',
      { question: 'Pick', type: 'select', options: ['a'] },
      'invalid_options',
      'options',
    ],
    [
      'a select with duplicates',
      { question: 'Pick', type: 'select', options: ['a', 'a'] },
      'invalid_options',
      'options',
    ],
    ['options on a confirm', { question: 'Ok?', options: [] }, 'invalid_options', 'options'],
    [
      '21 options',
      { question: 'Pick', type: 'select', options: Array.from({ length: 21 }, (_, i) => `o${i}`) },
      'invalid_options',
      'options',
    ],
    [
      'an empty option',
      { question: 'Pick', type: 'select', options: ['a', ''] },
      'invalid_options',
      'options.1',
    ],
    ['an unknown type', { question: 'Ok?', type: 'vote' }, 'invalid_question', 'type'],
  ])('rejects %s naming the field', (_label, input, code, field) => {
    const error = thrown(() => parsePusharyQuestion(input, 'approvalStep'))
    expect(error).toBeInstanceOf(PusharyValidationError)
    expect(error).toMatchObject({ code, field, operation: 'approvalStep' })
    expect((error as PusharyValidationError).issues.length).toBeGreaterThan(0)
  })
})

describe('answerPusharyQuestion', () => {
  it('approves only a confirm answered exactly yes', () => {
    expect(answerPusharyQuestion(confirm, 'answered', 'yes')).toEqual({
      status: 'answered',
      value: 'yes',
      approved: true,
    })
    expect(answerPusharyQuestion(confirm, 'answered', 'no').approved).toBe(false)
    expect(answerPusharyQuestion(select, 'answered', 'pro')).toEqual({
      status: 'answered',
      value: 'pro',
      approved: false,
    })
    expect(answerPusharyQuestion({ question: 'Why?', type: 'input' }, 'answered', 'yes').approved).toBe(false)
  })

  it('turns expiry and cancellation into a null, unapproved answer', () => {
    expect(answerPusharyQuestion(confirm, 'expired', 'yes')).toEqual({
      status: 'expired',
      value: null,
      approved: false,
    })
    expect(answerPusharyQuestion(confirm, 'cancelled', null)).toEqual({
      status: 'cancelled',
      value: null,
      approved: false,
    })
  })

  it('settles any answered confirm without a throw: affirmative words approve, the rest decline as given', () => {
    for (const value of ['Yes', ' approve ', 'OK', 'y', 'TRUE', 'Accept', 'okay', 'confirm', 'approved']) {
      expect(answerPusharyQuestion(confirm, 'answered', value)).toEqual({
        status: 'answered',
        value,
        approved: true,
      })
    }
    for (const value of ['no', 'maybe', 'yes please', '', 'allow', null]) {
      expect(answerPusharyQuestion(confirm, 'answered', value)).toEqual({
        status: 'answered',
        value,
        approved: false,
      })
    }
  })

  it('refuses an unconfigured option for a select, whose answer later steps act on', () => {
    expect(thrown(() => answerPusharyQuestion(select, 'answered', 'enterprise'))).toMatchObject({
      code: 'invalid_answer',
      field: 'value',
    })
  })
})

describe('isApproved, isAffirmative and describeAnswer', () => {
  it('isApproved follows the official SDK for confirm: trimmed, case-insensitive affirmative words', () => {
    for (const value of [
      'yes',
      ' OK ',
      'Yes',
      'Y',
      'approve',
      'Approved',
      'okay',
      'confirm',
      'accept',
      'true',
    ]) {
      expect(isApproved({ status: 'answered', type: 'confirm', value })).toBe(true)
    }
    // A missing type is a confirm, as on a hosted callback.
    expect(isApproved({ status: 'answered', value: 'yes' })).toBe(true)
    expect(isApproved({ status: 'answered', type: null, value: 'yes' })).toBe(true)
    expect(isApproved({ status: 'answered', type: 'unknown', value: 'yes' })).toBe(false)
    expect(isApproved({ status: 'answered', type: 'confirm', value: 'nope' })).toBe(false)
    expect(isApproved({ status: 'answered', type: 'confirm', value: 'maybe' })).toBe(false)
    expect(isApproved({ status: 'answered', type: 'confirm', value: null })).toBe(false)
    expect(isApproved({ status: 'expired', type: 'confirm', value: 'yes' })).toBe(false)
    expect(isApproved({ status: 'unknown', type: 'confirm', value: 'yes' })).toBe(false)
    expect(isApproved({ status: 'pending', type: 'input', value: 'yes' })).toBe(false)
  })

  it('never approves a select or an input answer, whatever it says', () => {
    for (const value of ['basic', 'Deny refund', 'yes', 'Approve']) {
      expect(isApproved({ status: 'answered', type: 'select', value })).toBe(false)
      expect(isApproved({ status: 'answered', type: 'input', value })).toBe(false)
    }
  })

  it('reads exactly the nine SDK words as affirmative, trimmed and case-insensitive', () => {
    for (const word of ['yes', 'y', 'approve', 'approved', 'ok', 'okay', 'confirm', 'accept', 'true']) {
      expect(isAffirmative(word)).toBe(true)
      expect(isAffirmative(` ${word.toUpperCase()}\n`)).toBe(true)
    }
    for (const word of ['no', '', 'yes please', 'allow', 'yess', 'y e s', null, undefined]) {
      expect(isAffirmative(word)).toBe(false)
    }
  })

  it('tells an agent not to proceed unless a confirm was approved', () => {
    expect(describeAnswer('confirm', { status: 'expired', value: null })).toBe(
      'No answer (status: expired). Treat this as NOT approved and do not proceed.',
    )
    expect(describeAnswer('confirm', { status: 'answered', value: 'yes' })).toBe(
      'The human approved. You may proceed.',
    )
    expect(describeAnswer('confirm', { status: 'answered', value: 'no' })).toBe(
      'The human declined. Do not proceed.',
    )
    expect(describeAnswer('input', { status: 'answered', value: 'ship friday' })).toBe(
      'The human answered: ship friday',
    )
  })
})

describe('createDecisionInputSchema', () => {
  it('accepts a full decision with parameters and a matching presentation', () => {
    const parsed = createDecisionInputSchema.safeParse({
      question: 'Refund EUR 48?',
      externalId: 'customer_1',
      callbackUrl: 'http://127.0.0.1:3000/pushary/callback',
      expiresInSeconds: 3600,
      idempotencyKey: 'k1',
      toolName: 'refund.create',
      parameters: { amountMinor: 4800, currency: 'EUR', full: true },
      presentation: {
        label: 'Refund',
        effect: 'Money goes back to the customer',
        changes: [
          { parameter: 'amountMinor', label: 'Amount', format: { kind: 'currency', currency: 'EUR' } },
        ],
        risk: 'medium',
      },
    })
    expect(parsed.success).toBe(true)
  })

  it.each([
    ['a non-http callback URL', { callbackUrl: 'ftp://example.com/cb' }, 'callbackUrl'],
    ['a 2001-character context', { context: 'c'.repeat(2001) }, 'context'],
    [
      '33 parameters',
      { parameters: Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`p${i}`, i])) },
      'parameters',
    ],
    ['a nested parameter', { parameters: { nested: { a: 1 } } }, 'parameters.nested'],
    ['a 121-character actor', { actor: 'a'.repeat(121) }, 'actor'],
    ['a 41-character environment', { environment: 'e'.repeat(41) }, 'environment'],
    ['a zero expiry', { expiresInSeconds: 0 }, 'expiresInSeconds'],
    [
      'a presentation naming a missing parameter',
      {
        presentation: {
          label: 'L',
          effect: 'E',
          changes: [{ parameter: 'x', label: 'X', format: { kind: 'text' } }],
        },
      },
      'presentation.changes.0.parameter',
    ],
  ])('rejects %s at its path', (_label, extra, path) => {
    const parsed = createDecisionInputSchema.safeParse({ question: 'Ok?', ...extra })
    expect(parsed.success).toBe(false)
    expect(parsed.error?.issues.map((issue) => issue.path.join('.'))).toContain(path)
  })

  it('never lets a raw ZodError escape: fromZod keeps issues and names the field', () => {
    const parsed = createDecisionInputSchema.safeParse({ question: '' })
    const error = PusharyValidationError.fromZod(parsed.error!, {
      operation: 'test',
      code: 'invalid_question',
    })
    expect(isPusharyValidationError(error)).toBe(true)
    expect(error.field).toBe('question')
    expect(error.issues[0]).toMatchObject({ path: ['question'] })
    expect(error.message).toContain('question')
  })
})

describe('what the question and answer errors tell the caller', () => {
  it('names each options rule in the message and the operation that refused it', () => {
    const messageOf = (input: unknown, operation?: string) => {
      const error = thrown(() => parsePusharyQuestion(input, operation)) as PusharyValidationError
      return {
        operation: error.operation,
        message: error.message,
        issues: error.issues.map((i) => i.message),
      }
    }
    expect(messageOf({ question: 'Pick', type: 'select', options: ['a'] })).toMatchObject({
      operation: 'parsePusharyQuestion',
      issues: [expect.stringContaining('select questions require at least two distinct, nonempty options')],
    })
    expect(messageOf({ question: 'Ok?', options: ['a', 'b'] }, 'approvalStep').issues).toEqual([
      'only select questions accept options',
    ])
    expect(messageOf({ question: 'Pick', type: 'select', options: ['a', 'b\nc'] }).issues).toEqual([
      expect.stringContaining('an option must not contain control characters'),
    ])
  })

  it('keeps the rule violations as custom zod issues, and knows every decision status', () => {
    const error = thrown(() =>
      parsePusharyQuestion({ question: 'Ok?', options: ['a', 'b'] }),
    ) as PusharyValidationError
    expect(error.issues.map((issue) => issue.code)).toEqual(['custom'])
    const select = thrown(() => parsePusharyQuestion({ question: 'Pick', type: 'select', options: ['a'] }))
    expect((select as PusharyValidationError).issues.map((issue) => issue.code)).toEqual(['custom'])
    for (const status of ['pending', 'answered', 'expired', 'cancelled']) {
      expect(decisionStatusSchema.parse(status)).toBe(status)
    }
  })

  it('refuses a select without options as a select, not as a confirm carrying options', () => {
    const error = thrown(() => parsePusharyQuestion({ question: 'Pick', type: 'select' }))
    expect(error).toMatchObject({ code: 'invalid_options', field: 'options' })
    expect((error as PusharyValidationError).issues.map((issue) => issue.message)).toEqual([
      expect.stringContaining('select questions require'),
    ])
  })

  it('reports invalid_question, not invalid_options, when the question text is wrong as well', () => {
    expect(
      thrown(() => parsePusharyQuestion({ question: ' ', type: 'select', options: ['a'] })),
    ).toMatchObject({ code: 'invalid_question' })
  })

  it('refuses an answered input without a value, and any answer to a select without options', () => {
    const input: PusharyQuestion = { question: 'Ticket number?', type: 'input' }
    expect(thrown(() => answerPusharyQuestion(input, 'answered', null))).toMatchObject({
      code: 'invalid_answer',
      operation: 'answerPusharyQuestion',
      message: expect.stringContaining('an answered input decision has no value'),
    })
    const bare = { question: 'Pick', type: 'select' } as PusharyQuestion
    expect(thrown(() => answerPusharyQuestion(bare, 'answered', 'Stryker was here'))).toMatchObject({
      code: 'invalid_answer',
      message: expect.stringContaining('the answer is not a configured option'),
    })
  })

  it('fails closed on a question type it does not know', () => {
    const unknown = { question: 'Vote?', type: 'vote' } as unknown as PusharyQuestion
    expect(thrown(() => answerPusharyQuestion(unknown, 'answered', 'yes'))).toMatchObject({
      code: 'invalid_answer',
      message: expect.stringContaining('unknown question type vote'),
    })
  })

  it('tells an agent an answered input without a value as an empty answer', () => {
    expect(describeAnswer('input', { status: 'answered', value: null })).toBe('The human answered: ')
  })
})
