/**
 * What happened to the approved action, read from the evidence before the
 * run's status: a run that ended `success` only says its last step returned,
 * not that the protected action ran (a permit step ends the run `success`
 * with a refusal, a re-driven run meets its own spent permit). The order:
 * 1. the permit's receipt at the service, when the store records a permit
 *    and the run did not just finish under this resumer's eyes;
 * 2. the run's own output: a permit refusal names what became of the action;
 * 3. only then the run's status: `success` past an approval means the steps
 *    after the gate ran; a decline ran nothing; anything else is unknown.
 * Every ending the dispatcher and `recover` write for a workflow review is
 * derived here, so the two paths agree on the same evidence.
 */
import { isPusharyPermitRefused, type PusharyPermitRefused } from '../steps/permit-step.js'
import type { PusharyActionOutcome } from '../store/review-schema.js'
import type { PusharyReviewStore, ReviewFinishState } from '../store/review-store.js'
import { type PermitSubject, readHeldPermitEvidence } from './approver-set-permit.js'
import type { DispatchContext } from './review-kinds.js'
import type { PusharyReasonCode } from './review-status.js'

/**
 * The review state a body of evidence earns, with the action outcome and the
 * stable cause. `completed` only when the approved action ran (or nothing
 * was approved to run); `stale` when it provably never ran and never will;
 * `uncertain` when an operator must look.
 */
export type ActionEnding =
  | {
      state: 'completed' | 'stale' | 'uncertain'
      outcome: PusharyActionOutcome
      reason: string
      reasonCode?: PusharyReasonCode
    }
  /**
   * The answer was applied and the run goes on waiting elsewhere (a foreach
   * whose other items are still open): nothing past the approval ran yet, so
   * there is no action outcome to record; the resume that runs the rest
   * records it on its own review.
   */
  | { state: 'completed'; outcome: null; reason: string; reasonCode?: undefined }

/** An ending with an action outcome to record (every ending but a run that goes on). */
export type KnownActionEnding = Exclude<ActionEnding, { outcome: null }>

/** Run statuses after which the run still waits on other approvals: nothing past this one ran. */
const RUN_GOES_ON = new Set(['suspended', 'waiting', 'pending', 'running'])

/** What a run ended with, as the resume returned it or its snapshot kept it. */
export interface EndedRun {
  /** Whether the verified answer approved; `null` when the recoverer could not read it. */
  approved: boolean | null
  runStatus: string
  runResult: unknown
  /** The run's step results (a resume's `steps`, a snapshot's `context`): where a set's permit holder is named. */
  steps?: unknown
}

const RECOVER_HINT = 'confirm it, then reviews recover <decisionId> completed|stale'

/** A permit refusal in the run's output, as an ending. */
export function refusalEnding(refused: PusharyPermitRefused): KnownActionEnding {
  if (refused.refusal === 'already_consumed') {
    switch (refused.executionState) {
      case 'succeeded':
        return {
          state: 'completed',
          outcome: 'ran',
          reason: `the permit of decision ${refused.decisionId} was spent earlier and its receipt says the action succeeded; this run did not run it again`,
          reasonCode: 'permit_receipt',
        }
      case 'failed':
        return {
          state: 'uncertain',
          outcome: 'failed',
          reason: `the permit of decision ${refused.decisionId} was spent earlier and its receipt says the action failed; ${RECOVER_HINT}`,
          reasonCode: 'permit_receipt_failed',
        }
      default:
        return {
          state: 'uncertain',
          outcome: 'unknown',
          reason: `the permit of decision ${refused.decisionId} was spent earlier without a receipt (${refused.executionState ?? 'no execution state'}): the action may have started; ${RECOVER_HINT}`,
          reasonCode: 'permit_without_receipt',
        }
    }
  }
  return {
    state: 'stale',
    outcome: 'refused',
    reason: `the permit was refused (${refused.refusal}: ${refused.reason}); the action did not run`,
    reasonCode: 'permit_refused',
  }
}

