import { z } from 'zod/v4'
import { idSchema } from './identity.js'
import { PUSHARY_LIMITS } from './limits.js'
import {
  type DecisionStatus,
  type DecisionType,
  decisionStatusSchema,
  decisionTypeSchema,
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
  externalId: nonBlankText().optional(),
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
 * A decision status as read from the wire: one of the four the API
 * documents, or `'unknown'` for any other value (kept in `rawStatus`), which
 * is never approval and never waited on.
 *
 * @example
 * const settled = (status: ReadDecisionStatus) => status !== 'pending'
 */
export type ReadDecisionStatus = DecisionStatus | 'unknown'
/**
 * A question type as read from the wire; `'unknown'` for a value this
 * package does not know (kept in `rawType`), never approval.
 *
 * @example
 * const isConfirm = (type: ReadDecisionType) => type === 'confirm'
 */
export type ReadDecisionType = DecisionType | 'unknown'

const KNOWN_STATUSES: ReadonlySet<string> = new Set(decisionStatusSchema.options)
const KNOWN_TYPES: ReadonlySet<string> = new Set(decisionTypeSchema.options)

// Lenient readers: a response field that is absent, null or of an unexpected
// shape reads as "not given" instead of failing the whole response.
const text = z
  .string()
  .nullish()
  .catch(null)
  .transform((value) => value ?? null)
const optionalText = z.string().optional().catch(undefined)
const optionalNumber = z.number().optional().catch(undefined)
const optionalBoolean = z.boolean().optional().catch(undefined)
const rawEnum = z.string().nullish().catch(null)

function readStatus(raw: string | null | undefined): { status: ReadDecisionStatus; rawStatus?: string } {
  if (typeof raw === 'string' && KNOWN_STATUSES.has(raw)) return { status: raw as DecisionStatus }
  return { status: 'unknown', rawStatus: String(raw) }
}

function readType(raw: string | null | undefined): { type: ReadDecisionType; rawType?: string } {
  // A missing type is a confirm (the hosted API's reading); an unknown one is kept.
  if (raw === null || raw === undefined) return { type: 'confirm' }
  if (KNOWN_TYPES.has(raw)) return { type: raw as DecisionType }
  return { type: 'unknown', rawType: raw }
}

// A reachability count. The hosted API sends a number; an older sender's
// list of channel names counts as its length.
const channelCount = z
  .union([z.number(), z.array(z.unknown())])
  .optional()
  .catch(undefined)
  .transform((value) => (Array.isArray(value) ? value.length : value))

/**
 * A decision as `GET /decisions/:id` returns it. Only `decisionId` is
 * required; missing or null fields read as `null`, a missing `type` as
 * `'confirm'`, an unknown status or type as `'unknown'` with the wire value
 * in `rawStatus` / `rawType`. Fields the hosted API does not declare (the
 * local service's extras) are read when well formed and ignored otherwise.
 *
 * @example
 * const decision = decisionSchema.parse(await response.json())
 */
export const decisionSchema = z
  .object({
    decisionId: z.string().min(1),
    status: rawEnum,
    answered: optionalBoolean,
    value: text,
    type: rawEnum,
    question: z
      .string()
      .nullish()
      .catch(null)
      .transform((value) => value ?? ''),
    options: z
      .array(z.string())
      .nullish()
      .catch(null)
      .transform((value) => value ?? null),
    externalId: text,
    context: text,
    createdAt: text,
    answeredAt: text,
    expiresAt: text,
    toolName: text,
    toolTarget: text,
    agentName: text,
    placeholder: text,
    presentation: z.record(z.string(), z.unknown()).nullish().catch(null),
    parameters: z
      .record(z.string(), z.union([z.string(), z.number(), z.boolean()]))
      .nullish()
      .catch(null),
    deliveries: z.array(z.record(z.string(), z.unknown())).optional().catch(undefined),
    autoResolved: optionalBoolean,
    decisionOrigin: text,
  })
  .transform(({ status, type, answered, ...rest }) => {
    const read = { ...rest, ...readStatus(status), ...readType(type) }
    return { ...read, answered: answered ?? read.status === 'answered' }
  })
/** @example const pending = (d: Decision) => d.status === 'pending' */
export type Decision = z.output<typeof decisionSchema>

/**
 * Response of `POST /decisions`. `decisionId` is read first and is the only
 * required field: once the service has created a decision, nothing else in
 * the response can make the caller lose it (and page the person again).
 * `idempotent` is true when an existing decision was returned for a
 * repeated key. `reachableChannels` is a count, as on the hosted API.
 *
 * @example
 * const created = decisionResultSchema.parse(await response.json())
 */
export const decisionResultSchema = z
  .object({
    decisionId: z.string().min(1),
    status: rawEnum,
    answered: optionalBoolean,
    value: text,
    type: rawEnum,
    question: optionalText,
    pollUrl: optionalText,
    decisionPageUrl: optionalText,
    approvalUrl: optionalText,
    expiresInSeconds: optionalNumber,
    idempotent: optionalBoolean,
    hint: optionalText,
    reachable: optionalBoolean,
    reachableChannels: channelCount,
    deviceCount: optionalNumber,
  })
  .transform(({ status, type, answered, ...rest }) => {
    const read = { ...rest, ...readStatus(status), ...(type === null ? {} : readType(type)) }
    return { ...read, answered: answered ?? read.status === 'answered' }
  })
/** @example const id = (r: DecisionResult) => r.decisionId */
export type DecisionResult = z.output<typeof decisionResultSchema>

/**
 * Result of a blocking ask. `approved` is fail-closed: only an answered
 * confirm with an affirmative answer is approval. `status: 'unknown'` means
 * the service reported a status this package does not know (`rawStatus`).
 *
 * @example
 * const result: AskResult = await client.decisions.ask({ question: 'Ship?', externalId: 'u1' })
 * if (!result.approved) return
 */
export interface AskResult {
  decisionId: string
  status: ReadDecisionStatus
  /** The wire status when `status` is `'unknown'`. */
  rawStatus?: string
  answered: boolean
  value: string | null
  type: ReadDecisionType
  approved: boolean
  /** True when the service returned an existing decision for the idempotency key. */
  idempotent?: boolean
  reachable?: boolean
  /** How many channels can reach the person (a count, as on the hosted API). */
  reachableChannels?: number
  deviceCount?: number
  hint?: string
}

/**
 * Response of `POST /decisions/:id` (relaying an answer).
 *
 * @example
 * const relayed = answerResultSchema.parse(body)
 */
export const answerResultSchema = z
  .object({
    decisionId: z.string().min(1),
    status: rawEnum,
    answered: optionalBoolean,
    value: text,
  })
  .transform(({ status, answered, ...rest }) => {
    const read = { ...rest, ...readStatus(status) }
    return { ...read, answered: answered ?? read.status === 'answered' }
  })
/** @example const ok = (r: AnswerResult) => r.answered */
export type AnswerResult = z.output<typeof answerResultSchema>

/**
 * Response of `DELETE /decisions/:id`. The hosted API types `status` as free
 * text; an unknown value reads `'unknown'` with `rawStatus`.
 *
 * @example
 * const cancelled = cancelResultSchema.parse(body)
 */
export const cancelResultSchema = z
  .object({
    decisionId: z.string().min(1),
    cancelled: z.boolean().catch(false),
    status: rawEnum,
  })
  .transform(({ status, ...rest }) => ({ ...rest, ...readStatus(status) }))
/** @example const done = (r: CancelResult) => r.cancelled */
export type CancelResult = z.output<typeof cancelResultSchema>

/**
 * One item of `GET /decisions`. The hosted API may send a null `decisionId`
 * or `type`, and lists no `options` or `expiresAt` (the local service adds
 * them as extras).
 *
 * @example
 * const ids = page.decisions.flatMap((item: ListedDecision) => (item.decisionId ? [item.decisionId] : []))
 */
export const listedDecisionSchema = z
  .object({
    decisionId: text,
    status: rawEnum,
    answered: optionalBoolean,
    value: text,
    type: rawEnum,
    question: z
      .string()
      .nullish()
      .catch(null)
      .transform((value) => value ?? ''),
    externalId: text,
    context: text,
    createdAt: text,
    answeredAt: text,
    toolName: text,
    toolTarget: text,
    autoResolved: optionalBoolean,
    decisionOrigin: text,
    options: z.array(z.string()).optional().catch(undefined),
    expiresAt: text,
  })
  .transform(({ status, type, answered, ...rest }) => {
    const read = { ...rest, ...readStatus(status), ...(type === null ? { type: null } : readType(type)) }
    return { ...read, answered: answered ?? read.status === 'answered' }
  })
/** @example const answered = (d: ListedDecision) => d.status === 'answered' */
export type ListedDecision = z.output<typeof listedDecisionSchema>

/**
 * Response of `GET /decisions` (one page). An item that is not an object is
 * skipped rather than failing the page.
 *
 * @example
 * const page = decisionListSchema.parse(body)
 */
export const decisionListSchema = z.object({
  decisions: z
    .array(z.unknown())
    .catch([])
    .transform((items) =>
      items.flatMap((item) => {
        const parsed = listedDecisionSchema.safeParse(item)
        return parsed.success ? [parsed.data] : []
      }),
    ),
  nextCursor: text,
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
  expiresInSeconds: z.number().nullish().catch(null),
})
/** @example const link = (r: EnrollResult) => r.universalLink */
export type EnrollResult = z.output<typeof enrollResultSchema>

const DELIVERABILITY: ReadonlySet<string> = new Set(['push', 'fallback', 'unreachable'])

/**
 * Response of `GET /reachability`: a read-only preflight that opens nothing.
 * `reachableChannels` is a count; an unknown `deliverability` reads as
 * `'unreachable'` (fail closed) with the wire value in `rawDeliverability`.
 *
 * @example
 * const reach = decisionReachSchema.parse(body)
 */
export const decisionReachSchema = z
  .object({
    externalId: z.string(),
    deliverability: rawEnum,
    reachable: z.boolean().catch(false),
    reachableChannels: channelCount.transform((value) => value ?? 0),
    deviceCount: z.number().catch(0).default(0),
    webEndpoints: optionalNumber,
    hint: optionalText,
  })
  .transform(({ deliverability, ...rest }) =>
    typeof deliverability === 'string' && DELIVERABILITY.has(deliverability)
      ? { ...rest, deliverability: deliverability as 'push' | 'fallback' | 'unreachable' }
      : { ...rest, deliverability: 'unreachable' as const, rawDeliverability: String(deliverability) },
  )
/** @example const canPush = (r: DecisionReach) => r.deliverability === 'push' */
export type DecisionReach = z.output<typeof decisionReachSchema>

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

/**
 * Policy verdict from `POST /authorize`. Only `allow` lets the action run
 * without a person; `requires_human` means ask.
 *
 * @example
 * const evaluation = authorizationEvaluationSchema.parse(body)
 */
export const authorizationEvaluationSchema = z.object({
  verdict: z.enum(['allow', 'deny', 'requires_human']),
  policy: text,
  reason: z.string(),
  authorizationId: text,
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
