/**
 * The SQLite statements of the operator's numbers (`review-stats.ts`): the
 * two notes the resume path keeps and the aggregates, each one statement
 * over indexes where the database has them, never rows into JavaScript.
 */
import type { Client, Transaction } from '@libsql/client'
import type { ReviewStatsDriver } from './review-stats.js'
import { RESUME_ENDING_EVENTS } from './review-stats-shape.js'

type Executor = Pick<Client, 'execute'> | Transaction

const inList = (values: readonly string[]) => `(${values.map((value) => `'${value}'`).join(', ')})`

// Nearest-rank percentiles over the window's latencies, in one pass: the
// k-th smallest value for k = ceil(p% of n), as PostgreSQL's statement too.
const LATENCY_SQL = `WITH ended AS (
    SELECT max(0, round((julianday(t.at) - julianday(r.answered_at)) * 86400000.0)) AS ms
    FROM pushary_review_transitions t JOIN pushary_reviews r ON r.decision_id = t.decision_id
    WHERE t.at >= ? AND t.at <= ? AND t.event IN ${inList(RESUME_ENDING_EVENTS)} AND r.answered_at IS NOT NULL
  ), ranked AS (
    SELECT ms, row_number() OVER (ORDER BY ms) AS k, count(*) OVER () AS total FROM ended
  )
  SELECT count(*) AS total,
    max(CASE WHEN k = (total * 50 + 99) / 100 THEN ms END) AS median,
    max(CASE WHEN k = (total * 95 + 99) / 100 THEN ms END) AS p95,
    max(ms) AS max_ms
  FROM ranked`

const num = (value: unknown): number => Number(value ?? 0)
const numOrNull = (value: unknown): number | null =>
  value === null || value === undefined ? null : Number(value)
const textOrNull = (value: unknown): string | null =>
  value === null || value === undefined ? null : String(value)

/**
 * The driver's stats statements over the store's read path (migrated, busy-retried).
 *
 * @example
 * const driver = { ...sqliteStatsStatements(read) }
 */
export function sqliteStatsStatements(
  read: <T>(body: (db: Executor) => Promise<T>) => Promise<T>,
): ReviewStatsDriver {
  return {
    updateAnswered: (decisionId, answeredAt) =>
      read(async (db) => {
        // The first answer time read is kept: a later resume reads the same decision.
        const set = await db.execute({
          sql: 'UPDATE pushary_reviews SET answered_at = ? WHERE decision_id = ? AND answered_at IS NULL',
          args: [answeredAt, decisionId],
        })
        if (set.rowsAffected === 1) return 'set'
        const found = await db.execute({
          sql: 'SELECT 1 FROM pushary_reviews WHERE decision_id = ?',
          args: [decisionId],
        })
        return found.rows.length === 0 ? 'missing' : 'kept'
      }),
    updateMisconfigured: (decisionId, gap, at) =>
      read(async (db) => {
        const set = await db.execute({
          sql: 'UPDATE pushary_reviews SET misconfigured = ?, misconfigured_at = ? WHERE decision_id = ?',
          args: [gap, at, decisionId],
        })
        return set.rowsAffected === 1
      }),
    selectStats: (since, now) =>
      read(async (db) => {
        const states = await db.execute(
          'SELECT state, count(*) AS n, min(state_changed_at) AS oldest FROM pushary_reviews GROUP BY state',
        )
        const answered = await db.execute(
          `SELECT count(answered_at) AS n, min(answered_at) AS oldest FROM pushary_reviews WHERE state = 'pending'`,
        )
        // A gap noted before the review last changed state (a reopen, a
        // release) was about an earlier attempt; only a newer one counts.
        const misconfigured = await db.execute(
          `SELECT misconfigured AS gap, count(*) AS n FROM pushary_reviews
           WHERE state = 'pending' AND misconfigured_at >= state_changed_at GROUP BY misconfigured`,
        )
        const latency = await db.execute({ sql: LATENCY_SQL, args: [since, now] })
        const endings = await db.execute({
          sql: `SELECT to_state, event, count(*) AS n FROM pushary_review_transitions
                WHERE at >= ? AND at <= ? AND from_state IS NOT NULL AND to_state IN ('completed', 'stale', 'uncertain')
                GROUP BY to_state, event`,
          args: [since, now],
        })
        const actions = await db.execute({
          sql: `WITH recorded AS (
                  SELECT json_extract(action, '$.outcome') AS outcome, json_extract(action, '$.at') AS at
                  FROM pushary_reviews WHERE action IS NOT NULL AND json_valid(action))
                SELECT outcome, count(*) AS n FROM recorded WHERE at >= ? AND at <= ? GROUP BY outcome`,
          args: [since, now],
        })
        const receipts = await db.execute({
          sql: 'SELECT count(*) AS n FROM pushary_review_receipts WHERE received_at >= ? AND received_at <= ?',
          args: [since, now],
        })
        const late = latency.rows[0]
        return {
          states: states.rows.map((row) => ({
            state: String(row.state),
            count: num(row.n),
            oldest: textOrNull(row.oldest),
          })),
          answered: { count: num(answered.rows[0]?.n), oldest: textOrNull(answered.rows[0]?.oldest) },
          misconfigured: misconfigured.rows.map((row) => ({ gap: String(row.gap), count: num(row.n) })),
          latency: {
            count: num(late?.total),
            medianMs: numOrNull(late?.median),
            p95Ms: numOrNull(late?.p95),
            maxMs: numOrNull(late?.max_ms),
          },
          endings: endings.rows.map((row) => ({
            state: String(row.to_state),
            event: textOrNull(row.event),
            count: num(row.n),
          })),
          actions: actions.rows.map((row) => ({ outcome: String(row.outcome), count: num(row.n) })),
          receipts: num(receipts.rows[0]?.n),
        }
      }),
  }
}
