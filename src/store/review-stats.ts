/**
 * The numbers an operator alerts on, read from the review store with SQL
 * aggregates (never every row into JavaScript): reviews per state and the age
 * of the oldest in each, answered reviews still waiting for their resume,
 * misconfigured workers, answered-to-resumed latency, endings by lifecycle
 * event, action outcomes and callbacks received. Also the two notes the
 * resume path keeps for them (when a review was answered, and the last
 * configuration gap that kept a worker from resuming it).
 */
import { z } from 'zod/v4'
import { idSchema } from '../pushary/identity.js'
import { type PusharyReviewStats, type RawReviewStats, shapeReviewStats } from './review-stats-shape.js'
import type { PusharyReviewStore } from './review-store.js'
import { PusharyStoreError } from './store-error.js'

/** A database's half of the stats calls; part of every store driver. */
export interface ReviewStatsDriver {
  /** Sets the review's answer time unless one is set; `'missing'` when no review has this ID. */
  updateAnswered(decisionId: string, answeredAt: string): Promise<'set' | 'kept' | 'missing'>
  /** Records the capability gap of a worker's failed attempt; `false` when no review has this ID. */
  updateMisconfigured(decisionId: string, gap: string, at: string): Promise<boolean>
  /** The aggregates of {@link RawReviewStats} for the window `since`..`now` (ISO times). */
  selectStats(since: string, now: string): Promise<RawReviewStats>
}

type Open = <T>(operation: string, body: () => Promise<T>) => Promise<T>

const timeSchema = z.iso.datetime()
const gapSchema = z.string().min(1).max(200)

function checked<T>(schema: z.ZodType<T>, value: unknown, operation: string, field: string): T {
  const parsed = schema.safeParse(value)
  if (parsed.success) return parsed.data
  throw PusharyStoreError.fromZod(parsed.error, { operation, code: 'invalid_argument', fieldPrefix: field })
}

function notFound(operation: string, decisionId: string): PusharyStoreError {
  return new PusharyStoreError({
    code: 'not_found',
    operation,
    field: 'decisionId',
    message: `no review for decision ${JSON.stringify(decisionId)}`,
  })
}

/**
 * `recordAnswered`, `recordMisconfigured` and `stats` over a driver, inside the store's `open` guard.
 *
 * @example
 * const store = { ...statsCalls(driver, open, () => new Date()) }
 */
export function statsCalls(
  driver: ReviewStatsDriver,
  open: Open,
  now: () => Date,
): Pick<PusharyReviewStore, 'recordAnswered' | 'recordMisconfigured' | 'stats'> {
  return {
    recordAnswered: (decisionId, answeredAt) =>
      open('recordAnswered', async () => {
        const id = checked(idSchema, decisionId, 'recordAnswered', 'decisionId')
        const at = checked(timeSchema, answeredAt, 'recordAnswered', 'answeredAt')
        if ((await driver.updateAnswered(id, at)) === 'missing') throw notFound('recordAnswered', id)
      }),

    recordMisconfigured: (decisionId, gap) =>
      open('recordMisconfigured', async () => {
        const id = checked(idSchema, decisionId, 'recordMisconfigured', 'decisionId')
        const missing = checked(gapSchema, gap, 'recordMisconfigured', 'gap')
        if (!(await driver.updateMisconfigured(id, missing, now().toISOString()))) {
          throw notFound('recordMisconfigured', id)
        }
      }),

    stats: (window) =>
      open('stats', async () => {
        const since = checked(timeSchema, window?.since, 'stats', 'since')
        const at = checked(timeSchema, window?.now, 'stats', 'now')
        if (since > at) {
          throw new PusharyStoreError({
            code: 'invalid_argument',
            operation: 'stats',
            field: 'since',
            message: `since (${since}) is after now (${at})`,
          })
        }
        return shapeReviewStats(await driver.selectStats(since, at), since, at)
      }),
  }
}

/** The window of {@link readPusharyReviewStats} when `since` is not given: the last 24 hours. */
export const DEFAULT_STATS_WINDOW_MS = 24 * 60 * 60 * 1000

/**
 * Options of {@link readPusharyReviewStats}.
 *
 * @example
 * const options: PusharyReviewStatsOptions = { since: new Date(Date.now() - 3_600_000) }
 */
export interface PusharyReviewStatsOptions {
  /** The time ages are measured at and the window ends. Default: the current time. */
  readonly now?: Date
  /** Start of the window of latencies, endings, actions and callbacks. Default: 24 hours before `now`. */
  readonly since?: Date
}

function checkedDate(value: unknown, field: string): Date | undefined {
  if (value === undefined) return undefined
  if (value instanceof Date && !Number.isNaN(value.getTime())) return value
  throw new PusharyStoreError({
    code: 'invalid_argument',
    operation: 'readPusharyReviewStats',
    field,
    message: `${field} must be a valid Date`,
  })
}

/**
 * Reads the numbers an operator alerts on from a review store (SQLite or
 * PostgreSQL), each an SQL aggregate: pending reviews and the oldest one's
 * age, answered reviews not yet resumed, `uncertain` and `misconfigured`
 * counts, answered-to-resumed latency (median, p95, max), endings by reason
 * and action outcomes in the window, and callbacks received. Meant for the
 * app's own metrics endpoint; `pushary-mastra reviews stats` prints the same.
 * Bad options throw `PusharyStoreError('invalid_argument')` naming the field
 * before any query.
 *
 * @example
 * ```ts
 * app.get('/metrics/approvals', async (c) => {
 *   const stats = await readPusharyReviewStats(store, { since: new Date(Date.now() - 3_600_000) })
 *   return c.json({ pending: stats.pending.count, oldestPendingMs: stats.pending.oldestAgeMs, uncertain: stats.uncertain })
 * })
 * ```
 */
export async function readPusharyReviewStats(
  store: PusharyReviewStore,
  options: PusharyReviewStatsOptions = {},
): Promise<PusharyReviewStats> {
  if (typeof store?.stats !== 'function') {
    throw new PusharyStoreError({
      code: 'invalid_argument',
      operation: 'readPusharyReviewStats',
      field: 'store',
      message: 'store must be a review store (createSqliteReviewStore, createPostgresReviewStore)',
    })
  }
  if (typeof options !== 'object' || options === null) {
    throw new PusharyStoreError({
      code: 'invalid_argument',
      operation: 'readPusharyReviewStats',
      field: 'options',
      message: 'options must be { now?, since? }',
    })
  }
  const now = checkedDate(options.now, 'now') ?? new Date()
  const since = checkedDate(options.since, 'since') ?? new Date(now.getTime() - DEFAULT_STATS_WINDOW_MS)
  if (since.getTime() > now.getTime()) {
    throw new PusharyStoreError({
      code: 'invalid_argument',
      operation: 'readPusharyReviewStats',
      field: 'since',
      message: `since (${since.toISOString()}) is after now (${now.toISOString()})`,
    })
  }
  return store.stats({ since: since.toISOString(), now: now.toISOString() })
}
