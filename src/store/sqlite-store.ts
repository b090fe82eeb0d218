/**
 * The review store over SQLite (`@libsql/client`), for processes that share
 * one database file (it may be the same file as Mastra's `@mastra/libsql`
 * storage). A claim and every lifecycle transition is one atomic statement
 * (`sqlite-transitions.ts`); the other writes are one `BEGIN IMMEDIATE`
 * transaction, which takes the file's single write lock up front, so a
 * read-check-update cannot interleave with another process's.
 */
import type { Client, InArgs, Transaction } from '@libsql/client'
import type { ReviewState } from '../machines/review-lifecycle.js'
import type { ReviewReceipt } from './review-schema.js'
import type { PusharyReviewStore } from './review-store.js'
import { sqliteConnection } from './sqlite-connection.js'
import { addPermitColumn, sqliteActionStatements, sqlitePermitStatements } from './sqlite-permits.js'
import { sqliteStatsStatements } from './sqlite-stats.js'
import { ACTIVE, migrateTransitions, SQLITE_NOW, sqliteOneStatementWrites } from './sqlite-transitions.js'
import { checkedSqliteUrl } from './sqlite-url.js'
import { createReviewStore } from './store-core.js'
import { ActiveRunConflict, type ReviewStoreDriver, type ReviewWriteTransaction } from './store-driver.js'
import { PusharyStoreError } from './store-error.js'
import { nullableText, type StoredTransitionRow, storedReviewRow } from './store-rows.js'

/**
 * Options of {@link createSqliteReviewStore}.
 *
 * @example
 * const options: SqliteReviewStoreOptions = { url: 'file:/var/lib/app/reviews.db', busyTimeoutMs: 30_000 }
 */
export interface SqliteReviewStoreOptions {
  /** A libsql URL such as `file:/var/lib/app/reviews.db`. In-memory databases are refused. */
  readonly url: string
  /**
   * How long a write keeps retrying, with jittered backoff, while another
   * connection holds the file's write lock. Default 15000 ms; then
   * `PusharyStoreError('database_busy')`.
   */
  readonly busyTimeoutMs?: number
  /**
   * Clock for the times of writes that are not leases (save, finish,
   * recover). A lease's times (claim, keepAlive, reclaim) are SQLite's own
   * clock, read inside the statement: every process sharing the file runs on
   * the host that holds it, so every lease is judged on that one clock.
   */
  readonly now?: () => Date
}

const MIGRATION = [
  `CREATE TABLE IF NOT EXISTS pushary_reviews (
    decision_id TEXT PRIMARY KEY,
    run_id TEXT NOT NULL,
    target TEXT NOT NULL,
    binding TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('pending', 'resuming', 'completed', 'stale', 'uncertain')),
    reason TEXT,
    created_at TEXT NOT NULL,
    state_changed_at TEXT NOT NULL
  )`,
  // The active-review check (`run_id = ? AND state IN active`) is served by
  // the partial unique index below; a second index on (run_id, state) only
  // made every claim and finish write one more index entry.
  'DROP INDEX IF EXISTS pushary_reviews_run',
  'CREATE INDEX IF NOT EXISTS pushary_reviews_state ON pushary_reviews (state, state_changed_at)',
  // The per-run serialization invariant, enforced by the database itself: a
  // run has at most one review that is resuming or uncertain.
  `CREATE UNIQUE INDEX IF NOT EXISTS pushary_reviews_one_active_per_run
    ON pushary_reviews (run_id) WHERE state IN ${ACTIVE}`,
  `CREATE TABLE IF NOT EXISTS pushary_review_transitions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    decision_id TEXT NOT NULL,
    from_state TEXT,
    to_state TEXT NOT NULL,
    event TEXT,
    reason TEXT,
    at TEXT NOT NULL
  )`,
  'CREATE INDEX IF NOT EXISTS pushary_review_transitions_decision ON pushary_review_transitions (decision_id, id)',
  `CREATE TABLE IF NOT EXISTS pushary_review_receipts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    decision_id TEXT NOT NULL,
    received_at TEXT NOT NULL,
    body TEXT NOT NULL
  )`,
  'CREATE INDEX IF NOT EXISTS pushary_review_receipts_decision ON pushary_review_receipts (decision_id, id)',
]

type Executor = Pick<Client, 'execute'> | Transaction

/** The partial unique index's refusal of a second active review in one run, as the store's conflict. */
function asActiveRunConflict(error: unknown): unknown {
  if (typeof error !== 'object' || error === null) return error
  const { code, message } = error as { code?: unknown; message?: unknown }
  const violation =
    typeof code === 'string' &&
    code.startsWith('SQLITE_CONSTRAINT') &&
    typeof message === 'string' &&
    message.includes('pushary_reviews.run_id')
  return violation ? new ActiveRunConflict('run already has an active review', { cause: error }) : error
}

