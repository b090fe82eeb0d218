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
  if (['success', 'failed', 'canceled', 'tripwire', 'bailed'].includes(snapshot.status)) {
    return { status: 'already_settled' }
  }
  const stepResult = snapshot.context[parent.stepId] as
    | { suspendPayload?: unknown; payload?: unknown }
    | undefined
  const suspended = pusharyBatchSuspendSchema.safeParse(stepResult?.suspendPayload)
  const count = suspended.success
    ? suspended.data.count
    : Array.isArray(stepResult?.payload)
      ? stepResult.payload.length
      : null
  const childWorkflowId = suspended.success ? suspended.data.childWorkflowId : null
  if (count === null || childWorkflowId === null) {
    // The parent's first pass has not persisted its suspension yet; the
    // reconcile fallback (`settlePusharyBatch`) picks it up later.
    return { status: 'waiting', openIndex: parent.itemIndex }
  }
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
    if (isPusharyResumeError(error) && error.code !== 'no_storage' && error.code !== 'unknown_workflow') {
      return { status: 'already_settled' }
    }
    throw error
  }
}
