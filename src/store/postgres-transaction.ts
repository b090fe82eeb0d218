/**
 * The statements one PostgreSQL write transaction offers the store core
 * (`ReviewWriteTransaction`), on the pooled client that holds the
 * transaction: the row locked `FOR UPDATE`, compare-and-set moves, history
 * rows, the action and answer notes, and the server's clock.
 */

import type { PusharyPgPoolClient } from './postgres-pg.js'
import { ACTIVE, PG_NOW } from './postgres-sql.js'
import { ActiveRunConflict, type ReviewWriteTransaction } from './store-driver.js'
import { storedReviewRow } from './store-rows.js'

/** The SQLSTATE of a `pg` error, when it has one. */
export function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' ? code : undefined
}

/**
 * The write transaction's statements on `client`, in schema `s`.
 *
 * @example
 * const tx = postgresWriteTransaction(client, 'public')
 */
export function postgresWriteTransaction(client: PusharyPgPoolClient, s: string): ReviewWriteTransaction {
  return {
    async selectForUpdate(decisionId) {
      const result = await client.query(
        `SELECT decision_id, run_id, binding, state, state_changed_at FROM ${s}.pushary_reviews WHERE decision_id = $1 FOR UPDATE`,
        [decisionId],
      )
      const row = result.rows[0] as Record<string, unknown> | undefined
      return row === undefined ? null : storedReviewRow(row)
    },
    async insertPending(row) {
      const result = await client.query(
        `INSERT INTO ${s}.pushary_reviews
           (decision_id, run_id, target, binding, state, reason, created_at, state_changed_at)
         VALUES ($1, $2, $3, $4, 'pending', NULL, $5, $5) ON CONFLICT (decision_id) DO NOTHING`,
        [row.decisionId, row.runId, row.target, row.binding, row.at],
      )
      return result.rowCount === 1
    },
    async runHasActiveReview(runId) {
      const result = await client.query(
        `SELECT 1 FROM ${s}.pushary_reviews WHERE run_id = $1 AND state IN ${ACTIVE} LIMIT 1`,
        [runId],
      )
      return (result.rowCount ?? 0) > 0
    },
    async setState(decisionId, from, to, reason, at) {
      try {
        const result = await client.query(
          `UPDATE ${s}.pushary_reviews SET state = $1, reason = $2, state_changed_at = $3
           WHERE decision_id = $4 AND state = $5`,
          [to, reason, at, decisionId, from],
        )
        return result.rowCount === 1
      } catch (error) {
        if (sqlState(error) === '23505') {
          throw new ActiveRunConflict('run already has an active review', { cause: error })
        }
        throw error
      }
    },
    async appendTransition(row) {
      await client.query(
        `INSERT INTO ${s}.pushary_review_transitions (decision_id, from_state, to_state, event, reason, at)
         VALUES ($1, $2, $3, $4, $5, $6)`,
        [row.decisionId, row.from, row.to, row.event, row.reason, row.at],
      )
    },
    async noteAnswered(decisionId, answeredAt) {
      await client.query(
        `UPDATE ${s}.pushary_reviews SET answered_at = coalesce(answered_at, $1) WHERE decision_id = $2`,
        [answeredAt, decisionId],
      )
    },
    async setAction(decisionId, action) {
      await client.query(`UPDATE ${s}.pushary_reviews SET action = $1 WHERE decision_id = $2`, [
        action,
        decisionId,
      ])
    },
    async clock() {
      const result = await client.query(`SELECT ${PG_NOW} AS now`)
      return String((result.rows[0] as Record<string, unknown> | undefined)?.now)
    },
  }
}
