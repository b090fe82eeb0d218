import type { Mastra } from '@mastra/core/mastra'
import type { PusharyClient } from '../pushary/client.js'
import type { PusharyAnswer } from '../pushary/question.js'
import type {
  PusharyActionOutcome,
  PusharyAgentReview,
  PusharyWorkflowReview,
} from '../store/review-schema.js'
import type { PusharyReviewStore } from '../store/review-store.js'
import type { PusharyReasonCode } from './review-status.js'
import type { PusharyCapabilityGap, PusharyConfigurationReport } from './worker-capability.js'

/**
 * Result of trying to settle a multi-item parent after one child finished.
 * `uncertain` means the parent resume failed after its claim: its protected
 * steps may have run, and an operator resolves `reviewId` like any review.
 *
 * @example
 * if (outcome.status === 'waiting') console.log(outcome.runId, 'next open item', outcome.openIndex)
 */
export type PusharyParentOutcome = { workflowId?: string; runId?: string } & (
  | { status: 'resumed'; runStatus: string; reviewId: string }
  | { status: 'waiting'; openIndex: number }
  | { status: 'already_settled' }
  | { status: 'deferred'; reason: string }
  | { status: 'not_batch' }
  | { status: 'uncertain'; reason: string; reviewId: string }
  | { status: 'failed'; reason: string }
  /** This worker cannot resume the parent (a workflow missing, another storage): nothing was claimed. */
  | { status: 'misconfigured'; reason: string; reviewId: string; missing: PusharyCapabilityGap }
)

/**
 * One suspended tool call as `listSuspendedRuns` reports it.
 *
 * @example
 * const call: PusharySuspendedToolCall = { toolCallId: 'c1', toolName: 'issueRefund', args: {}, requiresApproval: true }
 */
export interface PusharySuspendedToolCall {
  toolCallId?: string | undefined
  toolName?: string | undefined
  args?: unknown
  requiresApproval: boolean
  suspendPayload?: unknown
}

/**
 * One suspended agent run as `listSuspendedRuns` reports it.
 *
 * @example
 * const { runs } = await agent.listSuspendedRuns({ resourceId: customer.id })
 * const run: PusharySuspendedAgentRun = runs[0]!
 */
export interface PusharySuspendedAgentRun {
  runId: string
  threadId?: string | undefined
  resourceId?: string | undefined
  toolCalls: PusharySuspendedToolCall[]
}

/**
 * Outcome of resuming one decision. Retry later on `unknown`, `busy`,
 * `pending`, `not_suspended_yet` and `misconfigured` (this process cannot
 * resume the run: fix its configuration; the review stays `pending`);
 * `recovery_needed` (a crash left the review claimed) needs `recover`;
 * `uncertain` needs an operator; every other status is final for this
 * decision. `duplicate` may carry the reason the review completed without
 * this call (another resumer, a verified direct resume, a recovery). `parent`
 * reports a multi-item parent's own resume claim.
 *
 * @example
 * switch (result.status) { case 'resumed': break; default: break }
 */
export type PusharyDispatchResult =
  | {
      status: 'resumed'
      decisionId: string
      workflowId: string
      runId: string
      answer: PusharyAnswer
      runStatus: string
      parent?: PusharyParentOutcome
      /** Set when `onResumed` threw; the review is still `completed`. */
      hookError?: string
      /** Agent reviews: the native generation, the run's new suspensions, a rediscovery failure. */
      agent?: { output: unknown; pending: PusharySuspendedAgentRun[]; discoveryError?: string }
      /** What happened to the approved action (`ran`, or `not_run` after a decline). */
      actionOutcome?: PusharyActionOutcome
      /** Set when recording the action outcome failed; the review is still `completed`. */
      persistenceError?: string
    }
  | { status: 'pending'; decisionId: string; reason?: string; reasonCode?: PusharyReasonCode }
  | { status: 'not_suspended_yet'; decisionId: string; runStatus: string }
  | { status: 'busy'; decisionId: string; reason?: string; reasonCode?: PusharyReasonCode }
  /**
   * A `resuming` claim whose holder stopped keeping it alive for a whole
   * claim lease (it crashed): retrying never helps; call `recover`.
   */
  | { status: 'recovery_needed'; decisionId: string; reason: string; reasonCode?: PusharyReasonCode }
  | {
      status: 'duplicate'
      decisionId: string
      reason?: string
      reasonCode?: PusharyReasonCode
      actionOutcome?: PusharyActionOutcome
    }
  /** This worker cannot resume the review (`missing` says what); it stays `pending`. */
  | { status: 'misconfigured'; decisionId: string; reason: string; missing: PusharyCapabilityGap }
  | { status: 'parent'; decisionId: string; parent: PusharyParentOutcome }
  | { status: 'unknown'; decisionId: string; reason: string; reasonCode?: PusharyReasonCode }
  | { status: 'mismatch'; decisionId: string; reason: string }
  | { status: 'invalid_answer'; decisionId: string; reason: string }
  | {
      status: 'stale'
      decisionId: string
      reason: string
      /** Agent reviews and settled reviews: the stable cause (`PusharyReasonCode`). */
      reasonCode?: PusharyReasonCode
      persistenceError?: string
      /** For a multi-item child: the parent settled with this item not approved. */
      parent?: PusharyParentOutcome
      /** What happened to the approved action (`refused`, `not_run`), when the evidence said. */
      actionOutcome?: PusharyActionOutcome
    }
  | {
      status: 'uncertain'
      decisionId: string
      reason: string
      reasonCode?: PusharyReasonCode
      persistenceError?: string
      /** What happened to the approved action (`failed`, `unknown`), when the evidence said. */
      actionOutcome?: PusharyActionOutcome
    }

