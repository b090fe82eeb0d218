import type { Mastra } from '@mastra/core/mastra'
import { z } from 'zod/v4'
import { canonicalJson, deterministicKey } from '../pushary/identity.js'
import { type PusharyAnswer, pusharyAnswerSchema } from '../pushary/question.js'
import { DEFAULT_CLAIM_LEASE_MS, whileHoldingClaim } from '../resume/claim-lease.js'
import type { PusharyParentOutcome } from '../resume/dispatch-types.js'
import { isPusharyResumeError } from '../resume/resume-error.js'
import { resumePusharyApproval } from '../resume/resume-guard.js'
import { loadRunSnapshot, type RunSnapshotView } from '../resume/run-position.js'
import { workflowCapabilityProblem } from '../resume/worker-capability.js'
import { pusharyApprovalStepInputSchema } from '../steps/approval-schemas.js'
import type { PusharyBatchParentReview } from '../store/review-schema.js'
import type { PusharyReviewStore } from '../store/review-store.js'

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

/**
 * Key of the claim on resuming one batch parent (its review's `decisionId`).
 *
 * @example
 * batchParentReviewId({ workflowId: 'refunds', runId: 'run-1', stepId: 'approve-all' }) // 'batch_…'
 */
export function batchParentReviewId(parent: BatchParentRef): string {
  return `batch_${deterministicKey(['batch-parent', parent.workflowId, parent.runId, parent.stepId])}`
}

const TERMINAL = ['success', 'failed', 'canceled', 'tripwire', 'bailed']
const ACTIVE = ['running', 'pending', 'waiting']

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

function suspendedBatch(snapshot: RunSnapshotView, stepId: string) {
  const step = snapshot.context[stepId] as { status?: string; suspendPayload?: unknown; payload?: unknown }
  if (step?.status !== 'suspended') return null
  const suspended = pusharyBatchSuspendSchema.safeParse(step.suspendPayload)
  if (!suspended.success || !Array.isArray(step.payload)) return null
  return { ...suspended.data, items: step.payload as unknown[] }
}

/**
 * Per Mastra instance, how many leading children of each waiting parent this
 * process has already seen settled. A settled (or failed) child never opens
 * again, so the next scan starts there: N children answered in any order cost
 * about 2N child reads in all instead of N·ln N. Another process starts from
 * zero, which is only slower. It decides nothing on its own: the parent's
 * resume pass reads every child again and suspends once more if one is open.
 */
const prefixes = new WeakMap<Mastra, Map<string, number>>()
const MAX_KNOWN_PARENTS = 10_000
function settledPrefixes(mastra: Mastra): Map<string, number> {
  let known = prefixes.get(mastra)
  if (!known) {
    known = new Map()
    prefixes.set(mastra, known)
  }
  return known
}

/**
 * Called after a child of a multi-item approval completed: when every
 * sibling has settled, claims the parent's own review and resumes the parent
 * once. The claim makes the parent resume exclusive across processes, and a
 * crash inside the parent's protected steps leaves that review `resuming`
 * for `dispatcher.recover`, exactly like a step's review. The scan starts
 * after the children this process already saw settled and stops at the
 * first open sibling.
 *
 * @example
 * await settleBatchParent({ mastra, store, parent: review.parent })
 */
export async function settleBatchParent(input: {
  mastra: Mastra
  store: PusharyReviewStore
  parent: BatchParentRef
  conflictTimeoutMs?: number
  claimLeaseMs?: number
}): Promise<PusharyParentOutcome> {
  const { mastra, store } = input
  const parent = {
    workflowId: input.parent.workflowId,
    runId: input.parent.runId,
    stepId: input.parent.stepId,
  }
  const where = { workflowId: parent.workflowId, runId: parent.runId }
  const snapshot = await loadRunSnapshot(mastra, parent.workflowId, parent.runId)
  if (!snapshot) return { ...where, status: 'not_batch' }
  if (TERMINAL.includes(snapshot.status)) return { ...where, status: 'already_settled' }
  const batch = suspendedBatch(snapshot, parent.stepId)
  if (!batch) {
    // The parent's first pass has not persisted its suspension yet, or
    // another process is resuming it; reconcile picks it up later.
    return { ...where, status: 'deferred', reason: 'the parent is not suspended on its batch step' }
  }
  const known = settledPrefixes(mastra)
  const key = `${parent.workflowId}\u0000${parent.runId}\u0000${parent.stepId}`
  for (let index = known.get(key) ?? 0; index < batch.count; index++) {
    const item = batch.items[index]
    const childRunId = batchChildRunId(parent, index, item)
    const childSnapshot = await loadRunSnapshot(mastra, batch.childWorkflowId, childRunId)
    const child = childState(childSnapshot, item)
    if (
      child.state === 'open' &&
      !(await endStaleChild(mastra, store, batch.childWorkflowId, childRunId, childSnapshot))
    ) {
      // Only a cache: bounded, so parents nobody answers never grow it without end.
      if (known.size >= MAX_KNOWN_PARENTS && !known.has(key)) known.clear()
      known.set(key, index)
      return { ...where, status: 'waiting', openIndex: index }
    }
  }
  known.delete(key)

  const reviewId = batchParentReviewId(parent)
  const review: PusharyBatchParentReview = {
    target: 'batch-parent',
    version: 1,
    ...parent,
    childWorkflowId: batch.childWorkflowId,
    count: batch.count,
    decisionId: reviewId,
    correlationId: reviewId,
    state: 'pending',
  }
  await store.save(review)
  return resumeBatchParent({ ...input, review })
}

