import type { Mastra } from '@mastra/core/mastra'
import { z } from 'zod/v4'
import { type PusharyAnswer, pusharyAnswerSchema } from '../pushary/question.js'
import type { PusharyWorkflowReview } from '../store/review-schema.js'
import { isPusharyResumeError } from './resume-error.js'
import { resumePusharyApproval } from './resume-guard.js'
import { loadRunSnapshot } from './run-snapshot.js'

/**
 * What the batch step suspends with: where its children live. O(1) in the
 * number of items, so the parent snapshot stays small.
 *
 * @example
 * pusharyBatchSuspendSchema.parse({ pushary: 'batch', childWorkflowId: 'pushary-approval-item', count: 100 })
 */
export const pusharyBatchSuspendSchema = z.object({
  pushary: z.literal('batch'),
  childWorkflowId: z.string().min(1),
  count: z.number().int().min(0),
})
/** @example const s: PusharyBatchSuspend = { pushary: 'batch', childWorkflowId: 'item', count: 3 } */
export type PusharyBatchSuspend = z.infer<typeof pusharyBatchSuspendSchema>

/**
 * Resume data of the batch step. It carries no answers: on resume the step
 * re-reads every child run from storage, so a premature or forged resume
 * cannot inject one; it re-suspends if any child is still open.
 *
 * @example
 * pusharyBatchResumeSchema.parse({ settled: true })
 */
export const pusharyBatchResumeSchema = z.object({ settled: z.literal(true) })

/**
 * Run id of the child run of item `index`: deterministic, so re-running the
 * parent's first pass finds the children it already started.
 *
 * @example
 * batchChildRunId('run-1', 2) // 'run-1~2'
 */
export function batchChildRunId(parentRunId: string, index: number): string {
  return `${parentRunId}~${index}`
}

const TERMINAL = ['success', 'failed', 'canceled', 'tripwire', 'bailed']

/** State of one child run as the parent sees it. */
export type BatchChildState =
  | { state: 'settled'; answer: PusharyAnswer }
  | { state: 'open' }
  | { state: 'failed'; reason: string }

/**
 * Reads one child run's state from storage.
 *
 * @example
 * const child = await readBatchChild(mastra, 'pushary-approval-item', batchChildRunId(runId, 0))
 */
export async function readBatchChild(
  mastra: Mastra,
  childWorkflowId: string,
  childRunId: string,
): Promise<BatchChildState> {
  const snapshot = await loadRunSnapshot(mastra, childWorkflowId, childRunId)
  if (!snapshot) return { state: 'open' }
  if (snapshot.status === 'success') {
    const parsed = pusharyAnswerSchema.safeParse(snapshot.result)
    if (parsed.success) return { state: 'settled', answer: parsed.data }
    return { state: 'failed', reason: 'the child run finished without an answer' }
  }
  if (snapshot.status === 'failed' || snapshot.status === 'canceled' || snapshot.status === 'tripwire') {
    return { state: 'failed', reason: `the child run is ${snapshot.status}` }
  }
  return { state: 'open' }
}

/**
 * Result of trying to settle a multi-item parent after one child finished.
 *
 * @example
 * if (outcome.status === 'waiting') console.log('next open item', outcome.openIndex)
 */
export type PusharyParentOutcome =
  | { status: 'resumed'; runStatus: string }
  | { status: 'waiting'; openIndex: number }
  | { status: 'already_settled' }
  | { status: 'deferred'; reason: string }
  | { status: 'not_batch' }
  | { status: 'failed'; reason: string }

/**
 * Called after a child of a multi-item approval completed: when every
 * sibling has settled, resumes the parent once. Each child persists its own
 * completion before calling this, so the last one to finish always sees all
 * siblings settled; a second concurrent parent resume loses Mastra's claim
 * and is reported as `already_settled`. The scan stops at the first open
 * sibling, so N children answered in random order cost about N·ln N reads.
 *
 * @example
 * await settleBatchParent({ mastra, parent: review.parent })
 */
