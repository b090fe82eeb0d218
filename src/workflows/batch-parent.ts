import type { Mastra } from '@mastra/core/mastra'
import { z } from 'zod/v4'
import { canonicalJson, deterministicKey } from '../pushary/identity.js'
import { DEFAULT_CLAIM_LEASE_MS, whileHoldingClaim } from '../resume/claim-lease.js'
import type { PusharyParentOutcome } from '../resume/dispatch-types.js'
import { isPusharyResumeError } from '../resume/resume-error.js'
import { resumePusharyApproval } from '../resume/resume-guard.js'
import { loadRunSnapshot, type RunSnapshotView } from '../resume/run-position.js'
import { workflowCapabilityProblem } from '../resume/worker-capability.js'
import type { PusharyBatchParentReview } from '../store/review-schema.js'
import type { PusharyReviewStore } from '../store/review-store.js'
import { type BatchParentRef, firstOpenChild } from './batch-children.js'

export type { BatchParentRef } from './batch-children.js'

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

function suspendedBatch(snapshot: RunSnapshotView, stepId: string) {
  const step = snapshot.context[stepId] as { status?: string; suspendPayload?: unknown; payload?: unknown }
  if (step?.status !== 'suspended') return null
  const suspended = pusharyBatchSuspendSchema.safeParse(step.suspendPayload)
  if (!suspended.success || !Array.isArray(step.payload)) return null
  return { ...suspended.data, items: step.payload as unknown[] }
}

/**
 * What this process remembers of one waiting parent, per Mastra instance:
 * its batch as read from the parent's suspended snapshot, and how many
 * leading children it has already seen settled. A settled (or failed) child
 * never opens again, so the next scan starts there: N children answered in
 * any order cost about 2N child reads in all instead of N·ln N, and the
 * parent's own snapshot (which holds every item, so it grows with N) is read
 * once per scan that finds every child settled, not once per child. Another
 * process starts from nothing, which is only slower. It decides nothing on
 * its own: the settle path re-reads the parent before it claims it, and the
 * parent's resume pass reads every child again and suspends once more if one
 * is open.
 */
interface KnownParent {
  childWorkflowId: string
  items: readonly unknown[]
  count: number
  prefix: number
}
/** The waiting parents one Mastra instance remembers, with their items counted as they come and go. */
interface KnownParents {
  entries: Map<string, KnownParent>
  held: number
}
const remembered = new WeakMap<Mastra, KnownParents>()
/** Bound on the items remembered per Mastra instance (an item is a small object already in memory once). */
const MAX_KNOWN_ITEMS = 100_000
function knownParents(mastra: Mastra): KnownParents {
  let known = remembered.get(mastra)
  if (!known) {
    known = { entries: new Map(), held: 0 }
    remembered.set(mastra, known)
  }
  return known
}

function remember(known: KnownParents, key: string, entry: KnownParent): void {
  known.held += entry.count - (known.entries.get(key)?.count ?? 0)
  // Only a cache: bounded, so parents nobody answers never grow it without end.
  if (known.held > MAX_KNOWN_ITEMS) {
    known.entries.clear()
    known.held = entry.count
  }
  known.entries.set(key, entry)
}

function forget(known: KnownParents, key: string): void {
  known.held -= known.entries.get(key)?.count ?? 0
  known.entries.delete(key)
}

/** Same batch: the remembered one may be used for a parent whose snapshot shows `batch`. */
function sameBatch(entry: KnownParent, batch: { childWorkflowId: string; count: number; items: unknown[] }) {
  if (entry.childWorkflowId !== batch.childWorkflowId || entry.count !== batch.count) return false
  try {
    return canonicalJson(entry.items) === canonicalJson(batch.items)
  } catch {
    return false
  }
}

function parentKey(parent: BatchParentRef): string {
  return `${parent.workflowId}\u0000${parent.runId}\u0000${parent.stepId}`
}

type SuspendedBatch = NonNullable<ReturnType<typeof suspendedBatch>>

