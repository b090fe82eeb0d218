/**
 * What the decision API answers, read leniently as the wire contract asks:
 * unknown fields ignored, `null` accepted in optional fields, unknown status
 * or type values kept as `'unknown'` with the raw value, never a throw after
 * the service has acted. Only what a caller cannot do without (a decision's
 * id) is required.
 */
import { z } from 'zod/v4'
import {
  type DecisionStatus,
  type DecisionType,
  decisionStatusSchema,
  decisionTypeSchema,
} from './question.js'

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
export const text = z
  .string()
  .nullish()
  .catch(null)
  .transform((value) => value ?? null)
export const optionalText = z.string().optional().catch(undefined)
const optionalNumber = z.number().optional().catch(undefined)
const optionalBoolean = z.boolean().optional().catch(undefined)
export const rawEnum = z.string().nullish().catch(null)

// A question is required on the wire; a missing one reads as '' (which no
// binding check accepts).
const questionText = z
  .string()
  .nullish()
  .catch(null)
  .transform((value) => value ?? '')

// `answered` defaults to what the status says when the sender left it out.
function withAnswered<T extends { status: ReadDecisionStatus }>(
  read: T,
  answered: boolean | undefined,
): T & { answered: boolean } {
  return { ...read, answered: answered ?? read.status === 'answered' }
}

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
    /** The person's answer as given (`'yes'`, an option, typed text); `null` until answered. */
    value: text,
    type: rawEnum,
    question: questionText,
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
  .transform(({ status, type, answered, ...rest }) =>
    withAnswered({ ...rest, ...readStatus(status), ...readType(type) }, answered),
  )
/**
 * A decision as the service holds it (`client.decisions.get`). The person's
 * answer is `value`: the exact text they gave (for a confirm the word they
 * tapped, e.g. `'yes'` or `'no'`; for a select the chosen option; for an
 * input what they typed), `null` until `status` is `'answered'`. A decision
 * has no `answer` field: `answer` is what the same text is called where it
 * is sent rather than read (`client.decisions.answer(id, answer)`, a
 * callback body's `answer`, which equals its `value`, and the approval
 * step's resume data). Whether it approves is not a field either: ask
 * `isApproved(decision)`, true only for an answered confirm whose value is
 * affirmative.
 *
 * @example
 * const decision: Decision = await client.decisions.get(decisionId)
 * if (decision.status === 'answered') console.log(decision.value, isApproved(decision))
 */
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
  .transform(({ status, type, answered, ...rest }) =>
    withAnswered({ ...rest, ...readStatus(status), ...(type === null ? {} : readType(type)) }, answered),
  )
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
  .transform(({ status, answered, ...rest }) => withAnswered({ ...rest, ...readStatus(status) }, answered))
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
    question: questionText,
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
  .transform(({ status, type, answered, ...rest }) =>
    withAnswered(
      { ...rest, ...readStatus(status), ...(type === null ? { type: null } : readType(type)) },
      answered,
    ),
  )
/** @example const answered = (d: ListedDecision) => d.status === 'answered' */
export type ListedDecision = z.output<typeof listedDecisionSchema>

/** A list read leniently: a non-array is empty; a refused item is skipped, not fatal. @example lenientItems(itemSchema) */
export function lenientItems<T extends z.ZodType>(item: T) {
  return z
    .array(z.unknown())
    .catch([])
    .transform((items) =>
      items.flatMap((value) => {
        const parsed = item.safeParse(value)
        return parsed.success ? [parsed.data as z.output<T>] : []
      }),
    )
}

/**
 * Response of `GET /decisions` (one page). An item that is not an object is
 * skipped rather than failing the page.
 *
 * @example
 * const page = decisionListSchema.parse(body)
 */
export const decisionListSchema = z.object({
  decisions: lenientItems(listedDecisionSchema),
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
const VERDICTS: ReadonlySet<string> = new Set(['allow', 'deny', 'requires_human'])

/**
 * Response of `GET /reachability`: a read-only preflight that opens nothing.
 * `deliverability` is `push`, `fallback` (the customer is named but has no
 * device: create with `approvalUrl: true` and deliver the link yourself) or
 * `unreachable`; any other value reads as `'unknown'` with the wire value in
 * `rawDeliverability`, which a caller treats as not deliverable.
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
      : { ...rest, deliverability: 'unknown' as const, rawDeliverability: String(deliverability) },
  )
/** @example const canPush = (r: DecisionReach) => r.deliverability === 'push' */
export type DecisionReach = z.output<typeof decisionReachSchema>

/**
 * Policy verdict from `POST /authorize`, the SDK's verdict call. Only
 * `allow` lets the action run without a person; `requires_human` means ask.
 * Any other verdict reads as `'unknown'` (wire value in `rawVerdict`), which
 * is never `allow`.
 *
 * @example
 * const evaluation = authorizationEvaluationSchema.parse(body)
 */
export const authorizationEvaluationSchema = z
  .object({
    verdict: rawEnum,
    policy: text,
    reason: z.string().catch(''),
    authorizationId: text,
  })
  .transform(({ verdict, ...rest }) =>
    typeof verdict === 'string' && VERDICTS.has(verdict)
      ? { ...rest, verdict: verdict as 'allow' | 'deny' | 'requires_human' }
      : { ...rest, verdict: 'unknown' as const, rawVerdict: String(verdict) },
  )
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
