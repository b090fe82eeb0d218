import { z } from 'zod/v4'
import { pusharyTraceRefSchema } from '../observability/trace-ref.js'
import { decisionParametersSchema, decisionPresentationSchema } from '../pushary/decision-schemas.js'
import { refineDisplayedText } from '../pushary/display-text.js'
import { PusharyValidationError } from '../pushary/errors.js'
import { externalIdSchema, idSchema } from '../pushary/identity.js'
import { PUSHARY_LIMITS } from '../pushary/limits.js'
import {
  decisionTypeSchema,
  optionsSchema,
  questionTextSchema,
  refineOptions,
  terminalDecisionStatusSchema,
} from '../pushary/question.js'
import { findReservedKey, RESERVED_KEY_MESSAGE } from '../pushary/reserved-keys.js'
import { storableString } from '../pushary/text-rules.js'
import { approverEscalationStateSchema } from './approver-escalation.js'
import { pusharyApproversSchema } from './approver-set.js'

/**
 * Longest `operationId` accepted; keeps the binding context under the service's 2,000-character limit.
 *
 * @example
 * if (operationId.length > OPERATION_ID_MAX) throw new Error('operation id too long')
 */
export const OPERATION_ID_MAX = 200

/**
 * Trusted facts about the action, shown to the reviewer. Supplied by the
 * application (never by a model); fingerprinted into nothing, sent as is.
 *
 * @example
 * pusharyApprovalSubjectSchema.parse({ toolName: 'refund.create', parameters: { amountMinor: 4800 } })
 */
export const pusharyApprovalSubjectSchema = z.object({
  toolName: storableString().trim().min(1).max(200).optional(),
  toolTarget: storableString().max(500).optional(),
  actor: storableString().max(PUSHARY_LIMITS.actorMax).optional(),
  environment: storableString().max(PUSHARY_LIMITS.environmentMax).optional(),
  /** Who asks, as the card names it (an agent review sets the Mastra agent's name); the step's `agentName` option wins. */
  agentName: storableString().trim().min(1).max(PUSHARY_LIMITS.agentNameMax).optional(),
  // Checked on the raw value: parsing a record into a fresh object drops a
  // `__proto__` key silently (the reviewer would never see it), so a
  // reserved name is refused by name before the record is built.
  parameters: z
    .preprocess((value, context) => {
      const path = findReservedKey(value)
      if (path !== null) {
        context.addIssue({ code: 'custom', message: RESERVED_KEY_MESSAGE, path, input: value })
      }
      return value
    }, decisionParametersSchema)
    .optional(),
  presentation: decisionPresentationSchema.optional(),
})
/** @example const subject: PusharyApprovalSubject = { toolName: 'refund.create' } */
export type PusharyApprovalSubject = z.infer<typeof pusharyApprovalSubjectSchema>

/**
 * Input of {@link pusharyApprovalStep}: one business action (`operationId`,
 * stable across retries, distinct per foreach item) and the question to put
 * to one person. `externalId` may instead be fixed on the step options.
 *
 * @example
 * pusharyApprovalStepInputSchema.parse({ operationId: 'refund:o1:v1', question: 'Refund EUR 48?' })
 */
export const pusharyApprovalStepInputSchema = z
  .object({
    operationId: idSchema.max(OPERATION_ID_MAX),
    question: questionTextSchema,
    type: decisionTypeSchema.default('confirm'),
    options: optionsSchema.optional(),
    placeholder: storableString().max(PUSHARY_LIMITS.placeholderMax).optional(),
    externalId: externalIdSchema.optional(),
    /** Several approvers instead of `externalId` (one decision each; see `pusharyApprovalStep`). */
    approvers: pusharyApproversSchema.optional(),
    /** Who asked for the action: never counts as an approver. */
    requestedBy: externalIdSchema.optional(),
    subject: pusharyApprovalSubjectSchema.optional(),
    /** Per-run delivery, overriding the step options (the agent review workflow sets it per question). */
    delivery: z
      .object({
        callbackUrl: z.url({ protocol: /^https?$/ }).optional(),
        expiresInSeconds: z.number().int().min(1).max(2_592_000).optional(),
        requireReachable: z.boolean().optional(),
        sandboxOutcome: z.enum(['approve', 'deny', 'no_answer']).optional(),
      })
      .optional(),
  })
  .superRefine((value, context) => {
    refineOptions(value, context)
    // The same displayed-text rule as the client and the service, checked
    // here so the step fails before it asks anything.
    refineDisplayedText({ placeholder: value.placeholder }, context)
    if (value.subject) refineDisplayedText(value.subject, context, ['subject'])
  })
/** @example const input: PusharyApprovalStepInput = { operationId: 'op-1', question: 'Ship?', type: 'confirm' } */
export type PusharyApprovalStepInput = z.infer<typeof pusharyApprovalStepInputSchema>

