import { RequestContext } from '@mastra/core/request-context'
import { createStep, createWorkflow } from '@mastra/core/workflows'
import { z } from 'zod/v4'
import { PusharyValidationError } from '../pushary/errors.js'
import { idSchema } from '../pushary/identity.js'
import { type PusharyAnswer, pusharyAnswerSchema } from '../pushary/question.js'
import { DEFAULT_CLAIM_LEASE_MS } from '../resume/claim-lease.js'
import { findWorkflow } from '../resume/resume-guard.js'
import { loadRunSnapshot } from '../resume/run-position.js'
import { parsePusharyApprovalStepInput, pusharyApprovalStepInputSchema } from '../steps/approval-schemas.js'
import {
  PACKAGE_WORKFLOW_OPTIONS,
  PUSHARY_PARENT_CONTEXT_KEY,
  PUSHARY_RECOVERY_CONTEXT_KEY,
  type PusharyApprovalStepOptions,
  type PusharyStepConfig,
  pusharyApprovalStep,
} from '../steps/approval-step.js'
import { refuseAutoRestarted } from '../steps/run-guards.js'
import type { PusharyReviewStore } from '../store/review-store.js'
import { batchChildRunId, readBatchChild } from './batch-children.js'
import { fanOutUnderClaim } from './batch-fanout.js'
import { batchParentReviewId, pusharyBatchResumeSchema, pusharyBatchSuspendSchema } from './batch-parent.js'
import { markBatchStep } from './batch-reconcile.js'

function checkedId(value: unknown, field: string, operation: string): string {
  const parsed = idSchema.max(200).safeParse(value)
  if (parsed.success) return parsed.data
  throw PusharyValidationError.fromZod(parsed.error, {
    operation,
    code: 'invalid_identifier',
    fieldPrefix: field,
  })
}

/**
 * One question, one person: `pusharyApprovalStep` alone in a workflow whose
 * output is the answer. Register it on Mastra; it is also the child workflow
 * of {@link pusharyApprovalBatchStep}.
 *
 * @example
 * const approval = createPusharyApprovalWorkflow({ client, store }, { id: 'pushary-approval-item' })
 * const mastra = new Mastra({ workflows: { approval }, storage })
 */
export function createPusharyApprovalWorkflow(
  config: PusharyStepConfig,
  opts: PusharyApprovalStepOptions & { workflowId?: string } = {},
) {
  const { workflowId, ...stepOptions } = opts
  const id = checkedId(
    workflowId ?? 'pushary-approval-item',
    'opts.workflowId',
    'createPusharyApprovalWorkflow',
  )
  return createWorkflow({
    id,
    inputSchema: pusharyApprovalStepInputSchema,
    outputSchema: pusharyAnswerSchema,
    options: PACKAGE_WORKFLOW_OPTIONS,
  })
    .then(pusharyApprovalStep(config, stepOptions))
    .commit()
}

/**
 * Several items, each its own decision, through Mastra's `.foreach`. Results
 * come back in input order. Suitable for a few dozen items: Mastra's foreach
 * snapshot grows quadratically; use {@link pusharyApprovalBatchStep} beyond that.
 * `concurrency` is how many items are asked at once (Mastra's default is 1).
 *
 * @example
 * const wf = createPusharyForeachApprovalWorkflow(config, { workflowId: 'three-questions', concurrency: 3, externalId: 'c1' })
 */
export function createPusharyForeachApprovalWorkflow(
  config: PusharyStepConfig,
  opts: PusharyApprovalStepOptions & { workflowId?: string; concurrency?: number } = {},
) {
  const { workflowId, concurrency, ...stepOptions } = opts
  const id = checkedId(
    workflowId ?? 'pushary-foreach-approval',
    'opts.workflowId',
    'createPusharyForeachApprovalWorkflow',
  )
  const parsedConcurrency = z.number().int().min(1).max(1000).optional().safeParse(concurrency)
  if (!parsedConcurrency.success) {
    throw PusharyValidationError.fromZod(parsedConcurrency.error, {
      operation: 'createPusharyForeachApprovalWorkflow',
      code: 'invalid_decision_input',
      fieldPrefix: 'opts.concurrency',
    })
  }
  return createWorkflow({
    id,
    inputSchema: z.array(pusharyApprovalStepInputSchema),
    outputSchema: z.array(pusharyAnswerSchema),
    options: PACKAGE_WORKFLOW_OPTIONS,
  })
    .foreach(pusharyApprovalStep(config, stepOptions), { concurrency: parsedConcurrency.data ?? 1 })
    .commit()
}

