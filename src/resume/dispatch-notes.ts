/**
 * What the dispatcher notes about each result, besides returning it: the
 * `resumed` info line for a resume that ended a review, and the
 * configuration gap of a `misconfigured` attempt in the review store (the
 * operator's numbers count pending reviews a worker could not resume).
 * Neither may change the result: a note that cannot be written is logged.
 */
import type { Mastra } from '@mastra/core/mastra'
import { logResumed } from '../steps/approval-log.js'
import type { PusharyReviewStore } from '../store/review-store.js'
import type { PusharyDispatchResult } from './dispatch-types.js'
import { errorMessage } from './resume-error.js'

/** The review state a result leaves behind, for the results that ended it here. */
function endedAs(result: EndingResult): string | null {
  switch (result.status) {
    case 'resumed':
      return 'completed'
    case 'duplicate':
      // Completed by this call from the evidence (a direct resume, a recovery).
      return result.reason === undefined ? null : 'completed'
    case 'stale':
    case 'uncertain':
      return result.status
    default:
      return null
  }
}

/**
 * Notes one dispatch result (see the module comment). A replay that found the
 * review already settled logs nothing: it changed nothing.
 *
 * @example
 * await noteDispatchResult(mastra, store, result)
 */
export async function noteDispatchResult(
  mastra: Mastra,
  store: PusharyReviewStore,
  result: PusharyDispatchResult,
): Promise<void> {
  if (result.status === 'misconfigured') {
    if (typeof store.recordMisconfigured !== 'function') return
    try {
      await store.recordMisconfigured(result.decisionId, result.missing)
    } catch (error) {
      try {
        mastra
          .getLogger()
          ?.warn(
            `[pushary] could not note the misconfigured attempt on ${result.decisionId} for the review numbers: ${errorMessage(error)}`,
          )
      } catch {
        // A logger that throws must not fail the dispatch.
      }
    }
    return
  }
  logDispatchEnding(mastra, result)
}

/** The part of a resume result the `resumed` line reads. */
type EndingResult = Pick<PusharyDispatchResult, 'status' | 'decisionId'> & {
  reason?: string | undefined
  reasonCode?: string | undefined
  actionOutcome?: string | undefined
}

/**
 * The `resumed` info line of a result that ended a review here (resumed,
 * stale, uncertain, completed from the evidence); nothing for one that
 * changed nothing (pending, busy, a replay of a settled review). The
 * dispatcher notes every result through {@link noteDispatchResult};
 * `resumePusharyAgentReview`, which has no dispatcher, calls this itself.
 *
 * @example
 * logDispatchEnding(mastra, await resumeAgentReview(input))
 */
export function logDispatchEnding(mastra: Mastra | undefined, result: EndingResult): void {
  const state = endedAs(result)
  if (state === null) return
  const reasonCode = result.reasonCode
  if (reasonCode?.startsWith('already_')) return
  logResumed(mastra, {
    decisionId: result.decisionId,
    status: result.status,
    state,
    reasonCode,
    reason: result.reason,
    actionOutcome: result.actionOutcome,
  })
}
