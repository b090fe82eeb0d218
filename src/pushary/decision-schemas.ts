import { z } from 'zod/v4'
import { refineDisplayedText } from './display-text.js'
import { customerIdSchema, idSchema } from './identity.js'
import { PUSHARY_LIMITS } from './limits.js'
import { decisionTypeSchema } from './question.js'
import { httpUrlSchema, storableString } from './text-rules.js'

const L = PUSHARY_LIMITS

/**
 * Decision parameters: scalar facts about the action (at most 32 keys, key
 * 1–64 characters, value a string of at most 200, a finite number or a
 * boolean). The service refuses a bad map as a whole, so we do too.
 *
 * @example
 * decisionParametersSchema.parse({ amountMinor: 4800, currency: 'EUR' })
 */
export const decisionParametersSchema = z
  .record(
    storableString().min(1).max(L.parameterKeyMax),
    z.union([storableString().max(L.parameterStringMax), z.number(), z.boolean()]),
  )
  .refine((value) => Object.keys(value).length <= L.parametersMaxKeys, {
    message: `parameters accept at most ${L.parametersMaxKeys} keys`,
  })
/** @example const p: DecisionParameters = { amountMinor: 4800 } */
export type DecisionParameters = z.infer<typeof decisionParametersSchema>

/**
 * How the reviewer page renders one parameter. Currency values are minor
 * units (4800 means EUR 48.00).
 *
 * @example
 * presentationFormatSchema.parse({ kind: 'currency', currency: 'EUR' })
 */
export const presentationFormatSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('text') }),
  z.object({ kind: z.literal('currency'), currency: storableString().trim().min(1) }),
  z.object({ kind: z.literal('quantity'), unit: storableString().min(1).optional() }),
  z.object({ kind: z.literal('timestamp') }),
  z.object({ kind: z.literal('boolean') }),
])

/**
 * A human-readable summary of the action shown to the reviewer. `risk` is
 * free text (why the action is worth stopping for), as on the hosted API.
 * Lengths are not limited here: the API's limits are not published, and the
 * service's own 400 names the field.
 *
 * @example
 * decisionPresentationSchema.parse({ label: 'Refund', effect: 'Sends money back', risk: 'Moves money',
 *   changes: [{ parameter: 'amountMinor', label: 'Amount', format: { kind: 'currency', currency: 'EUR' } }] })
 */
export const decisionPresentationSchema = z.object({
  label: storableString().trim().min(1),
  effect: storableString().trim().min(1),
  changes: z
    .array(
      z.object({
        parameter: storableString().min(1).max(L.parameterKeyMax),
        label: storableString().trim().min(1),
        format: presentationFormatSchema,
      }),
    )
    .max(L.parametersMaxKeys)
    .optional(),
  risk: storableString().trim().min(1).optional(),
})
/** @example const p: DecisionPresentation = { label: 'Refund', effect: 'Money leaves the account' } */
export type DecisionPresentation = z.infer<typeof decisionPresentationSchema>

const nonBlankText = () => idSchema

// The create body as the hosted API accepts it. Only the limits the contract
// verifies refuse input here (context, parameters, actor, environment, select
// needs two options); what every store must read back byte for byte (no NUL,
// no lone surrogate) is this package's own rule. Stricter rules of our own
// (question length, option rules) live in the steps' and tools' schemas.
const decisionInputShape = {
  question: nonBlankText(),
  type: decisionTypeSchema.optional(),
  options: z.array(storableString()).optional(),
  placeholder: storableString().optional(),
  context: storableString().max(L.contextMax).optional(),
  externalId: customerIdSchema.optional(),
  email: nonBlankText().optional(),
  callbackUrl: httpUrlSchema.optional(),
  agentName: storableString().optional(),
  expiresInSeconds: z.number().int().positive().optional(),
  poweredBy: z.boolean().optional(),
  approvalUrl: z.boolean().optional(),
  requireReachable: z.boolean().optional(),
  wait: z.boolean().optional(),
  timeoutSeconds: z.number().min(0).optional(),
  idempotencyKey: nonBlankText().optional(),
  sandboxOutcome: z.enum(['approve', 'deny', 'no_answer']).optional(),
  toolName: nonBlankText().optional(),
  toolTarget: storableString().optional(),
  actor: storableString().max(L.actorMax).optional(),
  environment: storableString().max(L.environmentMax).optional(),
  parameters: decisionParametersSchema.optional(),
  presentation: decisionPresentationSchema.optional(),
}

/**
 * Body of `POST /decisions` as the hosted API accepts it. The local service
 * applies this schema and then its own page rules.
 *
 * @example
 * createDecisionInputSchema.parse({ question: 'Refund EUR 48?', externalId: 'customer_1' })
 */
export const createDecisionInputSchema = z.object(decisionInputShape).superRefine((value, context) => {
  if ((value.type ?? 'confirm') === 'select' && (value.options ?? []).length < 2) {
    context.addIssue({
      code: 'custom',
      path: ['options'],
      message: 'select questions need at least two options',
    })
  }
  refineDisplayedText(value, context)
  // The service refuses a presentation naming a parameter it was not sent.
  const changes = value.presentation?.changes ?? []
  changes.forEach((change, index) => {
    if (!value.parameters || !Object.hasOwn(value.parameters, change.parameter)) {
      context.addIssue({
        code: 'custom',
        path: ['presentation', 'changes', index, 'parameter'],
        message: `presentation names parameter "${change.parameter}" that is not in parameters`,
      })
    }
  })
})
/** @example const input: CreateDecisionInput = { question: 'Deploy?', externalId: 'ops_1' } */
export type CreateDecisionInput = z.input<typeof createDecisionInputSchema>

/**
 * Body of `POST /authorize`.
 *
 * @example
 * authorizeInputSchema.parse({ toolName: 'refund.create', parameters: { amountMinor: 4800 } })
 */
export const authorizeInputSchema = z.object({
  toolName: nonBlankText(),
  toolTarget: decisionInputShape.toolTarget,
  actor: decisionInputShape.actor,
  environment: decisionInputShape.environment,
  parameters: decisionInputShape.parameters,
  externalId: decisionInputShape.externalId,
  question: decisionInputShape.question.optional(),
  agentName: decisionInputShape.agentName,
})
/** @example const input: AuthorizeInput = { toolName: 'refund.create' } */
export type AuthorizeInput = z.input<typeof authorizeInputSchema>
