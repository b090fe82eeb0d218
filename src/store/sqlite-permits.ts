/**
 * The SQLite side of what is kept beside a review: its permit
 * (`review-permits.ts`) and its action outcome (`review-actions.ts`), the
 * columns added for them, and their statements.
 */
import type { Client, Transaction } from '@libsql/client'
import type { ReviewActionDriver } from './review-actions.js'
import type { ReviewPermitDriver } from './review-permits.js'
import { nullableText } from './store-rows.js'

type Executor = Pick<Client, 'execute'> | Transaction

/**
 * Files written before permits (action outcomes, the stats notes) existed
 * gain the nullable columns; runs inside the migration's write transaction, so two
 * openers cannot both add one.
 *
 * @example
 * await addPermitColumn(tx)
 */
export async function addPermitColumn(tx: Executor): Promise<void> {
  const columns = await tx.execute('PRAGMA table_info(pushary_reviews)')
  // answered_at and the misconfigured pair are the stats notes (review-stats.ts).
  for (const name of ['permit', 'action', 'answered_at', 'misconfigured', 'misconfigured_at']) {
    if (!columns.rows.some((column) => column.name === name)) {
      await tx.execute(`ALTER TABLE pushary_reviews ADD COLUMN ${name} TEXT`)
    }
  }
}

/**
 * The driver's permit statements over the store's read path (migrated, busy-retried).
 *
 * @example
 * const driver = { ...sqlitePermitStatements(read) }
 */
export function sqlitePermitStatements(
  read: <T>(body: (db: Executor) => Promise<T>) => Promise<T>,
): ReviewPermitDriver {
  return {
    updatePermit: (decisionId, permit) =>
      read(async (db) => {
        // Set once: a permit already recorded is never overwritten.
        const set = await db.execute({
          sql: 'UPDATE pushary_reviews SET permit = ? WHERE decision_id = ? AND permit IS NULL',
          args: [permit, decisionId],
        })
        if (set.rowsAffected === 1) return 'set'
        const found = await db.execute({
          sql: 'SELECT 1 FROM pushary_reviews WHERE decision_id = ?',
          args: [decisionId],
        })
        return found.rows.length === 0 ? 'missing' : 'kept'
      }),
    selectPermit: (decisionId) =>
      read(async (db) => {
        const result = await db.execute({
          sql: 'SELECT permit FROM pushary_reviews WHERE decision_id = ?',
          args: [decisionId],
        })
        return nullableText(result.rows[0]?.permit ?? null)
      }),
  }
}

/**
 * The driver's action-outcome statements over the store's read path (migrated, busy-retried).
 *
 * @example
 * const driver = { ...sqliteActionStatements(read) }
 */
export function sqliteActionStatements(
  read: <T>(body: (db: Executor) => Promise<T>) => Promise<T>,
): ReviewActionDriver {
  return {
    updateAction: (decisionId, action) =>
      read(async (db) => {
        const set = await db.execute({
          sql: 'UPDATE pushary_reviews SET action = ? WHERE decision_id = ?',
          args: [action, decisionId],
        })
        return set.rowsAffected === 1
      }),
    selectAction: (decisionId) =>
      read(async (db) => {
        const result = await db.execute({
          sql: 'SELECT action FROM pushary_reviews WHERE decision_id = ?',
          args: [decisionId],
        })
        return nullableText(result.rows[0]?.action ?? null)
      }),
  }
}
