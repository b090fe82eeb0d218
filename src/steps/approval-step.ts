import { createStep } from '@mastra/core/workflows'
import { z } from 'zod/v4'
import { askTracing, recordAskSpan } from '../observability/approval-tracing.js'
import type { PusharyClient } from '../pushary/client.js'
import { type PusharyConfig, resolvePusharyClient as resolveConfigClient } from '../pushary/config.js'
import { isPusharyValidationError, PusharyValidationError } from '../pushary/errors.js'
import { externalIdSchema, fingerprintPusharyAction, idSchema, parseExternalId } from '../pushary/identity.js'
import { PUSHARY_LIMITS } from '../pushary/limits.js'
import { answerPusharyQuestion, parsePusharyQuestion } from '../pushary/question.js'
import { type PusharyWorkflowReview, pusharyReviewParentSchema } from '../store/review-schema.js'
import type { PusharyReviewStore } from '../store/review-store.js'
import {
  checkOnFallback,
  deliverFallback,
  deliveryPath,
  fallbackOf,
  noteApprovedDecision,
  type PusharyFallbackLink,
} from './approval-delivery.js'
import { askingAgentOf } from './approval-log.js'
import {
  parsePusharyApprovalStepInput,
  pusharyApprovalResumeSchema,
  pusharyApprovalStepInputSchema,
  pusharyApprovalSuspendSchema,
} from './approval-schemas.js'
import { approverSetRule, type PusharyApprovers, refuseSelfApproval } from './approver-set.js'
import { runApproverSetStep } from './approver-set-step.js'
import { decisionExpiresAt } from './decision-expiry.js'
import { pusharyUngatedAnswerSchema } from './gate-step.js'
import { createUngatedWarning } from './gate-warning.js'
import { refuseAutoRestarted, refuseUnresumable } from './run-guards.js'
import { takeVerifiedDecision } from './verified-handoff.js'
import { withdrawAsked } from './withdraw-asked.js'
import { checkWorkflowDecision, workflowApprovalKey, workflowBindingContext } from './workflow-binding.js'

/**
 * Collaborators of the approval step: a Pushary client (or the credentials to
 * build one, once, in the factory) and, optionally, the review store that
 * records the binding the dispatcher later resumes from. Without a store the
 * caller resumes the step's label (the decision ID) itself.
 *
 * @example
 * const config: PusharyStepConfig = { client: createPusharyClient(), store }
 */
export type PusharyStepConfig = PusharyConfig & { store?: PusharyReviewStore | undefined }

/**
 * Options of {@link pusharyApprovalStep}; validated in the factory, before any
 * workflow runs or any HTTP request.
 *
 * @example
 * const opts: PusharyApprovalStepOptions = { externalId: 'customer_1', expiresInSeconds: 3600 }
 */
export interface PusharyApprovalStepOptions {
  /** Mastra step id; default `'pushary-approval'`. */
  id?: string
  /** The person asked; else taken from the step input. Trusted configuration wins over input. */
  externalId?: string
  /** Where the service posts the signed callback; optional (reconcile polls otherwise). */
  callbackUrl?: string
  expiresInSeconds?: number
  requireReachable?: boolean
  agentName?: string
  /** Only honoured by sandbox keys and the local service. */
  sandboxOutcome?: 'approve' | 'deny' | 'no_answer'
  /**
   * Deliver an approval link yourself when the customer has no device: the
   * step first asks `GET /reachability`, and on `fallback` creates the
   * decision with `approvalUrl: true` and calls this with the link (after the
   * review is saved, before suspending). Without it nothing is preflighted.
   */
  onFallback?: (link: PusharyFallbackLink) => void | Promise<void>
  /** Several approvers instead of `externalId`: one decision each, settled by `required` and `veto`. */
  approvers?: PusharyApprovers
  /** Who asked for the action: never counts as an approver (refused as the only one). */
  requestedBy?: string
}

/**
 * Request-context key under which a multi-item parent tells its child run where it came from.
 *
 * @example
 * requestContext.set(PUSHARY_PARENT_CONTEXT_KEY, { workflowId, runId, stepId, itemIndex: 0 })
 */
