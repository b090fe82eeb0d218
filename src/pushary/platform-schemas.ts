/**
 * Permits (E10, E11) and bound keys (E12): what the client sends, checked
 * before any request, and what it reads back, leniently, as the wire
 * contract asks (unknown fields ignored, an unknown enum value kept as
 * `'unknown'` with the raw value, never read as success).
 */
import { z } from 'zod/v4'
import { decisionParametersSchema } from './decision-schemas.js'
import { externalIdSchema, idSchema } from './identity.js'
import { PUSHARY_LIMITS } from './limits.js'
import { storableString } from './text-rules.js'
import { lenientItems, optionalText, rawEnum, text } from './wire-responses.js'

const L = PUSHARY_LIMITS

/**
 * Body of `POST /authorizations/consume`: the authorization to spend (a
 * policy verdict's `authorizationId` or an approved decision's
 * `decisionId`) and the exact action, which must equal what was authorized.
 *
 * @example
 * consumeAuthorizationInputSchema.parse({ authorizationId: 'dec_1', toolName: 'refund.create' })
 */
export const consumeAuthorizationInputSchema = z.object({
  authorizationId: idSchema,
  toolName: idSchema,
  toolTarget: storableString().optional(),
  actor: storableString().max(L.actorMax).optional(),
  environment: storableString().max(L.environmentMax).optional(),
  externalId: externalIdSchema.optional(),
  parameters: decisionParametersSchema.optional(),
})
/** @example const input: ConsumeAuthorizationInput = { authorizationId: 'dec_1', toolName: 'refund.create' } */
export type ConsumeAuthorizationInput = z.input<typeof consumeAuthorizationInputSchema>

/**
 * Body of `POST /authorizations/{permitId}/receipt`. The service bounds and
 * redacts `summary` itself; the client only refuses text no store can keep.
 *
 * @example
 * receiptInputSchema.parse({ outcome: 'succeeded', summary: 'Refund r-1 sent' })
 */
export const receiptInputSchema = z.object({
  outcome: z.enum(['succeeded', 'failed']),
  summary: storableString().optional(),
})
/** @example const receipt: ReceiptInput = { outcome: 'failed', summary: 'card declined' } */
export type ReceiptInput = z.input<typeof receiptInputSchema>

/**
 * Body of `POST /keys`. The service clamps `expiresInSeconds` to 60 s – 365 d.
 *
 * @example
 * issueKeyInputSchema.parse({ externalId: 'customer_1', name: 'support bot' })
 */
export const issueKeyInputSchema = z.object({
  externalId: externalIdSchema,
  name: idSchema.optional(),
  expiresInSeconds: z.number().int().positive().optional(),
})
/** @example const input: IssueKeyInput = { externalId: 'customer_1', expiresInSeconds: 3600 } */
export type IssueKeyInput = z.input<typeof issueKeyInputSchema>

const REFUSALS = ['not_authorized', 'action_mismatch', 'expired', 'already_consumed'] as const
/**
 * Why the service refused to issue a permit; `'unknown'` for a value this
 * package does not know (kept in `rawRefusal`). Every refusal means: do not
 * run the action.
 *
 * @example
 * const retryable = (refusal: PermitRefusal) => refusal === 'expired'
 */
export type PermitRefusal = (typeof REFUSALS)[number] | 'unknown'

const EXECUTION_STATES = ['running', 'succeeded', 'failed'] as const
/**
 * What a permit's action did, as the service records it; `'unknown'` for a
 * value this package does not know.
 *
 * @example
 * const settled = (state: PermitExecutionState) => state === 'succeeded' || state === 'failed'
 */
export type PermitExecutionState = (typeof EXECUTION_STATES)[number] | 'unknown'

function readClosed<T extends string>(
  values: readonly T[],
  raw: string | null | undefined,
): { value: T | 'unknown'; raw?: string } {
  if (typeof raw === 'string' && (values as readonly string[]).includes(raw)) return { value: raw as T }
  return { value: 'unknown', raw: String(raw) }
}

/**
 * Who authorized a permit: a policy rule or a person. An authority of a
 * kind this package does not know reads `{ kind: 'unknown', rawKind }`.
 *
 * @example
 * const byPerson = (a: PermitAuthority) => a.kind === 'human'
 */
export type PermitAuthority =
  | {
      kind: 'policy'
      rulePattern?: string
      authorizationRuleId?: string
      policyId?: string
    }
  | {
      kind: 'human'
      answeredAt: string | null
      answerSource?: string
      approverUserId?: string
      approverExternalId?: string
    }
  | { kind: 'unknown'; rawKind: string }

const authoritySchema = z
  .object({
    kind: rawEnum,
    rulePattern: optionalText,
    authorizationRuleId: optionalText,
    policyId: optionalText,
    answeredAt: text,
    answerSource: optionalText,
    approverUserId: optionalText,
    approverExternalId: optionalText,
  })
  .catch({ kind: null, answeredAt: null })
  .transform((raw): PermitAuthority => {
    const defined = <T extends Record<string, string | undefined>>(fields: T) =>
      Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined))
    if (raw.kind === 'policy') {
      const { rulePattern, authorizationRuleId, policyId } = raw
      return { kind: 'policy', ...defined({ rulePattern, authorizationRuleId, policyId }) }
    }
    if (raw.kind === 'human') {
      const { answerSource, approverUserId, approverExternalId } = raw
      return {
        kind: 'human',
        answeredAt: raw.answeredAt,
        ...defined({ answerSource, approverUserId, approverExternalId }),
      }
    }
    return { kind: 'unknown', rawKind: String(raw.kind) }
  })