function writeTransaction(tx: Transaction): ReviewWriteTransaction {
  const run = (sql: string, args: InArgs) => tx.execute({ sql, args })
  return {
    async selectForUpdate(decisionId) {
      // BEGIN IMMEDIATE already holds the write lock on the whole file.
      const result = await run(
        'SELECT decision_id, run_id, binding, state, state_changed_at FROM pushary_reviews WHERE decision_id = ?',
        [decisionId],
      )
      const row = result.rows[0]
      return row === undefined ? null : storedReviewRow(row)
    },
    async insertPending(row) {
      const result = await run(
        `INSERT INTO pushary_reviews (decision_id, run_id, target, binding, state, reason, created_at, state_changed_at)
         VALUES (?, ?, ?, ?, 'pending', NULL, ?, ?) ON CONFLICT (decision_id) DO NOTHING`,
        [row.decisionId, row.runId, row.target, row.binding, row.at, row.at],
      )
      return result.rowsAffected === 1
    },
    async runHasActiveReview(runId) {
      const result = await run(
        `SELECT 1 FROM pushary_reviews WHERE run_id = ? AND state IN ${ACTIVE} LIMIT 1`,
        [runId],
      )
      return result.rows.length > 0
    },
    async setState(decisionId, from, to, reason, at) {
      try {
        const result = await run(
          `UPDATE pushary_reviews SET state = ?, reason = ?, state_changed_at = ?
           WHERE decision_id = ? AND state = ?`,
          [to, reason, at, decisionId, from],
        )
        return result.rowsAffected === 1
      } catch (error) {
        throw asActiveRunConflict(error)
      }
    },
    async appendTransition(row) {
      await run(
        `INSERT INTO pushary_review_transitions (decision_id, from_state, to_state, event, reason, at)
         VALUES (?, ?, ?, ?, ?, ?)`,
        [row.decisionId, row.from, row.to, row.event, row.reason, row.at],
      )
    },
    async setAction(decisionId, action) {
      await run('UPDATE pushary_reviews SET action = ? WHERE decision_id = ?', [action, decisionId])
    },
    async noteAnswered(decisionId, answeredAt) {
      await run('UPDATE pushary_reviews SET answered_at = coalesce(answered_at, ?) WHERE decision_id = ?', [
        answeredAt,
        decisionId,
      ])
    },
    async clock() {
      const result = await run(`SELECT ${SQLITE_NOW} AS now`, [])
      return String(result.rows[0]?.now)
    },
  }
}

/**
 * Creates the review store over one SQLite file. Tables are created on first
 * use; the file is switched to WAL so readers never wait for a claim.
 *
 * @example
 * const store = createSqliteReviewStore({ url: 'file:/var/lib/app/reviews.db' })
 * const result = await store.claim(decisionId, runId) // 'claimed' | 'busy' | 'settled'
 * await store.close()
 */
export function createSqliteReviewStore(options: SqliteReviewStoreOptions): PusharyReviewStore {
  return createReviewStore(createSqliteReviewDriver(options), options.now ?? (() => new Date()))
}

/**
 * The SQLite half of the store (see {@link createSqliteReviewStore}), on its
 * own so tests can run the store rules over a real file with one guard taken
 * away. Internal: not exported from the package.
 *
 * @example
 * const store = createReviewStore(createSqliteReviewDriver({ url }), () => new Date())
 */
