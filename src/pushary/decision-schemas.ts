import { z } from 'zod/v4'
import { refineDisplayedText } from './display-text.js'
import { externalIdSchema, idSchema } from './identity.js'
import { PUSHARY_LIMITS } from './limits.js'
import {
  decisionStatusSchema,
  decisionTypeSchema,
  optionsSchema,
  questionTextSchema,
  refineOptions,
} from './question.js'
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
  z.object({ kind: z.literal('currency'), currency: z.string().regex(/^[A-Za-z]{3}$/) }),
  z.object({ kind: z.literal('quantity'), unit: storableString().min(1).max(40).optional() }),
  z.object({ kind: z.literal('timestamp') }),
  z.object({ kind: z.literal('boolean') }),
])

/**
 * A human-readable summary of the action shown to the reviewer.
 *
 * @example
 * decisionPresentationSchema.parse({ label: 'Refund', effect: 'Sends money back',
 *   changes: [{ parameter: 'amountMinor', label: 'Amount', format: { kind: 'currency', currency: 'EUR' } }] })
 */
export const decisionPresentationSchema = z.object({
  label: storableString().trim().min(1).max(120),
  effect: storableString().trim().min(1).max(500),
  changes: z
    .array(
      z.object({
        parameter: storableString().min(1).max(L.parameterKeyMax),
        label: storableString().trim().min(1).max(120),
        format: presentationFormatSchema,
      }),
    )
    .max(L.parametersMaxKeys)
    .optional(),
  risk: z.enum(['low', 'medium', 'high']).optional(),
})
/** @example const p: DecisionPresentation = { label: 'Refund', effect: 'Money leaves the account' } */
export type DecisionPresentation = z.infer<typeof decisionPresentationSchema>

const decisionInputShape = {
  question: questionTextSchema,
  type: decisionTypeSchema.optional(),
  options: optionsSchema.optional(),
  placeholder: storableString().max(L.placeholderMax).optional(),
  context: storableString().max(L.contextMax).optional(),
  externalId: externalIdSchema.optional(),
  email: storableString().pipe(z.email()).optional(),
  callbackUrl: httpUrlSchema.optional(),
  agentName: storableString().trim().min(1).max(L.agentNameMax).optional(),
  expiresInSeconds: z.number().int().min(1).max(2_592_000).optional(),
  poweredBy: z.boolean().optional(),
  approvalUrl: z.boolean().optional(),
  requireReachable: z.boolean().optional(),
  wait: z.boolean().optional(),
  timeoutSeconds: z.number().int().min(0).max(L.longPollMaxSeconds).optional(),
  idempotencyKey: idSchema.max(200).optional(),
  sandboxOutcome: z.enum(['approve', 'deny', 'no_answer']).optional(),
  toolName: storableString().trim().min(1).max(200).optional(),
  toolTarget: storableString().max(500).optional(),
  actor: storableString().max(L.actorMax).optional(),
  environment: storableString().max(L.environmentMax).optional(),
  parameters: decisionParametersSchema.optional(),
  presentation: decisionPresentationSchema.optional(),
}

/**
 * Body of `POST /decisions`, with every API limit. The local service uses the
 * same schema, so a 400 there names the same field the client would.
 *
 * @example
 * createDecisionInputSchema.parse({ question: 'Refund EUR 48?', externalId: 'customer_1' })
 */
