/**
 * Zod schemas of durable review records. A review binds one decision to one
 * suspended Mastra target: an agent tool call or a workflow step. Everything
 * except `state` is the immutable binding that `save` compares.
 */
import { z } from 'zod/v4'
import { REVIEW_EVENTS, REVIEW_STATES } from '../machines/review-lifecycle.js'
import { externalIdSchema, idSchema } from '../pushary/identity.js'
import { pusharyQuestionSchema } from '../pushary/question.js'

/**
 * A review record's lifecycle state (see `reviewLifecycleMachine`).
 *
 * @example
 * reviewStateSchema.parse('pending') // 'pending'
 */
export const reviewStateSchema = z.enum(REVIEW_STATES)

/**
 * When the decision behind a review expires, as the service reported it at
 * creation (absent when it did not say). Only this lets a later 404 (the
 * hosted service forgets expired decisions) settle the review as expired;
 * before this instant a 404 is an error, never a verdict. Not part of the
 * binding's identity: a replayed save keeps the first value.
 */
const decisionExpirySchema = z.iso.datetime().optional()

/**
 * A review bound to one suspended agent tool call. `target` defaults to
 * `'agent'` so records written before workflow reviews existed still parse.
 * Unknown keys are stripped.
 *
 * @example
 * const review = pusharyAgentReviewSchema.parse({
 *   version: 1, agentId: 'support', runId: 'run_1', toolCallId: 'call_1', toolName: 'refund',
 *   externalId: 'customer_1', actionVersion: 'v3', inputHash: 'ab12', subjectHash: 'cd34',
 *   kind: 'approval', question: { question: 'Refund EUR 48?' },
 *   decisionId: 'dec_1', correlationId: 'dec_1', state: 'pending',
 * })
 */
export const pusharyAgentReviewSchema = z.object({
  target: z.literal('agent').default('agent'),
  version: z.literal(1),
  agentId: idSchema,
  runId: idSchema,
  toolCallId: idSchema,
  toolName: idSchema,
  externalId: externalIdSchema,
  actionVersion: idSchema,
  inputHash: idSchema,
  subjectHash: idSchema,
  kind: z.enum(['approval', 'question']),
  question: pusharyQuestionSchema,
  threadId: idSchema.optional(),
  resourceId: idSchema.optional(),
  /**
   * Several approvers: this review's decision is one member of a set asked
   * for the same tool call (the members' decisions in the order of
   * `externalIds`, the requester already removed) settled by `required` and
   * `veto`; `externalId` is this member.
   */
  approverSet: z
    .object({
      decisionIds: z.array(idSchema).min(1),
      externalIds: z.array(externalIdSchema).min(1),
      required: z.number().int().min(1),
      veto: z.boolean(),
      requestedBy: externalIdSchema.optional(),
    })
    .optional(),
  decisionId: idSchema,
  correlationId: idSchema,
  expiresAt: decisionExpirySchema,
  state: reviewStateSchema,
})

/** @example const review: PusharyAgentReview = pusharyAgentReviewSchema.parse(row) */
export type PusharyAgentReview = z.infer<typeof pusharyAgentReviewSchema>

/**
 * Where a child run came from when one multi-item approval fans out into one
 * run per item.
 *
 * @example
 * pusharyReviewParentSchema.parse({ workflowId: 'refunds', runId: 'run_1', stepId: 'approve', itemIndex: 2 })
 */
export const pusharyReviewParentSchema = z.object({
  workflowId: idSchema,
  runId: idSchema,
  stepId: idSchema,
  itemIndex: z.number().int().min(0),
})

/**
 * A review bound to one suspended workflow step. `stepId` is the dotted step
 * path; `forEachIndex` is the item index inside a `foreach`, else `null`.
 *
 * @example
 * const review = pusharyWorkflowReviewSchema.parse({
 *   target: 'workflow-step', version: 1, workflowId: 'refunds', runId: 'run_1', stepId: 'approve',
 *   forEachIndex: null, resumeLabel: 'pushary:dec_1', externalId: 'customer_1', operationId: 'refund-48',
 *   questionHash: 'ab12', question: { question: 'Refund EUR 48?' },
 *   decisionId: 'dec_1', correlationId: 'dec_1', state: 'pending',
 * })
 */
