/**
 * Several approvers: which member's decision holds the set's permit. The
 * permit step spends one permit, on the set's decisive approval (the last of
 * `settledBy`, `steps/permit-approver-set.ts`), and the store keeps it beside
 * that member's review. The review a resume or `recover` ends may be another
 * member's (the one whose resume read every answer, or any member recovered
 * first), so the evidence of what the action did is read from the holder.
 */
import type { PusharyClient } from '../pushary/client.js'
import type { PusharyWorkflowReview } from '../store/review-schema.js'
import type { PusharyReviewStore } from '../store/review-store.js'
import { settledSetOf } from './approver-set-endings.js'
import { type PermitEvidence, readPermitEvidence } from './permit-evidence.js'

/** The parts of a workflow review that locate its set's permit. */
export type PermitSubject = Pick<PusharyWorkflowReview, 'decisionId' | 'stepId' | 'approverSet'>

/**
 * The decision whose permit the store records for this review's action:
 * its own; for a member of a set, else the set's decisive approval, else any
 * other member that holds one (members asked by an escalation are read from
 * the run's settled set). `null` when no permit is recorded (or the store
 * records none).
 *
 * @example
 * const holder = await permitHolderOf(context.store, review, snapshot?.context)
 * if (holder) evidence = await readPermitEvidence(context.client, context.store, holder)
 */
export async function permitHolderOf(
  store: object,
  review: PermitSubject,
  steps: unknown,
): Promise<string | null> {
  const permitOf = (store as Partial<PusharyReviewStore>).permitOf
  if (typeof permitOf !== 'function') return null
  const holds = async (decisionId: string) => (await permitOf.call(store, decisionId)) !== null
  if (await holds(review.decisionId)) return review.decisionId
  if (!review.approverSet) return null
  const set = settledSetOf(steps, review.stepId)
  // A set's permit is only ever spent on its decisive approval (the last of
  // settledBy, steps/permit-approver-set.ts); without the set's output, any
  // member this review knows may hold it.
  const candidates = new Set(set ? set.settledBy.slice(-1) : review.approverSet.decisionIds)
  candidates.delete(review.decisionId)
  for (const decisionId of candidates) if (await holds(decisionId)) return decisionId
  return null
}

/**
 * The permit evidence behind a review ({@link readPermitEvidence}), read from
 * the member that holds the set's permit; the reason names that decision
 * when it is another member's. `none` when no permit is recorded.
 *
 * @example
 * const evidence = await readHeldPermitEvidence(context.client, context.store, review, snapshot?.context)
 */
export async function readHeldPermitEvidence(
  client: Pick<PusharyClient, 'consumeAuthorization' | 'recordReceipt'>,
  store: object,
  review: PermitSubject,
  steps: unknown,
): Promise<PermitEvidence> {
  const holder = await permitHolderOf(store, review, steps)
  if (holder === null) return { kind: 'none' }
  const evidence = await readPermitEvidence(client, store as Pick<PusharyReviewStore, 'permitOf'>, holder)
  if (holder === review.decisionId || evidence.kind === 'none') return evidence
  return {
    ...evidence,
    reason: `${evidence.reason} (the permit of decision ${holder}, the approval that settled the set)`,
  }
}
