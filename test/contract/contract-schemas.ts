/**
 * The hosted Pushary wire, as zod schemas written from
 * `/work/shared/reference/pushary-wire-contract.md` (section and endpoint
 * numbers below are that document's), never from the client's parsers in
 * `src/pushary/decision-schemas.ts`: the fixtures, the hosted fake and the
 * local service are checked against these, so the client and the service
 * cannot drift together.
 *
 * Required vs optional follows the contract's tables exactly; `nullable`
 * only where a table says `| null`. Objects are not strict: a response may
 * carry fields the contract does not name (the local service's extras);
 * `strictContract` checks a body has nothing else, for the hosted fake.
 */
import { z } from 'zod/v4'

const isoTimestamp = z.string().min(1)

/** §3.1: a closed set in both SDKs. */
export const contractStatusSchema = z.enum(['pending', 'answered', 'expired', 'cancelled'])
/** §3.1: the question types. */
export const contractTypeSchema = z.enum(['confirm', 'select', 'input'])

/** §1.1: `error` is a sentence; `code`, `hint` optional; `message` on older paths. */
export const contractErrorBodySchema = z
  .object({
    error: z.string().min(1).optional(),
    message: z.string().min(1).optional(),
    code: z.string().min(1).optional(),
    hint: z.string().optional(),
  })
  .refine((body) => body.error !== undefined || body.message !== undefined, {
    message: 'an error body carries `error` (or `message` on older paths)',
  })

/** E1 response (`DecisionResult`). */
export const contractDecisionResultSchema = z.object({
  decisionId: z.string().min(1),
  status: contractStatusSchema,
  answered: z.boolean(),
  value: z.string().nullable().optional(),
  type: z.string().optional(),
  question: z.string().optional(),
  pollUrl: z.string().optional(),
  decisionPageUrl: z.string().optional(),
  expiresInSeconds: z.number().optional(),
  idempotent: z.boolean().optional(),
  hint: z.string().optional(),
  reachable: z.boolean().optional(),
  reachableChannels: z.number().optional(),
  deviceCount: z.number().optional(),
  approvalUrl: z.unknown().optional(),
})

/** E2 response (`Decision`): every declared field is required. */
export const contractDecisionSchema = z.object({
  decisionId: z.string().min(1),
  status: contractStatusSchema,
  answered: z.boolean(),
  value: z.string().nullable(),
  type: contractTypeSchema,
  question: z.string(),
  options: z.array(z.string()).nullable(),
  externalId: z.string().nullable(),
  context: z.string().nullable(),
  createdAt: isoTimestamp,
  answeredAt: isoTimestamp.nullable(),
  expiresAt: isoTimestamp.nullable(),
})

/** E3 response. */
export const contractAnswerResultSchema = z.object({
  decisionId: z.string().min(1),
  status: z.string(),
  answered: z.boolean(),
  value: z.string().nullable().optional(),
})

/** E4 response: `status` is a free string. */
export const contractCancelResultSchema = z.object({
  decisionId: z.string().min(1),
  cancelled: z.boolean(),
  status: z.string(),
})

/** E5 item (`ListedDecision`): id and type may be null; no options/expiresAt. */
export const contractListedDecisionSchema = z.object({
  decisionId: z.string().nullable(),
  status: z.string(),
  answered: z.boolean(),
  value: z.string().nullable(),
  type: z.string().nullable(),
  question: z.string(),
  externalId: z.string().nullable(),
  context: z.string().nullable(),
  createdAt: isoTimestamp,
  answeredAt: isoTimestamp.nullable(),
  toolName: z.string().nullable(),
  toolTarget: z.string().nullable(),
  autoResolved: z.boolean(),
  decisionOrigin: z.string().nullable(),
})

/** E5 response. */
export const contractDecisionListSchema = z.object({
  decisions: z.array(contractListedDecisionSchema),
  nextCursor: z.string().nullable(),
})

/** E6 response (TS SDK key; §7). */
export const contractWebhookSecretSchema = z.object({ webhookSecret: z.string().min(1) })