export const pusharyWorkflowReviewSchema = z.object({
  target: z.literal('workflow-step'),
  version: z.literal(1),
  workflowId: idSchema,
  runId: idSchema,
  stepId: idSchema,
  forEachIndex: z.number().int().min(0).nullable(),
  resumeLabel: idSchema,
  externalId: externalIdSchema,
  operationId: idSchema,
  questionHash: idSchema,
  question: pusharyQuestionSchema,
  parent: pusharyReviewParentSchema.optional(),
  /**
   * Several approvers: this review's decision is one member of a set asked
   * by the same step (the members' decisions in the order of `externalIds`,
   * the requester already removed) settled by `required` and `veto`.
   */
  approverSet: z
    .object({
      decisionIds: z.array(idSchema).min(1),
      externalIds: z.array(externalIdSchema).min(1),
      required: z.number().int().min(1),
      veto: z.boolean(),
      /** Later tiers, each asked `afterSeconds` after the first approvers if the set is still undecided. */
      escalation: z
        .array(
          z.object({ afterSeconds: z.number().int().min(1), externalIds: z.array(externalIdSchema).min(1) }),
        )
        .optional(),
    })
    .optional(),
  decisionId: idSchema,
  correlationId: idSchema,
  expiresAt: decisionExpirySchema,
  state: reviewStateSchema,
})

/** @example const review: PusharyWorkflowReview = pusharyWorkflowReviewSchema.parse(row) */
export type PusharyWorkflowReview = z.infer<typeof pusharyWorkflowReviewSchema>

/**
 * The claim on resuming a multi-item parent run once every child settled. It
 * has no decision of its own: `decisionId` is a key derived from the parent's
 * workflow, run and step, so resuming a parent is claimed, finished and
 * recovered exactly like resuming a step.
 *
 * @example
 * const review = pusharyBatchParentReviewSchema.parse({
 *   target: 'batch-parent', version: 1, workflowId: 'refunds', runId: 'run_1', stepId: 'approve-all',
 *   childWorkflowId: 'pushary-approval-item', count: 3,
 *   decisionId: 'batch_1f2e', correlationId: 'batch_1f2e', state: 'pending',
 * })
 */
export const pusharyBatchParentReviewSchema = z.object({
  target: z.literal('batch-parent'),
  version: z.literal(1),
  workflowId: idSchema,
  runId: idSchema,
  stepId: idSchema,
  childWorkflowId: idSchema,
  count: z.number().int().min(0),
  decisionId: idSchema,
  correlationId: idSchema,
  state: reviewStateSchema,
})

/** @example const review: PusharyBatchParentReview = pusharyBatchParentReviewSchema.parse(row) */
export type PusharyBatchParentReview = z.infer<typeof pusharyBatchParentReviewSchema>

/**
 * Any review record, discriminated on `target` (absent means `'agent'`).
 *
 * @example
 * const review = pusharyReviewSchema.parse(JSON.parse(text))
 * if (review.target === 'workflow-step') console.log(review.stepId)
 */
export const pusharyReviewSchema = z.discriminatedUnion('target', [
  pusharyAgentReviewSchema,
  pusharyWorkflowReviewSchema,
  pusharyBatchParentReviewSchema,
])

/** @example const review: PusharyReview = await store.get('dec_1') ?? fail() */
export type PusharyReview = z.infer<typeof pusharyReviewSchema>

/**
 * The input accepted by `save`: `target` may be omitted for agent reviews.
 *
 * @example
 * const input: PusharyReviewInput = { ...binding, decisionId, correlationId: decisionId, state: 'pending' }
 */
export type PusharyReviewInput = z.input<typeof pusharyReviewSchema>

