/**
 * What one agent resume reports, and the endings a claimed resume writes
 * (stale, released, settled by another resumer), each with the stable
 * `reasonCode` of its actual cause beside the text.
 */
import type { PusharyAnswer } from '../pushary/question.js'
import { finishWithOutcome, type KnownActionEnding } from '../resume/action-evidence.js'
import type { PusharySuspendedAgentRun } from '../resume/dispatch-types.js'
import { type PusharyReasonCode, settledResult } from '../resume/review-status.js'
import type { ApproverOutcome } from '../steps/approver-set.js'
import type { PusharyAgentReviewStore } from '../store/agent-review-store.js'
import type { PusharyActionOutcome, PusharyAgentReview } from '../store/review-schema.js'
import type { PusharyAgentReviewAction, ReviewRunState } from './agent-resume-causes.js'
import { agentRunEnding } from './tool-call-outcome.js'

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
      /** What happened to the approved action: `ran`, or `not_run` after a decline. */
      actionOutcome?: PusharyActionOutcome
      /**
       * Several approvers: every approver's answer (`externalId`, `decisionId`,
       * `status`, `approved`, `answeredAt`, `late`); `answer` is then the set's verdict.
       */
      approvers?: ApproverOutcome[]
      /** Several approvers: the decisions whose answers settled the set. */
      settledBy?: string[]
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
      /** What happened to the approved action, when the evidence said. */
      actionOutcome?: PusharyActionOutcome
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
      /** `refused` when the approved call never ran (its input was refused). */
      actionOutcome?: PusharyActionOutcome
    }
  | {
      status: 'uncertain'
      decisionId: string
      reason: string
      reasonCode: PusharyReasonCode
      output?: TOutput
      persistenceError?: string
      /** `failed` (the tool threw) or `unknown` (no evidence either way). */
      actionOutcome?: PusharyActionOutcome
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
 * Ends a claimed review from the evidence of its finished review run
 * (`agentRunEnding`): records the action outcome first, then the ending.
 *
 * @example
 * return endAgentReview(store, decisionId, agentRunEnding(review.kind, run.result), output)
 */
export async function endAgentReview<TOutput>(
  store: PusharyAgentReviewStore,
  decisionId: string,
  ending: KnownActionEnding,
  output?: TOutput,
): Promise<PusharyAgentResumeOutcome<TOutput>> {
  const reasonCode: PusharyReasonCode = ending.reasonCode ?? 'resume_failed'
  const described = { decisionId, reason: ending.reason, reasonCode, actionOutcome: ending.outcome }
  try {
    await finishWithOutcome(store, decisionId, ending.state, ending.reason, ending)
    if (ending.state === 'completed') return { status: 'duplicate', ...described }
    return ending.state === 'stale'
      ? { status: 'stale', ...described }
      : { status: 'uncertain', ...described, ...(output === undefined ? {} : { output }) }
  } catch (error) {
    const persistenceError = message(error)
    return ending.state === 'stale'
      ? { status: 'stale', ...described, persistenceError }
      : { status: 'uncertain', ...described, persistenceError }
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
        // What the other caller's resume did to the tool is in the run's result.
        const ending = agentRunEnding(run.kind, run.result)
        const reason = `${elsewhere}; it ${run.action ?? 'finished'}: ${ending.reason}`
        if (ending.state !== 'completed') {
          return await endAgentReview(store, decisionId, { ...ending, reason })
        }
        await finishWithOutcome(store, decisionId, 'completed', reason, { outcome: ending.outcome, reason })
        return {
          status: 'duplicate',
          decisionId,
          reason,
          reasonCode: 'resumed_elsewhere',
          ...(ending.outcome === null ? {} : { actionOutcome: ending.outcome }),
          ...(run.action ? { action: run.action } : {}),
        }
      }
      case 'counted':
        // Several approvers: a resume of this run already counted this
        // member's answer (its own, interrupted before it ended the review,
        // or another member's, which re-reads every member).
        return await endCounted(store, decisionId, run)
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
  return finishWaiting(store, decisionId, 'pending', reason, 'step_resuspended')
}

/** Ends the claim in `state` with nothing run; the result stays `pending` (the action still waits). */
async function finishWaiting(
  store: PusharyAgentReviewStore,
  decisionId: string,
  state: 'pending' | 'completed',
  reason: string,
  reasonCode: 'step_resuspended' | 'awaiting_approvers',
): Promise<PusharyAgentResumeOutcome<never>> {
  try {
    await store.finish(decisionId, state, reason)
    return { status: 'pending', decisionId, reason, reasonCode }
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

/**
 * Several approvers: the review run counted this member's answer and waits
 * on the others. Nothing ran, and this member's part is done: the review
 * ends `completed` and the result is `pending` (`awaiting_approvers`), since
 * the action itself still waits.
 *
 * @example
 * return endCounted(store, decisionId, { approvals: 1, required: 2 })
 */
export async function endCounted(
  store: PusharyAgentReviewStore,
  decisionId: string,
  set: { approvals: number; required: number },
): Promise<PusharyAgentResumeOutcome<never>> {
  const reason = `the answer was counted; the approvers' set waits on the others (${set.approvals} of ${set.required} approvals so far)`
  return finishWaiting(store, decisionId, 'completed', reason, 'awaiting_approvers')
}