export const PUSHARY_PARENT_CONTEXT_KEY = 'pushary.parent'

const optionsSchema = z.object({
  id: idSchema.max(200).default('pushary-approval'),
  externalId: externalIdSchema.optional(),
  callbackUrl: z.url({ protocol: /^https?$/ }).optional(),
  expiresInSeconds: z.number().int().min(1).max(2_592_000).optional(),
  requireReachable: z.boolean().optional(),
  agentName: z.string().trim().min(1).max(PUSHARY_LIMITS.agentNameMax).optional(),
  sandboxOutcome: z.enum(['approve', 'deny', 'no_answer']).optional(),
  approvers: z.unknown().optional(),
  requestedBy: externalIdSchema.optional(),
})

// Built once: every run of the step (every resume included) reads its parent.
const optionalParentSchema = pusharyReviewParentSchema.optional()

/**
 * Request-context key `dispatcher.recover` sets (to the run ID) when it
 * restarts a run, so approval steps can tell a recovery restart from a start.
 *
 * @example
 * requestContext.set(PUSHARY_RECOVERY_CONTEXT_KEY, runId)
 */
export const PUSHARY_RECOVERY_CONTEXT_KEY = 'pushary.recovery'

/**
 * Options of the workflows this package builds: Mastra's boot-time
 * `restartAllActiveWorkflowRuns()` must never re-drive them, since a restart
 * re-runs the step that was running when the process died (a protected
 * action included). Their recovery is `dispatcher.recover`.
 */
export const PACKAGE_WORKFLOW_OPTIONS: { autoRestartActiveRuns: false } = { autoRestartActiveRuns: false }

/**
 * Resolves the client once. Exported for the other workflow factories so all
 * of them accept the same config shape.
 *
 * @example
 * const client = resolvePusharyClient({ store, apiKey: process.env.PUSHARY_API_KEY })
 */
export function resolvePusharyClient(config: PusharyStepConfig): PusharyClient {
  return resolveConfigClient(config, 'pusharyApprovalStep')
}

/**
 * A Mastra step that asks one person one question and suspends until the
 * dispatcher resumes it with the verified answer.
 *
 * First pass: creates the decision (idempotency key from run, step, customer,
 * `operationId` and the question fingerprint), saves the review binding
 * (`pending`) when a store is configured, then suspends with
 * `{ decisionId, correlationId }` under the resume label `decisionId`. Resume pass: returns `{ status, value, approved }`;
 * only a confirm answered `yes` approves. An answer that does not fit the
 * question (a confirm that is neither yes nor no) keeps the step suspended.
 *
 * @example
 * const approve = pusharyApprovalStep({ client, store }, { externalId: 'customer_1' })
 * const wf = createWorkflow({ id: 'refund', inputSchema: pusharyApprovalStepInputSchema, outputSchema: pusharyAnswerSchema })
 *   .then(approve).commit()
 */