/**
 * One recorded state change of a review, oldest first in `history`. The first
 * entry of every review is `null -> pending` (event `null`), written by `save`.
 *
 * @example
 * reviewTransitionSchema.parse({ decisionId: 'dec_1', from: null, to: 'pending', event: null, reason: null, at: '2025-01-01T00:00:00.000Z' })
 */
export const reviewTransitionSchema = z.object({
  decisionId: idSchema,
  from: reviewStateSchema.nullable(),
  to: reviewStateSchema,
  event: z.enum(REVIEW_EVENTS).nullable(),
  reason: z.string().nullable(),
  at: z.iso.datetime(),
})

/** @example const last: ReviewTransition | undefined = (await store.history('dec_1')).at(-1) */
export type ReviewTransition = z.infer<typeof reviewTransitionSchema>

/**
 * A callback body as received, kept before the callback is acknowledged so a
 * crash after the 200 cannot lose the answer.
 *
 * @example
 * reviewReceiptSchema.parse({ decisionId: 'dec_1', receivedAt: new Date().toISOString(), body: '{"event":"decision.answered"}' })
 */
export const reviewReceiptSchema = z.object({
  decisionId: idSchema,
  receivedAt: z.iso.datetime(),
  body: z.string(),
})

/** @example const receipt: ReviewReceipt = { decisionId: 'dec_1', receivedAt: now, body } */
export type ReviewReceipt = z.infer<typeof reviewReceiptSchema>

/**
 * The permit a protected step spent for a review's decision, and the exact
 * action it presented (`withPusharyPermit`). Kept beside the review, outside
 * its binding, so `recover` can show the service the same action again and
 * read what the first holder's action did.
 *
 * @example
 * reviewPermitSchema.parse({ permitId: 'pmt_1', action: { toolName: 'refund.create' }, consumedAt: '2025-01-01T00:00:00.000Z' })
 */
export const reviewPermitSchema = z.object({
  permitId: idSchema,
  action: z.object({
    toolName: idSchema,
    toolTarget: z.string().optional(),
    actor: z.string().optional(),
    environment: z.string().optional(),
    externalId: externalIdSchema.optional(),
    parameters: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
  }),
  consumedAt: z.iso.datetime(),
  /**
   * Several approvers: the decisions whose approvals settled the set, in
   * answer order. The permit was spent on this review's decision, the last.
   */
  settledBy: z.array(idSchema).min(1).optional(),
})

/** @example const permit: ReviewPermit | null = await store.permitOf('dec_1') */
export type ReviewPermit = z.infer<typeof reviewPermitSchema>

/**
 * What happened to the approved action behind a review, as the evidence
 * showed it: `ran` (it ran: a `succeeded` receipt, the tool's own result, the
 * run continued past the gate), `failed` (it ran and failed: a `failed`
 * receipt, the tool threw), `refused` (it never ran: the permit or the tool's
 * input was refused), `not_run` (nothing was approved to run: a decline, an
 * expiry, a withdrawn question), `unknown` (the evidence cannot tell, e.g. a
 * permit spent without a receipt).
 *
 * @example
 * pusharyActionOutcomeSchema.parse('refused') // 'refused'
 */
export const pusharyActionOutcomeSchema = z.enum(['ran', 'failed', 'refused', 'not_run', 'unknown'])

/** @example const outcome: PusharyActionOutcome = 'ran' */
export type PusharyActionOutcome = z.infer<typeof pusharyActionOutcomeSchema>

/**
 * The action outcome recorded beside a review (`store.recordAction`), with
 * the evidence it was read from and when. Recorded before the review's
 * ending, so a crash between the two leaves the evidence for `recover`.
 *
 * @example
 * reviewActionSchema.parse({ outcome: 'ran', reason: 'permit pmt_1 receipt: succeeded', at: '2025-01-01T00:00:00.000Z' })
 */
export const reviewActionSchema = z.object({
  outcome: pusharyActionOutcomeSchema,
  reason: z.string().min(1).max(2000),
  at: z.iso.datetime(),
})

/** @example const action: ReviewAction | null = await store.actionOf('dec_1') */
export type ReviewAction = z.infer<typeof reviewActionSchema>