/** The ending the run's status alone supports, once no receipt or refusal spoke. */
function statusEnding(run: EndedRun): ActionEnding {
  if (RUN_GOES_ON.has(run.runStatus)) {
    return {
      state: 'completed',
      outcome: null,
      reason: `the answer was applied; the run is ${run.runStatus} on other approvals before its later steps run`,
    }
  }
  if (run.runStatus === 'success') {
    if (run.approved === false) {
      return {
        state: 'completed',
        outcome: 'not_run',
        reason: 'the answer did not approve; the run finished without the action',
      }
    }
    if (run.approved === true) {
      return { state: 'completed', outcome: 'ran', reason: 'the run finished past the approval' }
    }
  }
  return {
    state: 'uncertain',
    outcome: 'unknown',
    reason: `the run ended ${run.runStatus} after the approval; which of its steps ran is unknown; ${RECOVER_HINT}`,
    reasonCode: 'action_unknown',
  }
}

/**
 * The ending of a run that finished after its approval, evidence first (see
 * the module comment). `probe` reads the permit's receipt at the service
 * (recovery, or a run that did not end `success`); a run this resumer just
 * watched finish `success` without a refusal already proves its permit step
 * recorded a `succeeded` receipt, so it is not asked again. For a member of
 * several approvers the permit is read where it was spent (the set's
 * decisive approval, `approver-set-permit.ts`), whichever member ends.
 *
 * @example
 * const ending = await endingOfRun(context, review, { approved: true, runStatus: 'success', runResult }, { probe: false })
 */
export async function endingOfRun(
  context: Pick<DispatchContext, 'client' | 'store'>,
  review: PermitSubject,
  run: EndedRun,
  options: { probe: boolean },
): Promise<ActionEnding> {
  const refused = isPusharyPermitRefused(run.runResult) ? run.runResult : null
  const watchedSuccess = run.runStatus === 'success' && refused === null && !options.probe
  if (!watchedSuccess) {
    const evidence = await readHeldPermitEvidence(context.client, context.store, review, run.steps)
    if (evidence.kind === 'receipt') {
      return evidence.outcome === 'succeeded'
        ? { state: 'completed', outcome: 'ran', reason: evidence.reason, reasonCode: 'permit_receipt' }
        : {
            state: 'uncertain',
            outcome: 'failed',
            reason: `${evidence.reason}; ${RECOVER_HINT}`,
            reasonCode: 'permit_receipt_failed',
          }
    }
    if (evidence.kind === 'started') {
      return {
        state: 'uncertain',
        outcome: 'unknown',
        reason: evidence.reason,
        reasonCode: 'permit_without_receipt',
      }
    }
  }
  if (refused) return refusalEnding(refused)
  return statusEnding(run)
}

/**
 * Ends a claimed review with its action outcome in the same commit
 * (`finish`'s `action`): the ending and the evidence behind it land
 * together or not at all. A store without `recordAction` (a user's own
 * four-operation store) gets the plain `finish`; so does an ending with no
 * action outcome (a run that goes on waiting elsewhere).
 *
 * @example
 * await finishWithOutcome(store, decisionId, 'completed', undefined, { outcome: 'ran', reason: 'the refund ran' })
 */
export function finishWithOutcome(
  store:
    | Pick<PusharyReviewStore, 'finish'>
    | { finish(id: string, state: ReviewFinishState, reason?: string): Promise<void> },
  decisionId: string,
  state: ReviewFinishState,
  reason: string | undefined,
  action: { outcome: PusharyActionOutcome | null; reason: string },
): Promise<void> {
  const full = typeof (store as Partial<PusharyReviewStore>).recordAction === 'function'
  if (!full || action.outcome === null) return store.finish(decisionId, state, reason)
  return (store as PusharyReviewStore).finish(decisionId, state, reason, {
    outcome: action.outcome,
    reason: action.reason.slice(0, 2000),
  })
}

/**
 * Records the action outcome beside the review, before its ending is
 * written, so a crash between the two leaves the evidence for `recover`.
 * A store without `recordAction` (a user's own) is skipped; a failing write
 * is returned, never thrown, so the ending is still attempted.
 *
 * @example
 * const failure = await recordActionOutcome(context.store, decisionId, ending)
 */
export async function recordActionOutcome(
  store: object,
  decisionId: string,
  action: { outcome: PusharyActionOutcome | null; reason: string },
): Promise<string | null> {
  const record = (store as Partial<PusharyReviewStore>).recordAction
  if (typeof record !== 'function' || action.outcome === null) return null
  try {
    await record.call(store, decisionId, { outcome: action.outcome, reason: action.reason.slice(0, 2000) })
    return null
  } catch (error) {
    return error instanceof Error ? error.message : String(error)
  }
}