async function startChildren(input: {
  count: number
  concurrency: number
  start: (index: number) => Promise<void>
}): Promise<void> {
  let next = 0
  const worker = async () => {
    while (next < input.count) {
      const index = next++
      await input.start(index)
    }
  }
  await Promise.all(Array.from({ length: Math.min(input.concurrency, input.count) }, worker))
}

/**
 * Options of {@link pusharyApprovalBatchStep}, validated in the factory.
 *
 * @example
 * const opts: PusharyBatchStepOptions = { childWorkflowId: 'pushary-approval-item', store, claimLeaseMs: 30_000 }
 */
export interface PusharyBatchStepOptions {
  /** Mastra step id; default `'pushary-approval-batch'`. */
  id?: string
  /** The registered single-approval workflow each item runs in. */
  childWorkflowId: string
  /** The review store the dispatcher uses: the parent's claim while it fans out lives there. */
  store: PusharyReviewStore
  /** The dispatcher's claim lease (default 30 s): the fan-out keeps its claim alive five times per lease. */
  claimLeaseMs?: number
  /** How many children are started at once (1–64, default 8). */
  startConcurrency?: number
}

/** How many children a batch step starts at once unless `startConcurrency` says otherwise. */
export const DEFAULT_START_CONCURRENCY = 8

function checkedFanOutOptions(opts: PusharyBatchStepOptions): {
  store: PusharyReviewStore
  claimLeaseMs: number
} {
  const store = opts.store as Partial<PusharyReviewStore> | undefined
  if (!store || typeof store.claim !== 'function' || typeof store.keepAlive !== 'function') {
    throw new PusharyValidationError({
      code: 'invalid_options',
      operation: 'pusharyApprovalBatchStep',
      field: 'opts.store',
      message:
        'store is required: the review store the dispatcher uses, where the parent is claimed while it fans out',
    })
  }
  const claimLeaseMs = opts.claimLeaseMs ?? DEFAULT_CLAIM_LEASE_MS
  if (!Number.isInteger(claimLeaseMs) || claimLeaseMs < 100) {
    throw new PusharyValidationError({
      code: 'invalid_options',
      operation: 'pusharyApprovalBatchStep',
      field: 'opts.claimLeaseMs',
      message: "claimLeaseMs must be an integer of at least 100 (milliseconds), the dispatcher's claim lease",
    })
  }
  return { store: opts.store, claimLeaseMs }
}

/**
 * The linear multi-item approval. Same input and output as
 * `.foreach(pusharyApprovalStep)` (a list of step inputs in, the answers in
 * input order out), but each item is its own child run of a registered
 * single-approval workflow (`childWorkflowId`), and the parent suspends once.
 * Every child is resumed on its own (no contention, ~1 KB snapshots); the
 * dispatcher resumes the parent once, when the last child settles.
 *
 * `store` (the dispatcher's) holds the parent's `batch-parent` review, which
 * the first pass claims while it fans out, so a process killed before the
 * parent suspended is found and restarted by `dispatcher.recover`; use the
 * dispatcher's `claimLeaseMs` here too (default 30 s).
 *
 * @example
 * createWorkflow({ id: 'refund-batch', inputSchema: z.array(pusharyApprovalStepInputSchema), outputSchema })
 *   .then(pusharyApprovalBatchStep({ childWorkflowId: 'pushary-approval-item', store }))
 *   .then(pusharyGateItems())
 *   .foreach(refundItem)
 *   .commit()
 */
