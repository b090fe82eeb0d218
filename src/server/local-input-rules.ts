/**
 * The local service's own rules for `POST /decisions`, applied after the
 * hosted API's wire schema. They are stricter than the hosted API (which
 * publishes few limits), never looser, so a request that passes here also
 * passes there. They exist for this service's reviewer page: a bounded card,
 * options a form can post back unchanged, and amounts `Intl` can format.
 */
import type { z } from 'zod/v4'
import { createDecisionInputSchema } from '../pushary/decision-schemas.js'
import { PUSHARY_LIMITS } from '../pushary/limits.js'
import { optionSchema, refineOptions } from '../pushary/question.js'

const L = PUSHARY_LIMITS
type Parsed = z.output<typeof createDecisionInputSchema>

// Top-level text fields and the most UTF-16 code units the page shows of each.
const TEXT_MAX: ReadonlyArray<[keyof Parsed, number]> = [
  ['placeholder', L.placeholderMax],
  ['agentName', L.agentNameMax],
  ['toolName', 200],
  ['toolTarget', 500],
  ['idempotencyKey', 200],
  ['externalId', L.externalIdMax],
  ['email', 320],
]

const MAX_EXPIRES_IN_SECONDS = 2_592_000

function tooLong(context: z.RefinementCtx, path: PropertyKey[], max: number): void {
  context.addIssue({ code: 'custom', path, message: `must be at most ${max} characters` })
}

function refineLocal(value: Parsed, context: z.RefinementCtx): void {
  const question = value.question.trim()
  if (question.length > L.questionMax) tooLong(context, ['question'], L.questionMax)
  for (const [field, max] of TEXT_MAX) {
    const text = value[field]
    if (typeof text === 'string' && text.length > max) tooLong(context, [field], max)
  }
  if (value.agentName !== undefined && value.agentName.trim() === '') {
    context.addIssue({ code: 'custom', path: ['agentName'], message: 'cannot be blank' })
  }
  if (value.options !== undefined) {
    if (value.options.length > L.optionsMax) {
      context.addIssue({ code: 'custom', path: ['options'], message: `at most ${L.optionsMax} options` })
    }
    value.options.forEach((option, index) => {
      const parsed = optionSchema.safeParse(option)
      const message = parsed.error?.issues[0]?.message
      if (message !== undefined) context.addIssue({ code: 'custom', path: ['options', index], message })
    })
  }
  refineOptions(value, context)
  if (value.expiresInSeconds !== undefined && value.expiresInSeconds > MAX_EXPIRES_IN_SECONDS) {
    context.addIssue({
      code: 'custom',
      path: ['expiresInSeconds'],
      message: `must be at most ${MAX_EXPIRES_IN_SECONDS} seconds (30 days)`,
    })
  }
  refinePresentation(value, context)
}

function refinePresentation(value: Parsed, context: z.RefinementCtx): void {
  const presentation = value.presentation
  if (presentation === undefined) return
  if (presentation.label.length > 120) tooLong(context, ['presentation', 'label'], 120)
  if (presentation.effect.length > 500) tooLong(context, ['presentation', 'effect'], 500)
  if (presentation.risk !== undefined && presentation.risk.length > 200) {
    tooLong(context, ['presentation', 'risk'], 200)
  }
  presentation.changes?.forEach((change, index) => {
    const at = ['presentation', 'changes', index]
    if (change.label.length > 120) tooLong(context, [...at, 'label'], 120)
    // The page formats amounts with Intl, which needs an ISO 4217 code.
    if (change.format.kind === 'currency' && !/^[A-Za-z]{3}$/.test(change.format.currency)) {
      context.addIssue({
        code: 'custom',
        path: [...at, 'format', 'currency'],
        message: 'must be a 3-letter currency code',
      })
    }
    if (change.format.kind === 'quantity' && (change.format.unit?.length ?? 0) > 40) {
      tooLong(context, [...at, 'format', 'unit'], 40)
    }
  })
}

/**
 * `POST /decisions` as the local service accepts it: the hosted wire schema,
 * then this service's page rules.
 *
 * @example
 * const parsed = localCreateDecisionSchema.safeParse(body)
 */
export const localCreateDecisionSchema = createDecisionInputSchema.superRefine(refineLocal)
