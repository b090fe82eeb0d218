/**
 * The PostgreSQL statements of the operator's numbers (`review-stats.ts`):
 * the two notes the resume path keeps and the aggregates, each one
 * statement, never rows into JavaScript. `s` is the quoted schema name.
 */
import type { ReviewStatsDriver } from './review-stats.js'
import { RESUME_ENDING_EVENTS } from './review-stats-shape.js'

type Query = (sql: string, args: unknown[]) => Promise<Record<string, unknown>[]>

const inList = (values: readonly string[]) => `(${values.map((value) => `'${value}'`).join(', ')})`

// Nearest-rank percentiles (the k-th smallest for k = ceil(p% of n)), the
// same definition as the SQLite statement, so both stores give one number.
const latencySql = (s: string) => `WITH ended AS (
    SELECT GREATEST(0, round((EXTRACT(EPOCH FROM (t.at::timestamptz - r.answered_at::timestamptz)) * 1000)::numeric))::float8 AS ms
    FROM ${s}.pushary_review_transitions t JOIN ${s}.pushary_reviews r ON r.decision_id = t.decision_id
    WHERE t.at >= $1 AND t.at <= $2 AND t.event IN ${inList(RESUME_ENDING_EVENTS)} AND r.answered_at IS NOT NULL
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
 * The driver's stats statements over the store's migrated query function.
 *
 * @example
 * const driver = { ...postgresStatsStatements(query, '"public"') }
 */
export function postgresStatsStatements(query: Query, s: string): ReviewStatsDriver {
  const latency = latencySql(s)
  return {
    async updateAnswered(decisionId, answeredAt) {
      // The first answer time read is kept: a later resume reads the same decision.
      const set = await query(
        `UPDATE ${s}.pushary_reviews SET answered_at = $1 WHERE decision_id = $2 AND answered_at IS NULL RETURNING 1`,
        [answeredAt, decisionId],
      )
      if (set.length === 1) return 'set'
      const found = await query(`SELECT 1 FROM ${s}.pushary_reviews WHERE decision_id = $1`, [decisionId])
      return found.length === 0 ? 'missing' : 'kept'
    },
    async updateMisconfigured(decisionId, gap, at) {
      const set = await query(
        `UPDATE ${s}.pushary_reviews SET misconfigured = $1, misconfigured_at = $2 WHERE decision_id = $3 RETURNING 1`,
        [gap, at, decisionId],
      )
      return set.length === 1
    },
    async selectStats(since, now) {
      const states = await query(
        `SELECT state, count(*) AS n, min(state_changed_at) AS oldest FROM ${s}.pushary_reviews GROUP BY state`,
        [],
      )
      const answered = await query(
        `SELECT count(answered_at) AS n, min(answered_at) AS oldest FROM ${s}.pushary_reviews WHERE state = 'pending'`,
        [],
      )
      // A gap noted before the review last changed state (a reopen, a
      // release) was about an earlier attempt; only a newer one counts.
      const misconfigured = await query(
        `SELECT misconfigured AS gap, count(*) AS n FROM ${s}.pushary_reviews
         WHERE state = 'pending' AND misconfigured_at >= state_changed_at GROUP BY misconfigured`,
        [],
      )
      const late = (await query(latency, [since, now]))[0]
      const endings = await query(
        `SELECT to_state, event, count(*) AS n FROM ${s}.pushary_review_transitions
         WHERE at >= $1 AND at <= $2 AND from_state IS NOT NULL AND to_state IN ('completed', 'stale', 'uncertain')
         GROUP BY to_state, event`,
        [since, now],
      )
      const actions = await query(
        `WITH recorded AS (
           SELECT action::jsonb ->> 'outcome' AS outcome, action::jsonb ->> 'at' AS at
           FROM ${s}.pushary_reviews WHERE action IS NOT NULL)
         SELECT outcome, count(*) AS n FROM recorded WHERE at >= $1 AND at <= $2 GROUP BY outcome`,
        [since, now],
      )
      const receipts = await query(
        `SELECT count(*) AS n FROM ${s}.pushary_review_receipts WHERE received_at >= $1 AND received_at <= $2`,
        [since, now],
      )
      return {
        states: states.map((row) => ({
          state: String(row.state),
          count: num(row.n),
          oldest: textOrNull(row.oldest),
        })),
        answered: { count: num(answered[0]?.n), oldest: textOrNull(answered[0]?.oldest) },
        misconfigured: misconfigured.map((row) => ({ gap: String(row.gap), count: num(row.n) })),
        latency: {
          count: num(late?.total),
          medianMs: numOrNull(late?.median),
          p95Ms: numOrNull(late?.p95),
          maxMs: numOrNull(late?.max_ms),
        },
        endings: endings.map((row) => ({
          state: String(row.to_state),
          event: textOrNull(row.event),
          count: num(row.n),
        })),
        actions: actions.map((row) => ({ outcome: String(row.outcome), count: num(row.n) })),
        receipts: num(receipts[0]?.n),
      }
    },
  }
}
