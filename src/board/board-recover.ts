/**
 * The board's recover action, in two steps: the form posts what the
 * operator chose and the page asks to confirm it; the confirmation runs
 * `recoverAsOperator`, the very function `pushary-mastra reviews recover`
 * runs, so the board refuses exactly what the command refuses (a claim
 * still kept alive; what the lifecycle forbids, from `store.recover`).
 * Both the recovery and every refusal are logged.
 */
import { recoverAsOperator } from '../resume/operator-recovery.js'
import type { SafeHtml } from '../server/reviewer/html.js'
import type { PusharyReview } from '../store/review-schema.js'
import type { ReviewRecoveryOutcome } from '../store/review-store.js'
import { isPusharyStoreError } from '../store/store-error.js'
import { type PageContext, renderConfirmPage } from './board-render.js'
import type { BoardConfig } from './board-session.js'

/** What the route answers. */
export type RecoverStep =
  | { status: 'confirm'; render: (page: PageContext) => SafeHtml }
  | { status: 'invalid'; httpStatus: 400 | 404 | 409; title: string; text: string; back: string }
  | { status: 'recovered' | 'refused'; notice: { text: string; refused: boolean } }

const OUTCOMES: readonly string[] = ['completed', 'stale', 'pending'] satisfies ReviewRecoveryOutcome[]

function field(form: Record<string, unknown>, name: string): string {
  const value = form[name]
  return typeof value === 'string' ? value : ''
}

/**
 * Handles a recover form (`confirmed: false`: answer with the confirm page)
 * or its confirmation (`confirmed: true`: recover, or say why not).
 *
 * @example
 * const step = await recoverFromForm(config, 'dec_1', await c.req.parseBody(), true)
 */
export async function recoverFromForm(
  config: BoardConfig,
  decisionId: string,
  form: Record<string, unknown>,
  confirmed: boolean,
): Promise<RecoverStep> {
  const back = `${config.basePath}/reviews/${encodeURIComponent(decisionId)}`
  const outcome = field(form, 'outcome')
  const reason = field(form, 'reason')
  if (!OUTCOMES.includes(outcome)) {
    return {
      status: 'invalid',
      httpStatus: 400,
      title: 'Choose an outcome',
      text: 'outcome: choose completed, stale or pending.',
      back,
    }
  }
  if (reason.trim() === '') {
    return {
      status: 'invalid',
      httpStatus: 400,
      title: 'A reason is required',
      text: 'reason: say why; it is kept in the history.',
      back,
    }
  }
  const review: PusharyReview | null = await config.store.get(decisionId)
  if (review === null) {
    return {
      status: 'invalid',
      httpStatus: 404,
      title: 'Not found',
      text: 'There is no review for this decision.',
      back: config.basePath,
    }
  }
  const chosen = outcome as ReviewRecoveryOutcome
  if (!confirmed) {
    return { status: 'confirm', render: (page) => renderConfirmPage(page, review, chosen, reason) }
  }
  // The confirmation named the state it was shown; a review that moved since is shown again, not changed.
  const expected = field(form, 'expectedState')
  if (expected !== review.state) {
    return {
      status: 'invalid',
      httpStatus: 409,
      title: 'The review changed',
      text: `You confirmed a change from ${expected || 'an unknown state'}, but the review is now ${review.state}. Nothing was changed; look at it again.`,
      back,
    }
  }
  const details = { decisionId, from: review.state, outcome: chosen, reason }
  try {
    const result = await recoverAsOperator(config.store, {
      decisionId,
      outcome: chosen,
      reason,
      leaseMs: config.claimLeaseMs,
      now: new Date(config.now()),
    })
    if (result.status === 'refused') {
      config.log('warn', `board: recovery of ${decisionId} refused (${result.reason})`, details)
      return { status: 'refused', notice: { text: `Recovery refused: ${result.message}`, refused: true } }
    }
    const last = result.transition
    config.log('info', `board: operator recovered ${decisionId}: ${last?.from} -> ${last?.to}`, {
      ...details,
      event: last?.event,
    })
    return {
      status: 'recovered',
      notice: {
        text: `Recovered: ${last?.from} → ${last?.to} (${last?.event}) "${last?.reason}"`,
        refused: false,
      },
    }
  } catch (error) {
    if (!isPusharyStoreError(error)) throw error
    config.log('warn', `board: recovery of ${decisionId} refused by the store (${error.code})`, details)
    return {
      status: 'refused',
      notice: { text: `Recovery refused (${error.code}): ${error.message}`, refused: true },
    }
  }
}