/**
 * What the approval step suspends with. The resume label equals `decisionId`.
 *
 * @example
 * pusharyApprovalSuspendSchema.parse({ decisionId: 'd_1', correlationId: 'd_1' })
 */
export const pusharyApprovalSuspendSchema = z.object({
  decisionId: z.string().min(1),
  correlationId: z.string().min(1),
  /** When the decision expires, as the service reported it at creation; absent when it did not say. */
  expiresAt: z.iso.datetime().optional(),
  /** How the question reached the person: `push` to a device, or `fallback` (an approval link handed to `onFallback`). */
  delivery: z.enum(['push', 'fallback']).optional(),
  // What `pusharyPendingDecisions` reports without another read. Optional:
  // runs suspended by an earlier release lack them. The approval link itself
  // is never kept here (whoever holds it can answer); `link` is the decision
  // page, which only an enrolled device opens.
  /** The customer asked (the step's option wins over its input, as when asking). */
  externalId: z.string().optional(),
  /** The question text as asked. */
  question: z.string().optional(),
  /** The business action this decision is for (the step input's `operationId`). */
  operationId: z.string().optional(),
  /** The service's page for this decision (`decisionPageUrl`), when it sent one. */
  link: z.string().optional(),
  /** Where it was asked in Mastra's trace, when Mastra traced the step (`observability/trace-ref.ts`). */
  trace: pusharyTraceRefSchema.optional(),
  /** Several approvers: every member's decision as last read (`decisionId` is then the first still open). */
  approvers: z
    .array(
      z.object({
        externalId: z.string(),
        decisionId: z.string(),
        status: z.string(),
        /** The answer as read (absent in payloads of an earlier release: then it is read again). */
        value: z.string().nullable().optional(),
        approved: z.boolean(),
        answeredAt: z.string().nullable(),
        late: z.literal(true).optional(),
      }),
    )
    .optional(),
  /** Several approvers: the rule that settles them. */
  rule: z
    .object({
      externalIds: z.array(z.string()),
      required: z.number(),
      veto: z.boolean(),
      escalation: z
        .array(z.object({ afterSeconds: z.number(), externalIds: z.array(z.string()) }))
        .optional(),
    })
    .optional(),
  /** Several approvers with escalation: when the first were asked, and how many later tiers were asked since. */
  escalation: approverEscalationStateSchema.optional(),
})
/** @example const s: PusharyApprovalSuspend = { decisionId: 'd_1', correlationId: 'd_1' } */
export type PusharyApprovalSuspend = z.infer<typeof pusharyApprovalSuspendSchema>

/**
 * Resume data of the approval step: `{ answer, status: 'answered' }`,
 * `{ answer: null, status: 'expired' | 'cancelled' }`, or the legacy
 * `{ answer }` which means answered. Only the dispatcher (after re-reading
 * the decision) should build it. `proof` is the dispatcher's single-use,
 * in-process reference to the decision it verified for this very resume
 * (`steps/verified-handoff.ts`); without a proof the step honours, it
 * re-reads the decision from the service itself.
 *
 * @example
 * pusharyApprovalResumeSchema.parse({ answer: 'yes' }) // { answer: 'yes', status: 'answered' }
 */
export const pusharyApprovalResumeSchema = z.object({
  answer: z.string().nullable(),
  status: terminalDecisionStatusSchema.default('answered'),
  proof: z.string().max(128).optional(),
  /** Several approvers: which member's decision the dispatcher verified (names it; never authority). */
  decisionId: z.string().max(256).optional(),
  /**
   * Several approvers: the dispatcher woke the step because an escalation
   * is due. The step asks the next tier only if it finds it due itself, and
   * never settles the set on such a wake (the answered members' own resumes
   * do).
   */
  escalate: z.literal(true).optional(),
})
/** @example const r: PusharyApprovalResume = { answer: null, status: 'expired' } */
export type PusharyApprovalResume = z.infer<typeof pusharyApprovalResumeSchema>

/**
 * Parses step input with a typed error naming the field, so callers can
 * validate before `run.start` (Mastra's own check throws an untyped error).
 *
 * @example
 * const input = parsePusharyApprovalStepInput({ operationId: 'op-1', question: 'Ship?' })
 */
export function parsePusharyApprovalStepInput(
  input: unknown,
  operation = 'pusharyApprovalStep',
): PusharyApprovalStepInput {
  const parsed = pusharyApprovalStepInputSchema.safeParse(input)
  if (parsed.success) return parsed.data
  const first = parsed.error.issues[0]?.path[0]
  const code =
    first === 'externalId' || first === 'requestedBy'
      ? 'invalid_external_id'
      : first === 'approvers'
        ? 'invalid_decision_input'
        : first === 'operationId'
          ? 'invalid_identifier'
          : first === 'options'
            ? 'invalid_options'
            : first === 'subject'
              ? 'invalid_decision_input'
              : 'invalid_question'
  throw PusharyValidationError.fromZod(parsed.error, { operation, code })
}
