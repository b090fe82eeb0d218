/**
 * SQLite's one-statement writes of a review's lifecycle. SQLite has no
 * data-modifying CTE, so one statement cannot both move a review and append
 * its history row the way PostgreSQL's claim does. Instead the history row
 * drives the move: a trigger applies every appended transition to its review
 * row, and each write is a single `INSERT … SELECT` whose `WHERE` is the
 * compare-and-set. A statement runs under the file's write lock and is
 * atomic, so the history row exists exactly when the review moved, in one
 * commit (one fsync) without `BEGIN IMMEDIATE`, a row read or a separate
 * update. Each returns the history row's time (`RETURNING at`): its row is
 * the answer, and a lease's time is the one SQLite wrote.
 *
 * Lease times (a claim, a takeover) are SQLite's own clock, read inside the
 * statement. Every process sharing the file runs on the host that holds it,
 * so they share that clock; it is the same rule as PostgreSQL's, where the
 * server's clock times every host's lease.
 */
import type { Client, Transaction } from '@libsql/client'
import type { ClaimStatement, ReviewStoreDriver, TransitionStatement } from './store-driver.js'

/** The states in which a review is active: at most one per run (partial unique index). */
export const ACTIVE = "('resuming', 'uncertain')"

/** SQLite's clock now, in the ISO form every stored time has (`Date.prototype.toISOString`). */
export const SQLITE_NOW = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"

/**
 * The trigger, created by {@link migrateTransitions}. A transition row with a
 * `from_state` moves its review to `to_state` (the `null -> pending` row a
 * save writes has none, and moves nothing), and applies what the row carries
 * beside the move: the action outcome of an ending (`action`) and the answer
 * time a claim noted (`answered_at`, the first one kept). So a claim or an
 * ending is still one statement, one commit, with its notes. Writes that
 * still set the state themselves before appending the row (the transaction
 * path, and processes of an earlier release sharing the file, whose own
 * trigger may be re-created beside this one) get the same values set twice,
 * which changes nothing; their rows carry no notes, which keeps what is there.
 */
const TRANSITION_TRIGGER = `CREATE TRIGGER IF NOT EXISTS pushary_review_transition_applies_v2
  AFTER INSERT ON pushary_review_transitions WHEN NEW.from_state IS NOT NULL
  BEGIN
    UPDATE pushary_reviews SET state = NEW.to_state, reason = NEW.reason, state_changed_at = NEW.at,
      action = coalesce(NEW.action, action), answered_at = coalesce(answered_at, NEW.answered_at)
    WHERE decision_id = NEW.decision_id;
  END`

/**
 * The history table's note columns (files written before them gain them) and
 * the trigger that applies them, replacing the earlier release's trigger.
 * Runs inside the migration's write transaction, after the review table's
 * own columns exist.
 *
 * @example
 * await migrateTransitions(tx)
 */
export async function migrateTransitions(tx: Pick<Transaction, 'execute'>): Promise<void> {
  const columns = await tx.execute('PRAGMA table_info(pushary_review_transitions)')
  for (const name of ['action', 'answered_at']) {
    if (!columns.rows.some((column) => column.name === name)) {
      await tx.execute(`ALTER TABLE pushary_review_transitions ADD COLUMN ${name} TEXT`)
    }
  }
  await tx.execute('DROP TRIGGER IF EXISTS pushary_review_transition_applies')
  await tx.execute(TRANSITION_TRIGGER)
}

const INSERT_TRANSITION =
  'INSERT INTO pushary_review_transitions (decision_id, from_state, to_state, event, reason, at, answered_at, action)'

const CLAIM_SQL = `${INSERT_TRANSITION}
  SELECT decision_id, ?, ?, 'CLAIM', ?, ${SQLITE_NOW}, ?, NULL FROM pushary_reviews
  WHERE decision_id = ? AND run_id = ? AND state = ?
    AND NOT EXISTS (SELECT 1 FROM pushary_reviews WHERE run_id = ? AND state IN ${ACTIVE})
  RETURNING at`