/**
 * Scans a parent's batch, read from its snapshot just now: from after the
 * children already seen settled when the remembered batch is this one, else
 * from item 0. The first open child's index (the batch is then remembered
 * waiting there), or `null` when every child is settled (forgotten).
 */
async function scanReadBatch(
  mastra: Mastra,
  store: PusharyReviewStore,
  parent: BatchParentRef,
  batch: SuspendedBatch,
): Promise<number | null> {
  const known = knownParents(mastra)
  const key = parentKey(parent)
  const seen = known.entries.get(key)
  const start = seen && sameBatch(seen, batch) ? seen.prefix : 0
  const open = await firstOpenChild({ mastra, store, parent }, batch, start)
  const { childWorkflowId, items, count } = batch
  if (open === null) forget(known, key)
  else remember(known, key, { childWorkflowId, items, count, prefix: open })
  return open
}

/**
 * Called after a child of a multi-item approval completed: when every
 * sibling has settled, claims the parent's own review and resumes the parent
 * once. The claim makes the parent resume exclusive across processes, and a
 * crash inside the parent's protected steps leaves that review `resuming`
 * for `dispatcher.recover`, exactly like a step's review. The scan starts
 * after the children this process already saw settled and stops at the
 * first open sibling; while one is open, a parent this process has already
 * read is not read again (`waiting` then reports the batch as this process
 * last read it suspended; only an operator's cancel ends a parent while an
 * item is open).
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
  /**
   * Only after a child finished (the dispatcher's path): scan with the batch
   * this process remembers before reading the parent. Reconcile and recovery
   * leave it off and always read the parent, so a remembered batch that went
   * out of date (a parent replaced under the same run ID) can never keep a
   * parent waiting past the next reconcile.
   */
  reuseKnownBatch?: boolean
}): Promise<PusharyParentOutcome> {
  const { mastra, store } = input
  const parent = {
    workflowId: input.parent.workflowId,
    runId: input.parent.runId,
    stepId: input.parent.stepId,
  }
  const where = { workflowId: parent.workflowId, runId: parent.runId }
  const known = knownParents(mastra)
  const key = parentKey(parent)
  const seen = known.entries.get(key)
  if (seen && input.reuseKnownBatch) {
    const open = await firstOpenChild({ mastra, store, parent }, seen, seen.prefix)
    // Either way the remembered batch is now known settled up to `open` (or all of it).
    remember(known, key, { ...seen, prefix: open ?? seen.count })
    if (open !== null) return { ...where, status: 'waiting', openIndex: open }
  }
  const snapshot = await loadRunSnapshot(mastra, parent.workflowId, parent.runId)
  const batch =
    snapshot && !TERMINAL.includes(snapshot.status) ? suspendedBatch(snapshot, parent.stepId) : null
  if (!batch) {
    forget(known, key)
    if (!snapshot) return { ...where, status: 'not_batch' }
    if (TERMINAL.includes(snapshot.status)) return { ...where, status: 'already_settled' }
    // The parent's first pass has not persisted its suspension yet, or
    // another process is resuming it; reconcile picks it up later.
    return { ...where, status: 'deferred', reason: 'the parent is not suspended on its batch step' }
  }
  // A settled child never opens again, so the remembered batch's settled
  // part is not read twice; any other batch is read from the start.
  const open = await scanReadBatch(mastra, store, parent, batch)
  if (open !== null) return { ...where, status: 'waiting', openIndex: open }

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
  /**
   * Reads the children before any claim and answers `waiting` while one is
   * open (the dispatcher's path for a pending parent review, so reconcile).
   * The parent's own resume pass decides the same way from the same child
   * reads, so resuming it then would only suspend it again, after a claim,
   * a Mastra resume that reads every child and a write of the whole batch.
   */
  waitForChildren?: boolean
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
  const batch = input.waitForChildren && snapshot ? suspendedBatch(snapshot, review.stepId) : null
  if (batch) {
    const parent = { workflowId: review.workflowId, runId: review.runId, stepId: review.stepId }
    const openIndex = await scanReadBatch(input.mastra, store, parent, batch)
    if (openIndex !== null) return { ...where, status: 'waiting', openIndex }
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
