/**
 * Reconcile's fallback for multi-item parents: find every parent suspended on
 * its batch step and settle those whose children are all done. Only the
 * workflows that hold a batch step are listed: every other workflow's
 * suspended runs (single approvals, batch items, agent review runs) are never
 * read, so a round does not grow with the approvals still waiting.
 */
import type { Mastra } from '@mastra/core/mastra'
import type { PusharyParentOutcome } from '../resume/dispatch-types.js'
import type { PusharyReviewStore } from '../store/review-store.js'
import { type BatchParentRef, pusharyBatchSuspendSchema, settleBatchParent } from './batch-parent.js'

/** The mark `pusharyApprovalBatchStep` leaves on its step (a registry key, so two copies of the package agree). */
const BATCH_STEP_MARK = Symbol.for('@pushary/mastra.batch-step')

/**
 * Marks a step as a Pushary batch step. A step rebuilt from it
 * (`createStep({ ...step, id })`) loses the mark but keeps the batch step's
 * suspend schema, which `batchStepIdsOf` also recognises.
 *
 * @example
 * return markBatchStep(createStep({ id, inputSchema, outputSchema, execute }))
 */
export function markBatchStep<T extends object>(step: T): T {
  ;(step as Record<symbol, unknown>)[BATCH_STEP_MARK] = true
  return step
}

function isBatchStep(step: object): boolean {
  return (
    (step as Record<symbol, unknown>)[BATCH_STEP_MARK] === true ||
    (step as { suspendSchema?: unknown }).suspendSchema === pusharyBatchSuspendSchema
  )
}

/** Whether a step is a batch step, or a workflow used as a step that holds one at any depth. */
function holdsBatchStep(step: unknown, seen: Set<object>): boolean {
  if (!step || typeof step !== 'object' || seen.has(step)) return false
  seen.add(step)
  if (isBatchStep(step)) return true
  const inner = (step as { steps?: unknown }).steps
  if (!inner || typeof inner !== 'object') return false
  return Object.values(inner).some((child) => holdsBatchStep(child, seen))
}

/**
 * The IDs of the steps of a workflow whose suspension can be a batch parent's,
 * or `null` when the workflow does not show its steps (then every suspended
 * run of it is read, as before). Mastra registers every step of `.then`,
 * `.parallel`, `.branch` and `.foreach` in `workflow.steps` under the ID its
 * snapshot context uses; a workflow used as a step that holds a batch step
 * (at any depth) counts under its own step ID, where its suspension shows.
 *
 * @example
 * batchStepIdsOf(mastra.getWorkflowById('refunds')) // Set { 'pushary-approval-batch' }
 */
export function batchStepIdsOf(workflow: unknown): ReadonlySet<string> | null {
  const steps = (workflow as { steps?: unknown } | null)?.steps
  if (!steps || typeof steps !== 'object') return null
  const ids = new Set<string>()
  for (const [id, step] of Object.entries(steps)) {
    if (holdsBatchStep(step, new Set([workflow as object]))) ids.add(id)
  }
  return ids
}

interface ListableWorkflow {
  id: string
  steps?: unknown
  listWorkflowRuns(args: { status: 'suspended'; perPage: number; page: number }): Promise<{
    runs: { runId: string; snapshot: unknown }[]
    total?: number
  }>
}

/**
 * Reconcile fallback for multi-item parents: pages through the suspended
 * runs of every registered workflow that holds a batch step and settles the
 * batch parents whose children are all done. Covers a crash between the last child's completion
 * and the parent resume, and a last child that finished before its parent
 * had suspended.
 *
 * @example
 * const outcomes = await settleSuspendedBatches({ mastra, store, limit: 100 })
 */
export async function settleSuspendedBatches(input: {
  mastra: Mastra
  store: PusharyReviewStore
  limit?: number
  conflictTimeoutMs?: number
  claimLeaseMs?: number
}): Promise<PusharyParentOutcome[]> {
  const outcomes: PusharyParentOutcome[] = []
  const perPage = input.limit ?? 100
  const workflows = Object.values(input.mastra.listWorkflows()) as unknown as ListableWorkflow[]
  for (const workflow of workflows) {
    const batchSteps = batchStepIdsOf(workflow)
    if (batchSteps?.size === 0) continue
    // Collect every suspended batch parent first: settling one moves it out
    // of `suspended`, which would shift the pages still to be read.
    const parents: BatchParentRef[] = []
    for (let page = 0; ; page++) {
      const { runs } = await workflow.listWorkflowRuns({ status: 'suspended', perPage, page })
      for (const run of runs) {
        const snapshot = typeof run.snapshot === 'string' ? JSON.parse(run.snapshot) : run.snapshot
        const context = (
          snapshot as { context?: Record<string, { suspendPayload?: unknown; status?: string }> }
        )?.context
        for (const [stepId, step] of Object.entries(context ?? {})) {
          if (
            (batchSteps === null || batchSteps.has(stepId)) &&
            step?.status === 'suspended' &&
            pusharyBatchSuspendSchema.safeParse(step.suspendPayload).success
          ) {
            parents.push({ workflowId: workflow.id, runId: run.runId, stepId })
          }
        }
      }
      if (runs.length < perPage) break
    }
    for (const parent of parents) {
      outcomes.push(
        await settleBatchParent({
          mastra: input.mastra,
          store: input.store,
          parent,
          ...(input.conflictTimeoutMs === undefined ? {} : { conflictTimeoutMs: input.conflictTimeoutMs }),
          ...(input.claimLeaseMs === undefined ? {} : { claimLeaseMs: input.claimLeaseMs }),
        }),
      )
    }
  }
  return outcomes
}