/**
 * Claims a saved batch-parent review and resumes its run. Shared by the
 * settle path and by reconcile (a parent review left `pending`).
 *
 * @example
 * await resumeBatchParent({ mastra, store, review })
 */
export async function resumeBatchParent(input: {
  mastra: Mastra
  store: PusharyReviewStore
  review: PusharyBatchParentReview
  conflictTimeoutMs?: number
  claimLeaseMs?: number
}): Promise<PusharyParentOutcome> {
  const { store, review } = input
  const where = { workflowId: review.workflowId, runId: review.runId }
  const reviewId = review.decisionId
  // Before any claim: a worker without the child workflow (or on another
  // storage) would fail the parent run, and with it every approved item.
  const problem = await workflowCapabilityProblem(input.mastra, review)
  if (problem) return { ...where, status: 'misconfigured', ...problem, reviewId }
  const snapshot = await loadRunSnapshot(input.mastra, review.workflowId, review.runId)
  if (snapshot && ACTIVE.includes(snapshot.status)) {
    // Not suspended yet: still fanning out (its claim was just released), or
    // killed before Mastra persisted the suspension. Claiming now would only
    // fail the resume; `dispatcher.recover` restarts a parent left like this.
    return {
      ...where,
      status: 'deferred',
      reason: `the parent run is ${snapshot.status}, not suspended on its batch step; if it was killed while fanning out, dispatcher.recover("${reviewId}") restarts it`,
    }
  }
  switch (await store.claim(reviewId, review.runId)) {
    case 'busy':
      return { ...where, status: 'deferred', reason: 'another resume of the parent run holds it' }
    case 'settled':
      return { ...where, status: 'already_settled' }
    case 'claimed':
      break
  }
  return whileHoldingClaim(store, review.decisionId, input.claimLeaseMs ?? DEFAULT_CLAIM_LEASE_MS, () =>
    resumeClaimedParent(input),
  )
}

async function resumeClaimedParent(input: {
  mastra: Mastra
  store: PusharyReviewStore
  review: PusharyBatchParentReview
  conflictTimeoutMs?: number
}): Promise<PusharyParentOutcome> {
  const { mastra, store, review } = input
  const where = { workflowId: review.workflowId, runId: review.runId }
  const reviewId = review.decisionId
  try {
    const outcome = await resumePusharyApproval({
      mastra,
      workflowId: review.workflowId,
      runId: review.runId,
      step: review.stepId,
      resumeData: { settled: true },
      ...(input.conflictTimeoutMs === undefined ? {} : { conflictTimeoutMs: input.conflictTimeoutMs }),
    })
    if (outcome.stillSuspended) {
      await store.finish(reviewId, 'pending', 'a child was still open; the parent suspended again')
      return { ...where, status: 'deferred', reason: 'the parent suspended again' }
    }
    if (outcome.result.status === 'failed') {
      // Never `completed` for a run that failed: its approved items may not
      // have run. The operator confirms what ran (`reviews show`).
      const cause = (outcome.result.error as { message?: string } | undefined)?.message
      const reason = `the parent run ended failed after the resume${cause ? ` (${cause})` : ''}; its approved items may not have run: check them, then reviews recover ${reviewId} completed|stale`
      await store.finish(reviewId, 'uncertain', reason)
      return { ...where, status: 'uncertain', reason, reviewId }
    }
    await store.finish(reviewId, 'completed')
    return { ...where, status: 'resumed', runStatus: outcome.result.status, reviewId }
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    if (isPusharyResumeError(error) && error.code !== 'invalid_resume_data') {
      // Refused before Mastra ran anything: nothing of ours ran; release the claim.
      const now = await loadRunSnapshot(mastra, review.workflowId, review.runId)
      if (now && TERMINAL.includes(now.status)) {
        await store.finish(reviewId, 'completed', `the parent run was already ${now.status}`)
        return { ...where, status: 'already_settled' }
      }
      await store.finish(reviewId, 'pending', reason)
      return { ...where, status: 'deferred', reason }
    }
    await store.finish(reviewId, 'uncertain', reason)
    return { ...where, status: 'uncertain', reason, reviewId }
  }
}
