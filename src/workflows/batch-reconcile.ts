/**
 * Reconcile's fallback for multi-item parents: find every parent suspended on
 * its batch step and settle those whose children are all done.
 */
import type { Mastra } from '@mastra/core/mastra'
import type { PusharyParentOutcome } from '../resume/dispatch-types.js'
import type { PusharyReviewStore } from '../store/review-store.js'
import { type BatchParentRef, pusharyBatchSuspendSchema, settleBatchParent } from './batch-parent.js'

interface ListableWorkflow {
  id: string
  listWorkflowRuns(args: { status: 'suspended'; perPage: number; page: number }): Promise<{
    runs: { runId: string; snapshot: unknown }[]
    total?: number
  }>
}

/**
 * Reconcile fallback for multi-item parents: pages through every suspended
 * run of every registered workflow and settles the batch parents whose
 * children are all done. Covers a crash between the last child's completion
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