export function pusharyApprovalStep(config: PusharyStepConfig, opts: PusharyApprovalStepOptions = {}) {
  const parsed = optionsSchema.safeParse(opts)
  if (!parsed.success) {
    const first = parsed.error.issues[0]?.path[0]
    throw PusharyValidationError.fromZod(parsed.error, {
      operation: 'pusharyApprovalStep',
      code:
        first === 'externalId' || first === 'requestedBy'
          ? 'invalid_external_id'
          : first === 'id'
            ? 'invalid_identifier'
            : 'invalid_decision_input',
      fieldPrefix: 'opts',
    })
  }
  const options = parsed.data
  approverSetRule(options.approvers, options.requestedBy, 'opts.approvers') // refused here, before any run
  const onFallback = checkOnFallback(opts.onFallback)
  const client = resolvePusharyClient(config)
  // Optional: without a store nothing is saved and the caller resumes the
  // label itself; the resume pass still verifies against the service.
  const store = config.store
  const stepId = options.id
  const warnIfUngated = createUngatedWarning(stepId)

  return createStep({
    id: stepId,
    description: 'Ask one person on their phone and wait for the verified answer.',
    inputSchema: pusharyApprovalStepInputSchema,
    // Typed so that a protected step wired straight after names the gate first (gate-step.ts).
    outputSchema: pusharyUngatedAnswerSchema,
    suspendSchema: pusharyApprovalSuspendSchema,
    resumeSchema: pusharyApprovalResumeSchema,
    execute: async ({
      inputData,
      resumeData,
      suspendData,
      suspend,
      runId,
      workflowId,
      requestContext,
      mastra,
      tracingContext,
      getInitData,
    }) => {
      const input = parsePusharyApprovalStepInput(inputData)
      const question = parsePusharyQuestion(
        { question: input.question, type: input.type, options: input.options },
        'pusharyApprovalStep',
      )

      const requestedBy = options.requestedBy ?? input.requestedBy
      const set = approverSetRule(options.approvers ?? input.approvers, requestedBy, 'approvers')
      if (set) {
        return runApproverSetStep({
          ...{ client, store, mastra, requestContext, suspend, resumeData, suspendData, question, input },
          ...{ rule: set, workflowId, runId, stepId, externalId: options.externalId ?? input.externalId },
          delivery: { ...options, ...input.delivery },
          agentName: options.agentName,
          asking: askingAgentOf(workflowId, getInitData?.()),
          warnIfUngated,
        })
      }
      const externalId = parseExternalId(
        options.externalId ?? input.externalId,
        'externalId',
        'pusharyApprovalStep',
      )
      refuseSelfApproval(requestedBy, externalId)
      // A batch item's parent is part of its binding (the context's group key);
      // Mastra restores the request context from the snapshot on resume.
      const parentRaw = requestContext?.get(PUSHARY_PARENT_CONTEXT_KEY as never)
      const parsedParent = optionalParentSchema.safeParse(parentRaw)
      const parent = parsedParent.data
      const binding = {
        workflowId,
        runId,
        stepId,
        operationId: input.operationId,
        externalId,
        question,
        parent,
      }

      if (resumeData) {
        if (!suspendData) {
          throw new PusharyValidationError({
            code: 'invalid_answer',
            operation: 'pusharyApprovalStep',
            field: 'suspendData.decisionId',
            message: 'on resume: the step was resumed without the decision it asked (no suspend payload)',
          })
        }
        // Resume data is never authority on its own: anyone who can reach
        // Mastra's resume API could send `{ answer: 'yes' }`. It must agree
        // with the decision the service holds for this exact binding, else the
        // step keeps waiting (fail closed) and the person's real answer stays
        // resumable.
        const keepWaiting = () => suspend(suspendData, { resumeLabel: suspendData.decisionId })
        if (!parsedParent.success) return keepWaiting()
        // The dispatcher's own read of this decision, handed over in memory
        // for this resume only; anything else (no proof, a copied or forged
        // one) is read from the service here.
        let decision = takeVerifiedDecision(client, resumeData.proof, {
          workflowId,
          runId,
          stepId,
          decisionId: suspendData.decisionId,
        })
        if (!decision) {
          try {
            decision = await client.decisions.get(suspendData.decisionId)
          } catch {
            return keepWaiting()
          }
        }
        const agrees =
          checkWorkflowDecision({ ...binding, decisionId: suspendData.decisionId }, decision) === null &&
          decision.status === resumeData.status &&
          (decision.status !== 'answered' || decision.value === resumeData.answer)
        if (!agrees) return keepWaiting()
        try {
          const answer = answerPusharyQuestion(question, resumeData.status, resumeData.answer)
          noteApprovedDecision(requestContext, stepId, suspendData.decisionId)
          return answer
        } catch (error) {
          // An answer that does not fit the question is refused, never approval.
          if (isPusharyValidationError(error)) return keepWaiting()
          throw error
        }
      }

      if (!parsedParent.success) pusharyReviewParentSchema.parse(parentRaw)
      refuseUnresumable(mastra, workflowId)
      refuseAutoRestarted(mastra, workflowId, 'pusharyApprovalStep')
      warnIfUngated(mastra, workflowId)
      const context = workflowBindingContext(binding)
      const delivery = { ...options, ...input.delivery }

      const tracing = askTracing(tracingContext) // refuses a bad PUSHARY_TRACE_CUSTOMER before asking
      const askedAt = new Date()
      const fallback = fallbackOf(onFallback, requestContext)
      const path = await deliveryPath(client, externalId, fallback)
      const created = await client.decisions.create({
        question: question.question,
        type: question.type,
        ...(question.options ? { options: question.options } : {}),
        ...(input.placeholder === undefined ? {} : { placeholder: input.placeholder }),
        ...input.subject,
        externalId,
        context,
        idempotencyKey: workflowApprovalKey(binding),
        ...(delivery.callbackUrl === undefined ? {} : { callbackUrl: delivery.callbackUrl }),
        ...(delivery.expiresInSeconds === undefined ? {} : { expiresInSeconds: delivery.expiresInSeconds }),
        ...(delivery.requireReachable === undefined || path === 'fallback'
          ? {}
          : { requireReachable: delivery.requireReachable }),
        ...(path === 'fallback' ? { approvalUrl: true } : {}),
        ...(options.agentName === undefined ? {} : { agentName: options.agentName }),
        ...(delivery.sandboxOutcome === undefined ? {} : { sandboxOutcome: delivery.sandboxOutcome }),
      })
      const decisionId = created.decisionId
      const expiresAt = decisionExpiresAt(created, delivery, Date.now())

      // A recovery restart re-runs a whole foreach, items already answered
      // included. Only inside such a restart (marked by `dispatcher.recover`,
      // never by a fresh start under an old run ID) does an item whose review
      // completed get its verified answer back instead of a question nobody
      // would resume.
      const earlier = store ? await store.get(decisionId) : null
      if (
        earlier?.state === 'completed' &&
        requestContext?.get(PUSHARY_RECOVERY_CONTEXT_KEY as never) === runId
      ) {
        const decision = await client.decisions.get(decisionId)
        if (
          checkWorkflowDecision({ ...binding, decisionId }, decision) === null &&
          decision.status !== 'pending'
        ) {
          const answer = answerPusharyQuestion(question, decision.status, decision.value)
          noteApprovedDecision(requestContext, stepId, decisionId)
          return answer
        }
      }

      // Saved before suspending: Mastra persists the snapshot only after this
      // function returns, so the dispatcher treats a saved review whose label
      // is not yet in the snapshot as "not suspended yet" and retries.
      const review: PusharyWorkflowReview = {
        target: 'workflow-step',
        version: 1,
        workflowId,
        runId,
        stepId,
        forEachIndex: null,
        resumeLabel: decisionId,
        externalId,
        operationId: input.operationId,
        questionHash: fingerprintPusharyAction(question),
        question,
        ...(parent ? { parent } : {}),
        decisionId,
        correlationId: decisionId,
        ...(expiresAt === undefined ? {} : { expiresAt }),
        state: 'pending',
      }
      try {
        if (store) await store.save(review)
        const about = { toolName: input.subject?.toolName, agent: askingAgentOf(workflowId, getInitData?.()) }
        await deliverFallback(mastra, path, fallback, created, review, about)
      } catch (error) {
        // The run fails here without waiting on its question: withdraw it
        // (and so its link), so nobody approves something that will never run.
        await withdrawAsked(client, mastra, decisionId, error)
        throw error
      }
      const trace =
        tracing &&
        recordAskSpan(tracing, askedAt, {
          decisionId,
          questionType: question.type ?? 'confirm',
          risk: input.subject?.presentation?.risk,
          externalId,
          delivery: path,
        })
      return suspend(
        {
          decisionId,
          correlationId: decisionId,
          delivery: path,
          ...(trace ? { trace } : {}),
          ...(expiresAt === undefined ? {} : { expiresAt }),
          externalId,
          question: question.question,
          operationId: input.operationId,
          ...(created.decisionPageUrl ? { link: created.decisionPageUrl } : {}),
        },
        { resumeLabel: decisionId },
      )
    },
  })
}

/**
 * The step type {@link pusharyApprovalStep} returns.
 *
 * @example
 * const step: PusharyApprovalStep = pusharyApprovalStep({ client, store })
 */
export type PusharyApprovalStep = ReturnType<typeof pusharyApprovalStep>