/** E7 response. */
export const contractEnrollSchema = z.object({
  externalId: z.string(),
  token: z.string().min(1),
  deepLink: z.string().startsWith('pushary://enroll?token='),
  universalLink: z.string().regex(/^https?:\/\/[^/]+\/e\/[^/]+$/),
  expiresInSeconds: z.number(),
})

/** E8 response: `reachableChannels` a number, `hint` a string. */
export const contractReachabilitySchema = z.object({
  externalId: z.string(),
  deliverability: z.enum(['push', 'fallback', 'unreachable']),
  reachable: z.boolean(),
  reachableChannels: z.number(),
  deviceCount: z.number(),
  webEndpoints: z.number(),
  hint: z.string(),
})

/** E9 response. */
export const contractAuthorizeSchema = z.object({
  verdict: z.enum(['allow', 'deny', 'requires_human']),
  policy: z.string().nullable(),
  reason: z.string(),
  authorizationId: z.string().nullable(),
})

/**
 * §5 callback body: exactly these keys (no `status`, `type`, `event` or
 * `decisionId`), so this one is strict.
 */
export const contractCallbackSchema = z.strictObject({
  correlationId: z.string().min(1),
  answer: z.string(),
  value: z.string(),
  answeredAt: isoTimestamp,
  context: z.string().optional(),
})

/** The SDK's confirm rule (§4), the oracle the tests compare against. */
export const SDK_AFFIRMATIVE = ['yes', 'y', 'approve', 'approved', 'ok', 'okay', 'confirm', 'accept', 'true']

/** §4: approved iff answered, confirm (or type missing) and an affirmative value. */
export function sdkApproves(decision: {
  status: string
  type?: string | null
  value: string | null
}): boolean {
  if (decision.status !== 'answered') return false
  if (decision.type !== undefined && decision.type !== null && decision.type !== 'confirm') return false
  return SDK_AFFIRMATIVE.includes((decision.value ?? '').trim().toLowerCase())
}

/** The same object schema refusing any key the contract does not name. */
export function strictContract<T extends z.ZodObject>(schema: T) {
  return schema.strict()
}

/** §6.1 `authority` of a permit: a policy or a person. */
export const contractAuthoritySchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('policy'),
    rulePattern: z.string().optional(),
    authorizationRuleId: z.string().optional(),
    policyId: z.string().optional(),
  }),
  z.object({
    kind: z.literal('human'),
    answeredAt: isoTimestamp,
    answerSource: z.string().optional(),
    approverUserId: z.string().optional(),
    approverExternalId: z.string().optional(),
  }),
])

/** E10 success. */
export const contractPermitSchema = z.object({
  permitId: z.string().min(1),
  authority: contractAuthoritySchema,
  expiresAt: isoTimestamp,
})

/** §6.1 execution states. */
export const contractExecutionStateSchema = z.enum(['running', 'succeeded', 'failed'])

/** E10 refusal: a non-2xx error body (§1.1) naming the refusal. */
export const contractRefusalSchema = z.intersection(
  contractErrorBodySchema,
  z.object({
    refusal: z.enum(['not_authorized', 'action_mismatch', 'expired', 'already_consumed']),
    executionState: contractExecutionStateSchema.optional(),
  }),
)

/** E11 response. */
export const contractReceiptSchema = z.object({ executionState: contractExecutionStateSchema })

/** E12 `POST /keys` response. */
export const contractIssuedKeySchema = z.object({
  apiKey: z.string().min(1),
  keyPrefix: z.string().min(1),
  scope: z.literal('bound'),
  boundExternalId: z.string(),
  expiresAt: isoTimestamp.nullable(),
})

/** E12 `GET /keys` response. */
export const contractKeyListSchema = z.object({
  keys: z.array(
    z.object({
      keyPrefix: z.string().min(1),
      name: z.string(),
      boundExternalId: z.string().nullable(),
      isActive: z.boolean(),
      lastUsedAt: isoTimestamp.nullable(),
      expiresAt: isoTimestamp.nullable(),
      createdAt: isoTimestamp,
    }),
  ),
})

/** E12 `DELETE /keys/{keyPrefix}` response. */
export const contractRevokedKeySchema = z.object({ keyPrefix: z.string(), revoked: z.boolean() })
