/**
 * SQLite's one-statement writes of a review's lifecycle. SQLite has no
 * data-modifying CTE, so one statement cannot both move a review and append
 * its history row the way PostgreSQL's claim does. Instead the history row
 * drives the move: a trigger applies every appended transition to its review
 * row, and each write is a single `INSERT … SELECT` whose `WHERE` is the
 * compare-and-set. A statement runs under the file's write lock and is
 * atomic, so the history row exists exactly when the review moved, in one
 * commit (one fsync) without `BEGIN IMMEDIATE`, a row read or a separate
 * update.
 */
import type { Client } from '@libsql/client'
import type { ClaimStatement, ReviewStoreDriver, TransitionStatement } from './store-driver.js'
import { storedReviewRow } from './store-rows.js'

/** The states in which a review is active: at most one per run (partial unique index). */
export const ACTIVE = "('resuming', 'uncertain')"

/**
 * The trigger, created with the tables. A transition row with a `from_state`
 * moves its review to `to_state` (the `null -> pending` row a save writes
 * has none, and moves nothing). Writes that still set the state themselves
 * before appending the row (the transaction path, and processes of an
 * earlier release sharing the file) get the same values set twice, which
 * changes nothing.
 */
export const TRANSITION_TRIGGER = `CREATE TRIGGER IF NOT EXISTS pushary_review_transition_applies
  AFTER INSERT ON pushary_review_transitions WHEN NEW.from_state IS NOT NULL
  BEGIN
    UPDATE pushary_reviews SET state = NEW.to_state, reason = NEW.reason, state_changed_at = NEW.at
    WHERE decision_id = NEW.decision_id;
  END`

const INSERT_TRANSITION =
  'INSERT INTO pushary_review_transitions (decision_id, from_state, to_state, event, reason, at)'

const CLAIM_SQL = `${INSERT_TRANSITION}
  SELECT decision_id, ?, ?, 'CLAIM', ?, ? FROM pushary_reviews
  WHERE decision_id = ? AND run_id = ? AND state = ?
    AND NOT EXISTS (SELECT 1 FROM pushary_reviews WHERE run_id = ? AND state IN ${ACTIVE})`

const transitionSql = new Map<string, string>()

/** The transition statement for `moves` (one `WHEN` per from-state), built once per shape. */
function transitionStatement(moves: number, since: boolean): string {
  const key = `${moves}:${since}`
  let sql = transitionSql.get(key)
  if (sql === undefined) {
    const cases = Array.from({ length: moves }, () => 'WHEN ? THEN ?').join(' ')
    const states = Array.from({ length: moves }, () => '?').join(', ')
    sql = `${INSERT_TRANSITION}
      SELECT decision_id, state, CASE state ${cases} END, ?, ?, ? FROM pushary_reviews
      WHERE decision_id = ? AND state IN (${states})${since ? ' AND state_changed_at = ?' : ''}`
    transitionSql.set(key, sql)
  }
  return sql
}

/** Runs one statement on the store's connection, migrated and busy-retried under `operation`. */
export type SqliteStatementRunner = <T>(operation: string, body: (db: Client) => Promise<T>) => Promise<T>

/** The row's run and state, read after a write that moved nothing, for the caller's answer. */
async function runAndState(db: Client, decisionId: string) {
  const result = await db.execute({
    sql: 'SELECT decision_id, run_id, binding, state, state_changed_at FROM pushary_reviews WHERE decision_id = ?',
    args: [decisionId],
  })
  const row = result.rows[0]
  return row === undefined ? null : storedReviewRow(row)
}

/**
 * The driver's one-statement claim and transition over SQLite.
 *
 * @example
 * const driver = { ...sqliteOneStatementWrites(statement, toConflict) }
 */
export function sqliteOneStatementWrites(
  statement: SqliteStatementRunner,
  toConflict: (error: unknown) => unknown,
): Required<Pick<ReviewStoreDriver, 'claimInOneStatement' | 'transitionInOneStatement'>> {
  return {
    claimInOneStatement: (claim: ClaimStatement) =>
      statement('claim', async (db) => {
        let moved: number
        try {
          const result = await db.execute({
            sql: CLAIM_SQL,
            args: [
              claim.from,
              claim.to,
              claim.reason,
              claim.at,
              claim.decisionId,
              claim.runId,
              claim.from,
              claim.runId,
            ],
          })
          moved = result.rowsAffected
        } catch (error) {
          throw toConflict(error)
        }
        if (moved === 1) return { runId: claim.runId, state: claim.from, claimed: true }
        // Nothing moved: the row as it is now answers why (missing, another
        // run's, settled, or held); a read after the write is enough, since a
        // review that was claimable and is still claimable lost to the run's
        // active review and is `busy` either way.
        const row = await runAndState(db, claim.decisionId)
        return row === null ? null : { runId: row.runId, state: row.state, claimed: false }
      }),
    transitionInOneStatement: (move: TransitionStatement) =>
      statement(move.operation, async (db) => {
        const args: (string | null)[] = []
        for (const { from, to } of move.moves) args.push(from, to)
        args.push(move.event, move.reason, move.at, move.decisionId)
        for (const { from } of move.moves) args.push(from)
        if (move.since !== undefined) args.push(move.since)
        let moved: number
        try {
          const result = await db.execute({
            sql: transitionStatement(move.moves.length, move.since !== undefined),
            args,
          })
          moved = result.rowsAffected
        } catch (error) {
          throw toConflict(error)
        }
        if (moved === 1) return { moved: true as const }
        const row = await runAndState(db, move.decisionId)
        return row === null ? null : { moved: false as const, state: row.state }
      }),
  }
}