export const createDecisionInputSchema = z.object(decisionInputShape).superRefine((value, context) => {
  refineOptions(value, context)
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

const nullableString = z
  .string()
  .nullish()
  .transform((value) => value ?? null)

/**
 * A decision as `GET /decisions/:id` returns it. Missing nullable fields read
 * as `null`; a missing `type` reads as `'confirm'`, the strictest reading.
 *
 * @example
 * const decision = decisionSchema.parse(await response.json())
 */
export const decisionSchema = z.object({
  decisionId: z.string().min(1),
  status: decisionStatusSchema,
  answered: z.boolean(),
  value: nullableString,
  type: decisionTypeSchema.default('confirm'),
  question: z.string(),
  options: z
    .array(z.string())
    .nullish()
    .transform((value) => value ?? null),
  externalId: nullableString,
  context: nullableString,
  createdAt: z.string(),
  answeredAt: nullableString,
  expiresAt: nullableString,
  toolName: z.string().nullish(),
  toolTarget: z.string().nullish(),
  agentName: z.string().nullish(),
  placeholder: z.string().nullish(),
  presentation: decisionPresentationSchema.nullish(),
  parameters: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).nullish(),
  deliveries: z.array(z.record(z.string(), z.unknown())).optional(),
  autoResolved: z.boolean().optional(),
  decisionOrigin: z.string().nullish(),
})
/** @example const pending = (d: Decision) => d.status === 'pending' */
export type Decision = z.output<typeof decisionSchema>

/**
 * Response of `POST /decisions`. `idempotent` is true when an existing
 * decision was returned for a repeated key. Reachability fields appear only
 * for a decision addressed to an `externalId`.
 *
 * @example
 * const created = decisionResultSchema.parse(await response.json())
 */
export const decisionResultSchema = z.object({
  decisionId: z.string().min(1),
  status: decisionStatusSchema,
  answered: z.boolean(),
  value: z.string().nullish(),
  type: decisionTypeSchema.optional(),
  question: z.string().optional(),
  pollUrl: z.string().optional(),
  decisionPageUrl: z.string().optional(),
  approvalUrl: z.string().optional(),
  expiresInSeconds: z.number().nullish(),
  idempotent: z.boolean().optional(),
  hint: z.string().nullish(),
  reachable: z.boolean().optional(),
  reachableChannels: z.array(z.string()).optional(),
  deviceCount: z.number().optional(),
})
/** @example const id = (r: DecisionResult) => r.decisionId */
export type DecisionResult = z.output<typeof decisionResultSchema>

/**
 * Result of a blocking ask. `approved` is fail-closed: only an answered
 * decision with an affirmative reading is approval.
 *
 * @example
 * const result: AskResult = await client.decisions.ask({ question: 'Ship?', externalId: 'u1' })
 * if (!result.approved) return
 */
export interface AskResult {
  decisionId: string
  status: z.infer<typeof decisionStatusSchema>
  answered: boolean
  value: string | null
  type: z.infer<typeof decisionTypeSchema>
  approved: boolean
  reachable?: boolean
  reachableChannels?: string[]
  deviceCount?: number
}

/**
 * Response of `POST /decisions/:id` (relaying an answer).
 *
 * @example
 * const relayed = answerResultSchema.parse(body)
 */
export const answerResultSchema = z.object({
  decisionId: z.string().min(1),
  status: decisionStatusSchema,
  answered: z.boolean(),
  value: nullableString,
})
/** @example const ok = (r: AnswerResult) => r.answered */
export type AnswerResult = z.output<typeof answerResultSchema>

/**
 * Response of `DELETE /decisions/:id`.
 *
 * @example
 * const cancelled = cancelResultSchema.parse(body)
 */
export const cancelResultSchema = z.object({
  decisionId: z.string().min(1),
  cancelled: z.boolean(),
  status: decisionStatusSchema,
})
/** @example const done = (r: CancelResult) => r.cancelled */
export type CancelResult = z.output<typeof cancelResultSchema>

/**
 * Response of `GET /decisions` (one page).
 *
 * @example
 * const page = decisionListSchema.parse(body)
 */
export const decisionListSchema = z.object({
  decisions: z.array(decisionSchema),
  nextCursor: nullableString,
})
/** @example const next = (p: DecisionList) => p.nextCursor */
export type DecisionList = z.output<typeof decisionListSchema>

/**
 * Response of `POST /enroll`. The universal link is single use and short
 * lived: show it, cache the enrolment, never the link.
 *
 * @example
 * const enrolment = enrollResultSchema.parse(body)
 */
export const enrollResultSchema = z.object({
  externalId: z.string(),
  token: z.string(),
  deepLink: z.string(),
  universalLink: z.string(),
  expiresInSeconds: z.number(),
})
/** @example const link = (r: EnrollResult) => r.universalLink */
export type EnrollResult = z.output<typeof enrollResultSchema>

/**
 * Response of `GET /reachability`: a read-only preflight that opens nothing.
 *
 * @example
 * const reach = decisionReachSchema.parse(body)
 */
export const decisionReachSchema = z.object({
  externalId: z.string(),
  deliverability: z.enum(['push', 'fallback', 'unreachable']),
  reachable: z.boolean(),
  reachableChannels: z.array(z.string()).default([]),
  deviceCount: z.number().default(0),
  webEndpoints: z.number().optional(),
  hint: z.string().nullish(),
})
/** @example const canPush = (r: DecisionReach) => r.deliverability === 'push' */
export type DecisionReach = z.output<typeof decisionReachSchema>

/**
 * Body of `POST /authorize`.
 *
 * @example
 * authorizeInputSchema.parse({ toolName: 'refund.create', parameters: { amountMinor: 4800 } })
 */
export const authorizeInputSchema = z.object({
  toolName: storableString().trim().min(1).max(200),
  toolTarget: decisionInputShape.toolTarget,
  actor: decisionInputShape.actor,
  environment: decisionInputShape.environment,
  parameters: decisionInputShape.parameters,
  externalId: decisionInputShape.externalId,
  question: questionTextSchema.optional(),
  agentName: decisionInputShape.agentName,
})
/** @example const input: AuthorizeInput = { toolName: 'refund.create' } */
export type AuthorizeInput = z.input<typeof authorizeInputSchema>

/**
 * Policy verdict from `POST /authorize`. Only `allow` lets the action run
 * without a person; `requires_human` means ask.
 *
 * @example
 * const evaluation = authorizationEvaluationSchema.parse(body)
 */
export const authorizationEvaluationSchema = z.object({
  verdict: z.enum(['allow', 'deny', 'requires_human']),
  policy: nullableString,
  reason: z.string(),
  authorizationId: nullableString,
})
/** @example const allowed = (e: AuthorizationEvaluation) => e.verdict === 'allow' */
export type AuthorizationEvaluation = z.output<typeof authorizationEvaluationSchema>

/**
 * Response of `GET` and `POST /webhook-secret`.
 *
 * @example
 * const { webhookSecret } = webhookSecretSchema.parse(body)
 */
export const webhookSecretSchema = z.object({ webhookSecret: z.string().min(1) })
/** @example const s = (r: WebhookSecret) => r.webhookSecret */
export type WebhookSecret = z.output<typeof webhookSecretSchema>

/**
 * Events a decision service posts to `callbackUrl`, one per terminal transition.
 *
 * @example
 * decisionEventSchema.parse('decision.answered')
 */
export const decisionEventSchema = z.enum(['decision.answered', 'decision.expired', 'decision.cancelled'])

/**
 * A parsed callback body. It is a hint, never authority: re-read the decision
 * from the service before acting on it.
 *
 * @example
 * const callback: DecisionCallback | null = parseDecisionCallback(rawBody)
 */
export interface DecisionCallback {
  event: z.infer<typeof decisionEventSchema>
  correlationId: string
  decisionId: string
  status: 'answered' | 'expired' | 'cancelled'
  answer: string | null
  value: string | null
  answeredAt: string | null
  context?: string
  /** The question's type when the sender includes it; `approved` needs it to be `'confirm'`. */
  type?: z.infer<typeof decisionTypeSchema>
}
