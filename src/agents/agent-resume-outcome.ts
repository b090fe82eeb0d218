/**
 * What one agent resume reports, and the endings a claimed resume writes
 * (stale, released, settled by another resumer), each with the stable
 * `reasonCode` of its actual cause beside the text.
 */
import type { PusharyAnswer } from '../pushary/question.js'
import type { PusharySuspendedAgentRun } from '../resume/dispatch-types.js'
import { type PusharyReasonCode, settledResult } from '../resume/review-status.js'
import type { PusharyAgentReviewStore } from '../store/agent-review-store.js'
import type { PusharyAgentReview } from '../store/review-schema.js'
import type { PusharyAgentReviewAction, ReviewRunState } from './agent-resume-causes.js'

/**
 * Outcome of resuming one agent review. Retry later on `unknown`, `busy` and
 * `pending`; `stale` means regenerate the action and open a new review;
 * `uncertain` needs an operator; `duplicate` was already done.
 *
 * @example
 * if (outcome.status === 'resumed') await saveAgentOutput(outcome.review.runId, outcome.output)
 */
export type PusharyAgentResumeOutcome<TOutput = unknown> =
  | {
      status: 'resumed'
      decisionId: string
      review: PusharyAgentReview
      answer: PusharyAnswer
      output: TOutput
      /** Suspensions of the same run after this resume; open reviews for them. */
      pending: PusharySuspendedAgentRun[]
      discoveryError?: string
    }
  | { status: 'pending' | 'unknown'; decisionId: string; reason?: string; reasonCode?: PusharyReasonCode }
  | {
      status: 'duplicate'
      decisionId: string
      reason: string
      reasonCode: PusharyReasonCode
      /**
       * What the resumer that got there first did (`resumed_elsewhere`: a
       * caller that does not share this store resumed the review's workflow
       * run), so a losing resolver reports the winner's outcome.
       */
      action?: PusharyAgentReviewAction
    }
  | {
      status: 'busy'
      decisionId: string
      reason: string
      reasonCode: PusharyReasonCode
      /**
       * Set when the review's claim holder stopped keeping it alive for a
       * whole claim lease (it crashed): retrying never helps; call
       * `dispatcher.recover(decisionId)`.
       */
      recoveryNeeded?: true
    }
  | {
      status: 'stale'
      decisionId: string
      reason: string
      reasonCode: PusharyReasonCode
      persistenceError?: string
    }
  | {
      status: 'uncertain'
      decisionId: string
      reason: string
      reasonCode: PusharyReasonCode
      output?: TOutput
      persistenceError?: string
    }

/**
 * Refusals before any claim (the public helper throws them as typed errors),
 * and a claim left by a crashed holder (the public helper reports it `busy`
 * with `recoveryNeeded`, the dispatcher `recovery_needed`).
 */
export type AgentResumeRefusal =
  | { status: 'mismatch' | 'invalid_answer'; decisionId: string; reason: string }
  | { status: 'recovery_needed'; decisionId: string; reason: string; reasonCode: 'holder_gone' }

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** Ends a claimed review `stale`: it never resumes; the action is regenerated and reviewed anew. */
export async function endStale(
  store: PusharyAgentReviewStore,
  decisionId: string,
  cause: { reason: string; reasonCode: PusharyReasonCode },
): Promise<PusharyAgentResumeOutcome<never>> {
  try {
    await store.finish(decisionId, 'stale', cause.reason)
    return { status: 'stale', decisionId, ...cause }
  } catch (error) {
    return { status: 'stale', decisionId, ...cause, persistenceError: message(error) }
  }
}

/**
 * The review's workflow run was resumed by a caller that does not share this
 * store (a store-less resolver racing this one): report what that caller
 * did, never a verdict this resume did not observe. A finished run settles
 * this store's claim `completed`; a run still resuming releases it (the
 * answer is settled by the run; a later resume reports its outcome).
 */
export async function resumedByAnother(
  store: PusharyAgentReviewStore,
  decisionId: string,
  run: Exclude<ReviewRunState, { state: 'waiting' }>,
): Promise<PusharyAgentResumeOutcome<never>> {
  const elsewhere = `review workflow run ${run.runId} was resumed by another caller that does not share this review store`
  try {
    switch (run.state) {
      case 'finished': {
        const reason = `${elsewhere}; it ${run.action ?? 'finished'}`
        await store.finish(decisionId, 'completed', reason)
        return {
          status: 'duplicate',
          decisionId,
          reason,
          reasonCode: 'resumed_elsewhere',
          ...(run.action ? { action: run.action } : {}),
        }
      }
      case 'resuming': {
        const reason = `${elsewhere}, which is resuming it now`
        await store.finish(decisionId, 'pending', reason)
        return { status: 'busy', decisionId, reason, reasonCode: 'review_run_resuming' }
      }
      case 'ended': {
        const reason = `review workflow run ${run.runId} is ${run.status}, not waiting on this decision`
        await store.finish(decisionId, 'uncertain', reason)
        return { status: 'uncertain', decisionId, reason, reasonCode: 'resume_failed' }
      }
      default: {
        const unreachable: never = run
        return unreachable
      }
    }
  } catch (error) {
    return {
      status: 'uncertain',
      decisionId,
      reason: `${elsewhere}; recording it failed`,
      reasonCode: 'release_failed',
      persistenceError: message(error),
    }
  }
}

/** The result of a claim that did not go to this resumer, named by what holds the review. */
export async function claimRefused(
  store: PusharyAgentReviewStore,
  review: PusharyAgentReview,
  claim: 'busy' | 'settled',
): Promise<PusharyAgentResumeOutcome<never>> {
  const decisionId = review.decisionId
  const now = (await store.get(decisionId))?.state
  if (claim === 'settled' || now === 'completed' || now === 'stale' || now === 'uncertain') {
    return settledResult(decisionId, now === 'stale' || now === 'uncertain' ? now : 'completed')
  }
  return now === 'resuming'
    ? {
        status: 'busy',
        decisionId,
        reason: "another resumer holds this review's claim",
        reasonCode: 'claim_held',
      }
    : {
        status: 'busy',
        decisionId,
        reason: `another review of run ${review.runId} is resuming or uncertain`,
        reasonCode: 'run_busy',
      }
}

/**
 * The approval step refused the answer on its own re-read (it could not read
 * the decision, or the service disagreed) and suspended again: the native
 * agent was never touched, so the claim is released (`NOT_APPLIED`) and the
 * answer is retried, instead of an `uncertain` nobody may retry.
 */
export async function releaseClaim(
  store: PusharyAgentReviewStore,
  decisionId: string,
): Promise<PusharyAgentResumeOutcome<never>> {
  const reason = 'the approval step is still suspended after the resume; nothing ran'
  try {
    await store.finish(decisionId, 'pending', reason)
    return { status: 'pending', decisionId, reason, reasonCode: 'step_resuspended' }
  } catch (error) {
    return {
      status: 'uncertain',
      decisionId,
      reason,
      reasonCode: 'release_failed',
      persistenceError: message(error),
    }
  }
}