// A takeover's time: SQLite's clock, or a millisecond after the claim it
// took over when the clock has not passed it, so the old holder's
// compare-and-set on its time fails.
const LATER_THAN_SINCE = `max(${SQLITE_NOW}, strftime('%Y-%m-%dT%H:%M:%fZ', ?, '+0.001 seconds'))`

const transitionSql = new Map<string, string>()

/** The transition statement for `moves` (one `WHEN` per from-state), built once per shape. */
function transitionStatement(moves: number, since: boolean): string {
  const key = `${moves}:${since}`
  let sql = transitionSql.get(key)
  if (sql === undefined) {
    const cases = Array.from({ length: moves }, () => 'WHEN ? THEN ?').join(' ')
    const states = Array.from({ length: moves }, () => '?').join(', ')
    sql = `${INSERT_TRANSITION}
      SELECT decision_id, state, CASE state ${cases} END, ?, ?, ${since ? LATER_THAN_SINCE : '?'}, NULL, ?
      FROM pushary_reviews
      WHERE decision_id = ? AND state IN (${states})${since ? ' AND state_changed_at = ?' : ''}
      RETURNING at`
    transitionSql.set(key, sql)
  }
  return sql
}

/** Runs one statement on the store's connection, migrated and busy-retried under `operation`. */
export type SqliteStatementRunner = <T>(operation: string, body: (db: Client) => Promise<T>) => Promise<T>

/**
 * The driver's one-statement claim and transition over SQLite. When a write
 * moved nothing, the row as it is now (read with the driver's own
 * `selectReview`, after the write's turn on the connection) answers why.
 *
 * @example
 * const driver = { ...sqliteOneStatementWrites(statement, selectReview, toConflict) }
 */
export function sqliteOneStatementWrites(
  statement: SqliteStatementRunner,
  selectReview: ReviewStoreDriver['selectReview'],
  toConflict: (error: unknown) => unknown,
): Required<Pick<ReviewStoreDriver, 'claimInOneStatement' | 'transitionInOneStatement'>> {
  /** The time of the history row the statement inserted, or `null` when the compare-and-set failed. */
  const inserted = (operation: string, sql: string, args: (string | null)[]) =>
    statement(operation, async (db) => {
      try {
        const { rows } = await db.execute({ sql, args })
        return rows.length === 1 ? String(rows[0]?.at) : null
      } catch (error) {
        throw toConflict(error)
      }
    })
  return {
    async claimInOneStatement(claim: ClaimStatement) {
      const { from, to, reason, decisionId, runId, answeredAt } = claim
      const args = [from, to, reason, answeredAt, decisionId, runId, from, runId]
      const at = await inserted('claim', CLAIM_SQL, args)
      if (at !== null) return { runId, state: from, claimed: true as const, at }
      // Nothing moved: missing, another run's, settled, or held. A review
      // that was claimable and still is lost to the run's active review and
      // is `busy` either way, so a read after the write is enough.
      const row = await selectReview(decisionId)
      return row === null ? null : { runId: row.runId, state: row.state, claimed: false as const }
    },
    async transitionInOneStatement(move: TransitionStatement) {
      const args: (string | null)[] = []
      for (const { from, to } of move.moves) args.push(from, to)
      args.push(move.event, move.reason, move.since ?? move.at, move.action ?? null, move.decisionId)
      for (const { from } of move.moves) args.push(from)
      if (move.since !== undefined) args.push(move.since)
      const sql = transitionStatement(move.moves.length, move.since !== undefined)
      const at = await inserted(move.operation, sql, args)
      if (at !== null) return { moved: true as const, at }
      const row = await selectReview(move.decisionId)
      return row === null ? null : { moved: false as const, state: row.state }
    },
  }
}