export async function settleBatchParent(input: {
  mastra: Mastra
  parent: NonNullable<PusharyWorkflowReview['parent']>
  conflictTimeoutMs?: number
}): Promise<PusharyParentOutcome> {
  const { mastra, parent } = input
  const snapshot = await loadRunSnapshot(mastra, parent.workflowId, parent.runId)
  if (!snapshot) return { status: 'not_batch' }
  if (TERMINAL.includes(snapshot.status)) {
    return { status: 'already_settled' }
  }
  const stepResult = snapshot.context[parent.stepId] as { suspendPayload?: unknown } | undefined
  const suspended = pusharyBatchSuspendSchema.safeParse(stepResult?.suspendPayload)
  if (!suspended.success) {
    // The parent's first pass has not persisted its suspension yet;
    // `settleSuspendedBatches` (run by reconcile) picks it up later.
    return { status: 'deferred', reason: 'the parent has not suspended yet' }
  }
  const { count, childWorkflowId } = suspended.data
  for (let index = 0; index < count; index++) {
    const child = await readBatchChild(mastra, childWorkflowId, batchChildRunId(parent.runId, index))
    if (child.state === 'open') return { status: 'waiting', openIndex: index }
  }
  try {
    const outcome = await resumePusharyApproval({
      mastra,
      workflowId: parent.workflowId,
      runId: parent.runId,
      step: parent.stepId,
      resumeData: { settled: true },
      ...(input.conflictTimeoutMs === undefined ? {} : { conflictTimeoutMs: input.conflictTimeoutMs }),
    })
    return { status: 'resumed', runStatus: outcome.result.status }
  } catch (error) {
    if (!isPusharyResumeError(error) || error.code === 'no_storage' || error.code === 'unknown_workflow')
      throw error
    // Another caller won the parent (it is running or done), or it is busy:
    // only a finished parent is settled; anything else is retried by reconcile.
    const now = await loadRunSnapshot(mastra, parent.workflowId, parent.runId)
    if (now && TERMINAL.includes(now.status)) return { status: 'already_settled' }
    return { status: 'deferred', reason: error.message }
  }
}

/**
 * Reconcile fallback for multi-item parents: finds suspended batch parents
 * (any registered workflow) and settles those whose children are all done.
 * Covers a crash between the last child's completion and the parent resume,
 * and a last child that finished before its parent had suspended.
 *
 * @example
 * const outcomes = await settleSuspendedBatches({ mastra, limit: 100 })
 */
export async function settleSuspendedBatches(input: {
  mastra: Mastra
  limit?: number
  conflictTimeoutMs?: number
}): Promise<PusharyParentOutcome[]> {
  const outcomes: PusharyParentOutcome[] = []
  const workflows = Object.values(input.mastra.listWorkflows()) as unknown as {
    id: string
    listWorkflowRuns(args: { status: 'suspended'; perPage: number; page: number }): Promise<{
      runs: { runId: string; snapshot: unknown }[]
    }>
  }[]
  for (const workflow of workflows) {
    const { runs } = await workflow.listWorkflowRuns({
      status: 'suspended',
      perPage: input.limit ?? 100,
      page: 0,
    })
    for (const run of runs) {
      const snapshot = typeof run.snapshot === 'string' ? JSON.parse(run.snapshot) : run.snapshot
      const context = (
        snapshot as { context?: Record<string, { suspendPayload?: unknown; status?: string }> }
      )?.context
      for (const [stepId, step] of Object.entries(context ?? {})) {
        if (step?.status !== 'suspended' || !pusharyBatchSuspendSchema.safeParse(step.suspendPayload).success)
          continue
        outcomes.push(
          await settleBatchParent({
            mastra: input.mastra,
            parent: { workflowId: workflow.id, runId: run.runId, stepId, itemIndex: 0 },
            ...(input.conflictTimeoutMs === undefined ? {} : { conflictTimeoutMs: input.conflictTimeoutMs }),
          }),
        )
      }
    }
  }
  return outcomes
}
