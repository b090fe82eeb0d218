/**
 * The shape of the operator's numbers (`readPusharyReviewStats`) and how the
 * aggregates a database returns become it. Apart from the store calls so the
 * store contract can name the result without an import cycle.
 */
import {
  nextReviewState,
  REVIEW_EVENTS,
  REVIEW_STATES,
  type ReviewEventType,
  type ReviewState,
} from '../machines/review-lifecycle.js'
import { type PusharyActionOutcome, pusharyActionOutcomeSchema } from './review-schema.js'

/** The lifecycle events that end a review (`completed`, `stale`, `uncertain`), read off the machine. */
export const ENDING_EVENTS: readonly ReviewEventType[] = REVIEW_EVENTS.filter((event) =>
  REVIEW_STATES.some((state) => {
    const to = nextReviewState(state, event)
    return to === 'completed' || to === 'stale' || to === 'uncertain'
  }),
)

/** The events that end a review by a resume (not by an operator): what answered-to-resumed measures. */
export const RESUME_ENDING_EVENTS: readonly ReviewEventType[] = ENDING_EVENTS.filter(
  (event) => !event.startsWith('OPERATOR_'),
)

/**
 * Reviews in one state now, and how long the longest-waiting one has been in it.
 *
 * @example
 * const { count, oldestAgeMs }: PusharyStateStats = stats.states.uncertain
 */
export interface PusharyStateStats {
  readonly count: number
  /** When the review longest in this state entered it; `null` when none is. */
  readonly oldestSince: string | null
  /** `now - oldestSince` in ms (never below 0); `null` when none is. */
  readonly oldestAgeMs: number | null
}

/**
 * Median, 95th percentile (nearest rank) and maximum of a set of durations in ms;
 * every value `null` when `count` is 0.
 *
 * @example
 * if ((stats.answeredToResumed.p95Ms ?? 0) > 60_000) alert('resumes lag answers')
 */
export interface PusharyLatencyStats {
  readonly count: number
  readonly medianMs: number | null
  readonly p95Ms: number | null
  readonly maxMs: number | null
}

/**
 * What `readPusharyReviewStats` returns. Counts of the present (`states`,
 * `pending`, `uncertain`, `misconfigured`) are taken at `now`; the window
 * counts (`answeredToResumed`, `endings`, `actions`, `callbacksReceived`)
 * cover `since` to `now`.
 *
 * @example
 * const stats: PusharyReviewStats = await readPusharyReviewStats(store)
 * gauge('pushary_pending', stats.pending.count)
 */
export interface PusharyReviewStats {
  readonly now: string
  readonly since: string
  /** Every lifecycle state, with its count and oldest review. */
  readonly states: Readonly<Record<ReviewState, PusharyStateStats>>
  readonly pending: PusharyStateStats & {
    /**
     * Pending reviews whose answer a resume already read (callback or
     * reconcile) but that are not resumed: a worker that cannot resume them,
     * a step that suspended again. Unanswered pending reviews are waiting on
     * a person; these are waiting on you.
     */
    readonly answered: number
    /** Age of the oldest such answer (`now - answeredAt`), `null` when none. */
    readonly oldestAnsweredAgeMs: number | null
  }
  /** Reviews parked `uncertain` now: each needs an operator (`reviews show`, then `reviews recover`). */
  readonly uncertain: number
  /**
   * Pending reviews that a worker's last attempt could not resume because of
   * its configuration (the dispatcher's `misconfigured`), by the missing
   * capability (`workflow`, `agent`, `tool`, `storage`, ...).
   */
  readonly misconfigured: { readonly count: number; readonly byGap: Readonly<Record<string, number>> }
  /**
   * From the service's answer time to the resume that ended the review
   * (`RESUMED`, `STALE_DETECTED`, `FAILED_AFTER_CLAIM`), for resumes that
   * ended in the window.
   */
  readonly answeredToResumed: PusharyLatencyStats
  /** Reviews that ended in the window, by the state they ended in and by the lifecycle event that ended them. */
  readonly endings: {
    readonly completed: number
    readonly stale: number
    readonly uncertain: number
    readonly byEvent: Readonly<Partial<Record<ReviewEventType, number>>>
  }
  /** Action outcomes recorded in the window (what the approved actions did). */
  readonly actions: Readonly<Record<PusharyActionOutcome, number>>
  /** Signed callbacks the dispatcher recorded in the window. */
  readonly callbacksReceived: number
}

/** The aggregates one database answers; the store core shapes them into {@link PusharyReviewStats}. */
export interface RawReviewStats {
  readonly states: readonly { state: string; count: number; oldest: string | null }[]
  readonly answered: { count: number; oldest: string | null }
  readonly misconfigured: readonly { gap: string; count: number }[]
  readonly latency: PusharyLatencyStats
  readonly endings: readonly { state: string; event: string | null; count: number }[]
  readonly actions: readonly { outcome: string; count: number }[]
  readonly receipts: number
}

const ageMs = (now: string, since: string | null): number | null =>
  since === null ? null : Math.max(0, Date.parse(now) - Date.parse(since))

/**
 * Shapes the database's aggregates. Exported for the store core and tests.
 *
 * @example
 * const stats = shapeReviewStats(await driver.selectStats(since, now), since, now)
 */
export function shapeReviewStats(raw: RawReviewStats, since: string, now: string): PusharyReviewStats {
  const states = {} as Record<ReviewState, PusharyStateStats>
  for (const state of REVIEW_STATES) {
    const row = raw.states.find((found) => found.state === state)
    const oldestSince = row?.oldest ?? null
    states[state] = { count: row?.count ?? 0, oldestSince, oldestAgeMs: ageMs(now, oldestSince) }
  }
  const byGap: Record<string, number> = {}
  for (const { gap, count } of raw.misconfigured) byGap[gap] = count
  const byEvent: Partial<Record<ReviewEventType, number>> = {}
  for (const event of ENDING_EVENTS) byEvent[event] = 0
  const ended = { completed: 0, stale: 0, uncertain: 0 }
  for (const { state, event, count } of raw.endings) {
    if (state === 'completed' || state === 'stale' || state === 'uncertain') ended[state] += count
    if (event !== null && (ENDING_EVENTS as readonly string[]).includes(event)) {
      byEvent[event as ReviewEventType] = (byEvent[event as ReviewEventType] ?? 0) + count
    }
  }
  const actions = {} as Record<PusharyActionOutcome, number>
  for (const outcome of pusharyActionOutcomeSchema.options) {
    actions[outcome] = raw.actions.find((found) => found.outcome === outcome)?.count ?? 0
  }
  return {
    now,
    since,
    states,
    pending: {
      ...states.pending,
      answered: raw.answered.count,
      oldestAnsweredAgeMs: ageMs(now, raw.answered.oldest),
    },
    uncertain: states.uncertain.count,
    misconfigured: { count: raw.misconfigured.reduce((sum, row) => sum + row.count, 0), byGap },
    answeredToResumed: raw.latency,
    endings: { ...ended, byEvent },
    actions,
    callbacksReceived: raw.receipts,
  }
}