/**
 * A permit the service issued: the one right to run the action. Only
 * `permitId` is required; without it the response is not a permit.
 *
 * @example
 * const permit = permitSchema.parse(body)
 */
export const permitSchema = z
  .object({
    permitId: z.string().min(1),
    authority: authoritySchema
      .optional()
      .transform((value) => value ?? { kind: 'unknown', rawKind: 'undefined' }),
    expiresAt: text,
  })
  .transform((read) => ({ status: 'permitted' as const, ...read }))

/**
 * Reads a refusal out of an error body: `null` when the body names no
 * refusal (then the failure is not a refusal and stays an error).
 *
 * @example
 * readPermitRefusal({ refusal: 'expired', error: 'The approval expired.' })
 */
export function readPermitRefusal(body: unknown): PermitRefused | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null
  const record = body as Record<string, unknown>
  if (typeof record.refusal !== 'string') return null
  const refusal = readClosed(REFUSALS, record.refusal)
  const state =
    typeof record.executionState === 'string' ? readClosed(EXECUTION_STATES, record.executionState) : null
  const reason =
    typeof record.error === 'string'
      ? record.error
      : typeof record.message === 'string'
        ? record.message
        : `refused: ${record.refusal}`
  return {
    status: 'refused',
    refusal: refusal.value,
    ...(refusal.raw === undefined ? {} : { rawRefusal: refusal.raw }),
    ...(state === null ? {} : { executionState: state.value }),
    reason,
  }
}

/**
 * A refusal: the action must not run. `executionState` comes with
 * `already_consumed` (what the first holder's action did so far).
 *
 * @example
 * const refused: PermitRefused = { status: 'refused', refusal: 'already_consumed', executionState: 'running', reason: 'Already used.' }
 */
export interface PermitRefused {
  status: 'refused'
  refusal: PermitRefusal
  /** The wire value when `refusal` is `'unknown'`. */
  rawRefusal?: string
  executionState?: PermitExecutionState
  /** The service's sentence. */
  reason: string
}

/**
 * Result of `consumeAuthorization`: a permit, or a refusal as data (never
 * an exception). Switch on `status`.
 *
 * @example
 * const result: ConsumeAuthorizationResult = await client.consumeAuthorization(input)
 * if (result.status === 'permitted') await refund()
 */
export type ConsumeAuthorizationResult = z.output<typeof permitSchema> | PermitRefused

/**
 * Response of the receipt call. First report wins: a later receipt reads
 * back the state the first one recorded.
 *
 * @example
 * const receipt = receiptResultSchema.parse(body)
 */
export const receiptResultSchema = z.object({ executionState: rawEnum }).transform(({ executionState }) => {
  const read = readClosed(EXECUTION_STATES, executionState)
  return {
    executionState: read.value,
    ...(read.raw === undefined ? {} : { rawExecutionState: read.raw }),
  }
})
/** @example const done = (r: ReceiptResult) => r.executionState !== 'running' */
export type ReceiptResult = z.output<typeof receiptResultSchema>

/**
 * Response of `POST /keys`. `apiKey` is shown once: store it now.
 *
 * @example
 * const issued = issuedKeySchema.parse(body)
 */
export const issuedKeySchema = z.object({
  apiKey: z.string().min(1),
  keyPrefix: z.string().min(1),
  scope: z.string().catch('bound'),
  boundExternalId: text,
  expiresAt: text,
})
/** @example const secret = (k: IssuedKey) => k.apiKey */
export type IssuedKey = z.output<typeof issuedKeySchema>

const listedKeySchema = z.object({
  keyPrefix: z.string().min(1),
  name: text,
  boundExternalId: text,
  isActive: z.boolean().catch(false),
  lastUsedAt: text,
  expiresAt: text,
  createdAt: text,
})
/** @example const active = (k: ListedKey) => k.isActive */
export type ListedKey = z.output<typeof listedKeySchema>

/**
 * Response of `GET /keys`. An item without a `keyPrefix` is skipped; a
 * missing `isActive` reads as inactive.
 *
 * @example
 * const { keys } = keyListSchema.parse(body)
 */
export const keyListSchema = z.object({
  keys: lenientItems(listedKeySchema),
})
/** @example const count = (l: KeyList) => l.keys.length */
export type KeyList = z.output<typeof keyListSchema>

/**
 * Response of `DELETE /keys/{keyPrefix}`: `revoked` is false when the key
 * was unknown or already inactive.
 *
 * @example
 * const { revoked } = revokedKeySchema.parse(body)
 */
export const revokedKeySchema = z.object({
  keyPrefix: z.string(),
  revoked: z.boolean().catch(false),
})
/** @example const gone = (r: RevokedKey) => r.revoked */
export type RevokedKey = z.output<typeof revokedKeySchema>
