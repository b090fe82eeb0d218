/**
 * What every part of the resume path shares (collaborators and timing), and the kinds of review it
 * resumes without owning them. A workflow step's review is resumed here; a
 * multi-item parent (the workflows room) and an agent review (the agents
 * room) register how they are resumed, settled and recovered, so the
 * dispatcher never imports the rooms that compose approvals.
 */
import type { Mastra } from '@mastra/core/mastra'
import type { PusharyClient } from '../pushary/client.js'
import type { PusharyAgentReview, PusharyBatchParentReview } from '../store/review-schema.js'
import type { PusharyReviewStore } from '../store/review-store.js'
import { DEFAULT_CLAIM_LEASE_MS } from './claim-lease.js'
import type {
  PusharyDispatcherOptions,
  PusharyDispatchResult,
  PusharyParentOutcome,
} from './dispatch-types.js'
import type { AgentCapabilityCheck } from './worker-capability.js'

/** Timing of a parent call: the resume conflict wait and the claim lease. */
interface ParentTiming {
  conflictTimeoutMs?: number
  claimLeaseMs?: number
}

/** How multi-item parents are resumed (the workflows room). */
export interface ParentReviewKind {
  /** Claims a saved `batch-parent` review and resumes its run. */
  resume(
    input: { mastra: Mastra; store: PusharyReviewStore; review: PusharyBatchParentReview } & ParentTiming,
  ): Promise<PusharyParentOutcome>
  /** After a child finished: resumes the parent once every sibling settled. */
  settle(
    input: {
      mastra: Mastra
      store: PusharyReviewStore
      parent: { workflowId: string; runId: string; stepId: string }
    } & ParentTiming,
  ): Promise<PusharyParentOutcome>
  /** Reconcile's fallback: settles every parent suspended on its batch step. */
  settleSuspended(
    input: { mastra: Mastra; store: PusharyReviewStore; limit?: number } & ParentTiming,
  ): Promise<PusharyParentOutcome[]>
  /** `dispatcher.recover` of a parent review. */
  recover(context: DispatchContext, review: PusharyBatchParentReview): Promise<PusharyDispatchResult>
}

/** How agent reviews are resumed (the agents room). */
export interface AgentReviewKind {
  /** What this worker lacks to resume the review, checked before any claim. */
  capabilityProblem: AgentCapabilityCheck
  /** The verified, claimed resume of one agent review. */
  resume(context: DispatchContext, decisionId: string): Promise<PusharyDispatchResult>
  /** `dispatcher.recover` of an agent review. */
  recover(context: DispatchContext, review: PusharyAgentReview): Promise<PusharyDispatchResult>
}

/** Every kind of review the resume path hands over to the room that owns it. */
export interface ReviewKinds {
  parent: ParentReviewKind
  agent: AgentReviewKind
}

/** What every part of the dispatcher shares. */
export interface DispatchContext {
  mastra: Mastra
  client: PusharyClient
  store: PusharyReviewStore
  options: PusharyDispatcherOptions
  kinds: ReviewKinds
}

/** The claim lease this dispatcher uses. */
export function claimLease(context: DispatchContext): number {
  return context.options.claimLeaseMs ?? DEFAULT_CLAIM_LEASE_MS
}

/** How long a resume waits out another resume of the same run, when configured. */
export function conflictOption(context: DispatchContext): { conflictTimeoutMs?: number } {
  const ms = context.options.conflictTimeoutMs
  return ms === undefined ? {} : { conflictTimeoutMs: ms }
}

/** Timing options of the multi-item parent calls: the resume conflict wait and the claim lease. */
export function parentOptions(context: DispatchContext): {
  conflictTimeoutMs?: number
  claimLeaseMs: number
} {
  return { ...conflictOption(context), claimLeaseMs: claimLease(context) }
}
