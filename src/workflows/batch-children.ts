/**
 * The children of a multi-item approval, as the parent sees them: each
 * item's child run ID (deterministic, bound to one parent step and item),
 * a child's state read from its persisted snapshot, and the scan for the
 * first child still open. A child whose review went stale is ended here, so
 * it can never keep its parent waiting.
 */
import type { Mastra } from '@mastra/core/mastra'
import { canonicalJson, deterministicKey } from '../pushary/identity.js'
import { type PusharyAnswer, pusharyAnswerSchema } from '../pushary/question.js'
import { loadRunSnapshot, type RunSnapshotView } from '../resume/run-position.js'
import { pusharyApprovalStepInputSchema } from '../steps/approval-schemas.js'
import type { PusharyReviewStore } from '../store/review-store.js'

/** The batch step that owns a set of child runs. */
export interface BatchParentRef {
  workflowId: string
  runId: string
  stepId: string
}

/** An item as the approval step reads it (defaults applied), so raw and parsed forms agree. */
function normalizedItem(item: unknown): string {
  const parsed = pusharyApprovalStepInputSchema.safeParse(item)
  try {
    return canonicalJson(parsed.success ? parsed.data : (item ?? null))
  } catch {
    return ''
  }
}

/**
 * Run id of the child run of item `index`. Deterministic, so a re-run of the
 * parent's first pass finds the children it already started; derived from the
 * parent's workflow, run and step and from the item itself, so a child belongs
 * to exactly one parent step and item: two batch steps of one run, or two
 * workflows started with the same run ID, never share a child.
 *
 * @example
 * batchChildRunId({ workflowId: 'refunds', runId: 'run-1', stepId: 'approve-all' }, 2, item) // 'run-1~2~3f9c…'
 */
export function batchChildRunId(parent: BatchParentRef, index: number, item: unknown): string {
  const key = deterministicKey([
    'batch-child',
    parent.workflowId,
    parent.runId,
    parent.stepId,
    String(index),
    normalizedItem(item),
  ])
  return `${parent.runId}~${index}~${key.slice(0, 16)}`
}

/** State of one child run as the parent sees it. */
export type BatchChildState =
  | { state: 'settled'; answer: PusharyAnswer }
  | { state: 'open' }
  | { state: 'failed'; reason: string }

/**
 * Reads one child run's state from storage. A child whose recorded input is
 * not exactly `item` (its question and `operationId` included) is never
 * taken as that item's answer.
 *
 * @example
 * const child = await readBatchChild(mastra, 'pushary-approval-item', childRunId, item)
 */
export async function readBatchChild(
  mastra: Mastra,
  childWorkflowId: string,
  childRunId: string,
  item: unknown,
): Promise<BatchChildState> {
  return childState(await loadRunSnapshot(mastra, childWorkflowId, childRunId), item)
}

/** A child run's state from its snapshot (see {@link readBatchChild}). */
function childState(snapshot: RunSnapshotView | null, item: unknown): BatchChildState {
  if (!snapshot) return { state: 'open' }
  if (normalizedItem(snapshot.context.input) !== normalizedItem(item)) {
    return { state: 'failed', reason: 'the child run was started for a different item' }
  }
  if (snapshot.status === 'success') {
    const parsed = pusharyAnswerSchema.safeParse(snapshot.result)
    if (parsed.success) return { state: 'settled', answer: parsed.data }
    return { state: 'failed', reason: 'the child run finished without an answer' }
  }
  if (snapshot.status === 'canceled') {
    // A canceled item (its review went stale, or an operator canceled it) is
    // settled as not approved: fail closed, and the other items go on.
    return { state: 'settled', answer: { status: 'cancelled', value: null, approved: false } }
  }
  if (snapshot.status === 'failed' || snapshot.status === 'tripwire') {
    return { state: 'failed', reason: `the child run is ${snapshot.status}` }
  }
  return { state: 'open' }
}

/**
 * A child whose review ended `stale` never resumes, so its run would keep
 * the parent waiting forever: cancel it (only while it is still suspended),
 * which settles the item as not approved. `true` when the child is now ended.
 */
async function endStaleChild(
  mastra: Mastra,
  store: PusharyReviewStore,
  childWorkflowId: string,
  childRunId: string,
  snapshot: RunSnapshotView | null,
): Promise<boolean> {
  if (snapshot?.status !== 'suspended') return false
  for (const label of Object.keys(snapshot.resumeLabels)) {
    const review = await store.get(label).catch(() => null)
    if (review?.state !== 'stale') continue
    const workflows = await mastra.getStorage()?.getStore('workflows')
    await workflows?.updateWorkflowState({
      workflowName: childWorkflowId,
      runId: childRunId,
      opts: { status: 'canceled', expectedStatus: 'suspended' } as never,
    })
    return (await loadRunSnapshot(mastra, childWorkflowId, childRunId))?.status === 'canceled'
  }
  return false
}

/**
 * Reads children from `from` on; the index of the first one still open
 * (after ending it when its review went stale), or `null` when every child
 * from there on has settled or failed.
 */
export async function firstOpenChild(
  input: { mastra: Mastra; store: PusharyReviewStore; parent: BatchParentRef },
  batch: { childWorkflowId: string; count: number; items: readonly unknown[] },
  from: number,
): Promise<number | null> {
  const { mastra, store, parent } = input
  for (let index = from; index < batch.count; index++) {
    const item = batch.items[index]
    const childRunId = batchChildRunId(parent, index, item)
    const childSnapshot = await loadRunSnapshot(mastra, batch.childWorkflowId, childRunId)
    const child = childState(childSnapshot, item)
    if (
      child.state === 'open' &&
      !(await endStaleChild(mastra, store, batch.childWorkflowId, childRunId, childSnapshot))
    ) {
      return index
    }
  }
  return null
}