export function createSqliteReviewDriver(options: SqliteReviewStoreOptions): ReviewStoreDriver {
  const url = checkedSqliteUrl(options?.url)
  const busyTimeoutMs = options.busyTimeoutMs ?? 15_000
  if (!Number.isInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
    throw new PusharyStoreError({
      code: 'invalid_options',
      operation: 'createSqliteReviewStore',
      field: 'busyTimeoutMs',
      message: 'busyTimeoutMs must be a non-negative integer',
    })
  }

  const connection = sqliteConnection(url, busyTimeoutMs)

  async function inTransaction<T>(db: Client, body: (tx: Transaction) => Promise<T>): Promise<T> {
    const tx = await db.transaction('write')
    try {
      const result = await body(tx)
      await tx.commit()
      return result
    } catch (error) {
      await tx.rollback().catch(() => undefined)
      throw error
    } finally {
      tx.close()
    }
  }

  let ready: Promise<void> | undefined
  function migrate(): Promise<void> {
    ready ??= connection
      .run('migrate', async (client) => {
        // WAL is a property of the file; switching needs an exclusive lock, so
        // only the first opener (mode still 'delete') asks for it.
        const mode = await client.execute('PRAGMA journal_mode')
        if (String(mode.rows[0]?.journal_mode).toLowerCase() !== 'wal') {
          await client.execute('PRAGMA journal_mode = WAL')
        }
        await inTransaction(client, async (tx) => {
          for (const sql of MIGRATION) await tx.execute(sql)
          await addPermitColumn(tx)
          // Claims and transitions are one statement each: the history row
          // they append moves the review, with its notes (sqlite-transitions.ts).
          await migrateTransitions(tx)
        })
      })
      .catch((error: unknown) => {
        ready = undefined
        throw error
      })
    return ready
  }

  async function statement<T>(operation: string, body: (db: Client) => Promise<T>): Promise<T> {
    await migrate()
    return connection.run(operation, body)
  }
  const read = <T>(body: (db: Executor) => Promise<T>): Promise<T> => statement('read', body)

  let closed = false
  const driver: ReviewStoreDriver = {
    async write(operation, _runId, body) {
      await migrate()
      return connection.run(operation, (db) => inTransaction(db, (tx) => body(writeTransaction(tx))))
    },
    selectReview: (decisionId) =>
      read(async (db) => {
        const result = await db.execute({
          sql: 'SELECT decision_id, run_id, binding, state, state_changed_at FROM pushary_reviews WHERE decision_id = ?',
          args: [decisionId],
        })
        const row = result.rows[0]
        return row === undefined ? null : storedReviewRow(row)
      }),
    selectClaimState: (decisionId) =>
      read(async (db) => {
        const result = await db.execute({
          sql: `SELECT state, state_changed_at, ${SQLITE_NOW} AS now FROM pushary_reviews WHERE decision_id = ?`,
          args: [decisionId],
        })
        const row = result.rows[0]
        if (row === undefined) return null
        return {
          state: String(row.state),
          stateChangedAt: String(row.state_changed_at),
          now: String(row.now),
        }
      }),
    selectByState: (state: ReviewState, limit: number, after: string | null) =>
      read(async (db) => {
        // Keyset paging: a cursor that left the state has lost its place, so
        // the listing starts over rather than skipping rows.
        const result = await db.execute({
          sql: `WITH cursor AS (
                  SELECT state_changed_at AS at, rowid AS id FROM pushary_reviews WHERE decision_id = ? AND state = ?)
                SELECT decision_id, run_id, binding, state, state_changed_at FROM pushary_reviews
                WHERE state = ? AND (NOT EXISTS (SELECT 1 FROM cursor)
                  OR (state_changed_at, rowid) > (SELECT at, id FROM cursor))
                ORDER BY state_changed_at, rowid LIMIT ?`,
          args: [after ?? '', state, state, limit],
        })
        return result.rows.map(storedReviewRow)
      }),
    selectHistory: (decisionId) =>
      read(async (db) => {
        const result = await db.execute({
          sql: `SELECT decision_id, from_state, to_state, event, reason, at FROM pushary_review_transitions
                WHERE decision_id = ? ORDER BY id`,
          args: [decisionId],
        })
        return result.rows.map(
          (row): StoredTransitionRow => ({
            decisionId: String(row.decision_id),
            from: nullableText(row.from_state),
            to: String(row.to_state),
            event: nullableText(row.event),
            reason: nullableText(row.reason),
            at: String(row.at),
          }),
        )
      }),
    async insertReceipt(receipt: ReviewReceipt) {
      await migrate()
      await connection.run('recordReceipt', (db) =>
        db.execute({
          sql: 'INSERT INTO pushary_review_receipts (decision_id, received_at, body) VALUES (?, ?, ?)',
          args: [receipt.decisionId, receipt.receivedAt, receipt.body],
        }),
      )
    },
    selectReceipts: (decisionId) =>
      read(async (db) => {
        const result = await db.execute({
          sql: 'SELECT decision_id, received_at, body FROM pushary_review_receipts WHERE decision_id = ? ORDER BY id',
          args: [decisionId],
        })
        return result.rows.map((row) => ({
          decisionId: String(row.decision_id),
          receivedAt: String(row.received_at),
          body: String(row.body),
        }))
      }),
    ...sqlitePermitStatements(read),
    ...sqliteActionStatements(read),
    ...sqliteStatsStatements(read),
    ...sqliteOneStatementWrites(
      statement,
      (decisionId) => driver.selectReview(decisionId),
      asActiveRunConflict,
    ),
    async close() {
      if (closed) return
      closed = true
      await connection.close()
    },
  }
  return driver
}