export function pusharyApprovalBatchStep(opts: PusharyBatchStepOptions) {
  const stepId = checkedId(opts.id ?? 'pushary-approval-batch', 'opts.id', 'pusharyApprovalBatchStep')
  const childWorkflowId = checkedId(opts.childWorkflowId, 'opts.childWorkflowId', 'pusharyApprovalBatchStep')
  const { store, claimLeaseMs } = checkedFanOutOptions(opts)
  const startConcurrency = opts.startConcurrency ?? DEFAULT_START_CONCURRENCY
  if (!Number.isInteger(startConcurrency) || startConcurrency < 1 || startConcurrency > 64) {
    throw new PusharyValidationError({
      code: 'invalid_decision_input',
      operation: 'pusharyApprovalBatchStep',
      field: 'opts.startConcurrency',
      message: 'startConcurrency must be an integer from 1 to 64',
    })
  }
  // Marked so reconcile's fallback lists only the workflows that hold a batch step.
  const step = createStep({
    id: stepId,
    description: 'Ask one decision per item, each in its own child run; continue when all are settled.',
    inputSchema: z.array(pusharyApprovalStepInputSchema),
    outputSchema: z.array(pusharyAnswerSchema),
    suspendSchema: pusharyBatchSuspendSchema,
    resumeSchema: pusharyBatchResumeSchema,
    execute: async ({ inputData, resumeData, suspend, runId, workflowId, mastra, requestContext }) => {
      const items = inputData.map((item, index) =>
        parsePusharyApprovalStepInput(item, `pusharyApprovalBatchStep items[${index}]`),
      )
      const suspendPayload = { pushary: 'batch' as const, childWorkflowId, count: items.length }

      const parent = { workflowId, runId, stepId }
      const childRunIds = inputData.map((item, index) => batchChildRunId(parent, index, item))
      const readAnswers = async (): Promise<PusharyAnswer[] | null> => {
        const answers: PusharyAnswer[] = []
        for (let index = 0; index < items.length; index++) {
          const state = await readBatchChild(
            mastra,
            childWorkflowId,
            childRunIds[index] as string,
            inputData[index],
          )
          if (state.state === 'open') return null
          if (state.state === 'failed') {
            throw new Error(`pusharyApprovalBatchStep: item ${index} failed: ${state.reason}`)
          }
          answers.push(state.answer)
        }
        return answers
      }

      const fanOut = async (): Promise<PusharyAnswer[] | null> => {
        // Only the first pass starts children; the resume pass reads them from storage.
        const child = findWorkflow(mastra, childWorkflowId, runId)
        await startChildren({
          count: items.length,
          concurrency: startConcurrency,
          start: async (index) => {
            const childRunId = childRunIds[index] as string
            // A re-run of this first pass (retry, restart) must not ask twice;
            // the run ID is derived from this exact parent step and item.
            if (await loadRunSnapshot(mastra, childWorkflowId, childRunId)) return
            const requestContext = new RequestContext()
            requestContext.set(PUSHARY_PARENT_CONTEXT_KEY, { workflowId, runId, stepId, itemIndex: index })
            const run = await child.createRun({ runId: childRunId })
            const started = await run.start({ inputData: items[index], requestContext })
            if (started.status === 'failed') {
              throw new Error(`pusharyApprovalBatchStep: item ${index} could not be asked`, {
                cause: (started as { error?: unknown }).error,
              })
            }
          },
        })
        return readAnswers()
      }

      if (resumeData) return (await readAnswers()) ?? suspend(suspendPayload)
      // First pass, before anything is asked: the parent and child workflows
      // must both be resumable from here (registered, not restarted by Mastra).
      findWorkflow(mastra, childWorkflowId, runId)
      refuseAutoRestarted(mastra, workflowId, 'pusharyApprovalBatchStep')
      refuseAutoRestarted(mastra, childWorkflowId, 'pusharyApprovalBatchStep')
      const reviewId = batchParentReviewId(parent)
      const outcome = await fanOutUnderClaim({
        store,
        review: {
          target: 'batch-parent',
          version: 1,
          ...parent,
          childWorkflowId,
          count: items.length,
          decisionId: reviewId,
          correlationId: reviewId,
          state: 'pending',
        },
        recovering: requestContext?.get(PUSHARY_RECOVERY_CONTEXT_KEY as never) === runId,
        claimLeaseMs,
        fanOut,
      })
      if (outcome === 'held_elsewhere' || outcome === null) return suspend(suspendPayload)
      return outcome
    },
  })
  return markBatchStep(step)
}

/**
 * A ready-made linear multi-item workflow: the batch step alone. Register it
 * together with the child single-approval workflow.
 *
 * @example
 * const item = createPusharyApprovalWorkflow(config, { workflowId: 'pushary-approval-item', externalId: 'c1' })
 * const batch = createPusharyBatchApprovalWorkflow({ workflowId: 'pushary-batch', childWorkflowId: item.id, store })
 */
export function createPusharyBatchApprovalWorkflow(
  opts: Omit<PusharyBatchStepOptions, 'id'> & { workflowId?: string },
) {
  const id = checkedId(
    opts.workflowId ?? 'pushary-batch-approval',
    'opts.workflowId',
    'createPusharyBatchApprovalWorkflow',
  )
  return createWorkflow({
    id,
    inputSchema: z.array(pusharyApprovalStepInputSchema),
    outputSchema: z.array(pusharyAnswerSchema),
    options: PACKAGE_WORKFLOW_OPTIONS,
  })
    .then(
      pusharyApprovalBatchStep({
        childWorkflowId: opts.childWorkflowId,
        store: opts.store,
        ...(opts.claimLeaseMs === undefined ? {} : { claimLeaseMs: opts.claimLeaseMs }),
        ...(opts.startConcurrency === undefined ? {} : { startConcurrency: opts.startConcurrency }),
      }),
    )
    .commit()
}