/**
 * Statuses after which the same decision should be tried again later.
 *
 * @example
 * const retry = (RETRYABLE_DISPATCH_STATUSES as readonly string[]).includes(result.status)
 */
export const RETRYABLE_DISPATCH_STATUSES = [
  'unknown',
  'busy',
  'pending',
  'not_suspended_yet',
  'misconfigured',
] as const

/**
 * Collaborators of {@link createPusharyDispatcher}.
 *
 * @example
 * const options: PusharyDispatcherOptions = { mastra, client, store, webhookSecret: server.webhookSecret }
 */
export interface PusharyDispatcherOptions {
  mastra: Mastra
  client: PusharyClient
  store: PusharyReviewStore
  /**
   * Secret that signs callbacks; only `handleCallback` needs it. When the key
   * is given it must be a non-empty string (an unset environment variable is
   * refused when the dispatcher is built, not discovered as a 401 on every
   * callback). Omit it, or pass `false`, for a dispatcher that only
   * reconciles, resumes and recovers; its `handleCallback` answers 500
   * `webhook_secret_not_configured`.
   */
  webhookSecret?: string | false
  /**
   * Largest callback body `handleCallback` reads, in bytes (default 64 KiB).
   * A larger one is answered 413 before anything is parsed or verified.
   */
  callbackMaxBytes?: number
  now?: () => Date
  /** How long a resume waits for another resume of the same run; default 30 s. */
  conflictTimeoutMs?: number
  /**
   * The claim lease (default 30 s): a resumer keeps its claim alive five
   * times per lease; `recover` takes over a claim only after its time stopped
   * moving for a whole lease (its holder is gone), never a live one.
   */
  claimLeaseMs?: number
  /**
   * Called once per decision after its run was resumed and the review marked
   * `completed`, e.g. to continue an agent that delegated to the workflow.
   * A throw is reported as `hookError`; it never re-runs the resume.
   */
  onResumed?: (event: PusharyResumedEvent) => Promise<void> | void
  /**
   * Agent reviews: the business action's version now. A difference ends the
   * review `stale` without resuming. Default: the saved version is current.
   */
  agentActionVersion?: (review: PusharyAgentReview) => Promise<string> | string
}

/**
 * What `onResumed` receives.
 *
 * @example
 * const onResumed = ({ review, answer }: PusharyResumedEvent) => console.log(review.operationId, answer.approved)
 */
export interface PusharyResumedEvent {
  review: PusharyWorkflowReview
  answer: PusharyAnswer
  runStatus: string
  runResult: unknown
}

/**
 * Summary of one `reconcile` round.
 *
 * @example
 * const { resumed, results } = await dispatcher.reconcile({ limit: 100 })
 */
export interface PusharyReconcileReport {
  checked: number
  resumed: number
  results: (PusharyDispatchResult | { status: 'error'; decisionId: string; reason: string })[]
  /** Multi-item parents found suspended and settled this round (the fallback after a lost parent resume). */
  parents: PusharyParentOutcome[]
}

/**
 * The one resume path of the package: turns a verified answer into exactly
 * one resume of exactly one suspended step or foreach iteration.
 *
 * @example
 * const dispatcher = createPusharyDispatcher({ mastra, client, store, webhookSecret })
 * export const POST = (request: Request) => dispatcher.handleCallback(request)
 */
export interface PusharyDispatcher {
  /** Verify, persist the receipt, resume; 401 forged, 503 retry later, 200 otherwise. */
  handleCallback(request: Request): Promise<Response>
  /** Poll the service for pending reviews and resume the settled ones. */
  reconcile(options?: { limit?: number }): Promise<PusharyReconcileReport>
  /** Resume one decision from the service's current state (callback-free). */
  resumeDecision(decisionId: string): Promise<PusharyDispatchResult>
  /**
   * Operator path after a crash. Takes over a crash-left claim (one winner
   * across processes); restarts a run only when its approval step never
   * suspended or never returned, then applies the verified answer once; a run
   * whose approval completed before the crash is never restarted: the review
   * ends `uncertain` for the operator. Also recovers a decision whose review
   * was never saved, and a multi-item parent's resume (its `reviewId`).
   */
  recover(decisionId: string): Promise<PusharyDispatchResult>
  /**
   * Startup self-check: every `pending` review this worker could not resume,
   * and why (workflow, child or parent workflow, auto-restart, agent, tool,
   * storage, run), so a bad deploy is visible before any answer arrives.
   */
  checkConfiguration(): Promise<PusharyConfigurationReport>
}
