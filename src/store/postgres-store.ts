/**
 * The review store over PostgreSQL (`pg`), for resumers on several hosts. A
 * claim is one prepared statement (one round trip, autocommit): a
 * compare-and-set UPDATE on the row's state plus its history row; the
 * partial unique index on active reviews is what keeps two reviews of one
 * run from being resuming at once, across hosts and for writers that bypass
 * this code. Other writes run in a transaction that locks the row `FOR
 * UPDATE` (and, for `save`, takes a transaction-scoped advisory lock on the run).
 */

import { claimStatement, migration, PG_NOW } from './postgres-sql.js'
import { postgresStatsStatements } from './postgres-stats.js'
import { postgresWriteTransaction, sqlState } from './postgres-transaction.js'

export type {
  PusharyPgPool,
  PusharyPgPoolClient,
  PusharyPgResult,
  PusharyPgStatement,
} from './postgres-pg.js'

import type { PusharyPgPool, PusharyPgPoolClient } from './postgres-pg.js'
import type { ReviewReceipt } from './review-schema.js'
import type { PusharyReviewStore } from './review-store.js'
import { createReviewStore } from './store-core.js'
import { ActiveRunConflict, type ReviewStoreDriver } from './store-driver.js'
import { PusharyStoreError } from './store-error.js'
import { nullableText, type StoredTransitionRow, storedReviewRow } from './store-rows.js'

interface PostgresCommonOptions {
  /** Schema holding the tables (created if missing). Default `public`. */
  readonly schema?: string
  /**
   * Clock for the times of writes that are not leases (save, finish,
   * recover). A lease's times (claim, keepAlive, reclaim) are the server's
   * clock, read inside the statement, so hosts whose clocks disagree still
   * judge every lease on one clock.
   */
  readonly now?: () => Date
}

/**
 * Options of {@link createPostgresReviewStore}: a connection string (the store
 * owns and closes its pool) or your own `pg.Pool` (left open on `close`).
 *
 * @example
 * const options: PostgresReviewStoreOptions = { pool: new pg.Pool(), schema: 'approvals' }
 */
export type PostgresReviewStoreOptions =
  | (PostgresCommonOptions & { readonly connectionString: string; readonly pool?: undefined })
  | (PostgresCommonOptions & { readonly pool: PusharyPgPool; readonly connectionString?: undefined })

const RETRYABLE = new Set(['40001', '40P01'])
const MAX_ATTEMPTS = 5

/** Runs `body` again after a serialization failure or a deadlock, a few times, with jitter. */
async function retried<T>(body: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await body()
    } catch (error) {
      const code = sqlState(error)
      if (code === undefined || !RETRYABLE.has(code) || attempt >= MAX_ATTEMPTS) throw error
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * attempt))
    }
  }
}

function invalidOptions(field: string, message: string, cause?: unknown): PusharyStoreError {
  return new PusharyStoreError({
    code: 'invalid_options',
    operation: 'createPostgresReviewStore',
    field,
    message,
    cause,
  })
}

/**
 * Creates the review store over PostgreSQL. Tables are created on first use
 * in `schema` (default `public`).
 *
 * @example
 * const store = createPostgresReviewStore({ connectionString: process.env.DATABASE_URL! })
 * const result = await store.claim(decisionId, runId) // 'claimed' | 'busy' | 'settled'
 * await store.close()
 */
export function createPostgresReviewStore(options: PostgresReviewStoreOptions): PusharyReviewStore {
  const schemaName = options?.schema ?? 'public'
  if (typeof schemaName !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(schemaName)) {
    throw invalidOptions('schema', 'schema must be an identifier of letters, digits and _ (at most 63)')
  }
  const s = `"${schemaName}"`
  // `pg` is loaded on first use, not at import, so applications on SQLite
  // never load it; a store that is never used never opens a pool.
  let pool: Promise<PusharyPgPool> | undefined
  let ownsPool: boolean
  if (options.pool !== undefined) {
    if (typeof options.pool?.connect !== 'function') throw invalidOptions('pool', 'pool must be a pg.Pool')
    pool = Promise.resolve(options.pool)
    ownsPool = false
  } else {
    if (typeof options.connectionString !== 'string' || options.connectionString.trim() === '') {
      throw invalidOptions('connectionString', 'pass { connectionString } or { pool }')
    }
    ownsPool = true
  }
  const connectionString = options.connectionString
  function getPool(): Promise<PusharyPgPool> {
    pool ??= import('pg').then(({ default: driver }) => {
      try {
        return new driver.Pool({ connectionString }) as PusharyPgPool
      } catch (cause) {
        throw invalidOptions('connectionString', 'cannot create a pool from this connection string', cause)
      }
    })
    return pool
  }

  async function inTransaction<T>(body: (client: PusharyPgPoolClient) => Promise<T>): Promise<T> {
    const client = await (await getPool()).connect()
    try {
      await client.query('BEGIN')
      const result = await body(client)
      await client.query('COMMIT')
      return result
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined)
      throw error
    } finally {
      client.release()
    }
  }

  let ready: Promise<void> | undefined
  function migrate(): Promise<void> {
    ready ??= inTransaction(async (client) => {
      // Concurrent CREATE ... IF NOT EXISTS can still collide in the catalog;
      // one lock per database makes first use from many processes safe.
      await client.query("SELECT pg_advisory_xact_lock(hashtext('pushary-mastra:migrate'))")
      for (const sql of migration(s)) await client.query(sql)
    }).catch((error: unknown) => {
      ready = undefined
      throw error
    })
    return ready
  }

  async function query(sql: string, args: unknown[]): Promise<Record<string, unknown>[]> {
    await migrate()
    return (await (await getPool()).query(sql, args)).rows as Record<string, unknown>[]
  }

  let closed = false
  const claimSql = claimStatement(s)
  const claimName = `pushary-claim:${schemaName}`
  const driver: ReviewStoreDriver = {
    async write(_operation, runId, body) {
      await migrate()
      return retried(() =>
        inTransaction(async (client) => {
          if (runId !== null) {
            await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [
              `pushary-mastra:${schemaName}:${runId}`,
            ])
          }
          return body(postgresWriteTransaction(client, s))
        }),
      )
    },
    async claimInOneStatement(claim) {
      await migrate()
      const pooled = await getPool()
      const result = await retried(async () => {
        try {
          return await pooled.query({
            name: claimName,
            text: claimSql,
            values: [claim.decisionId, claim.runId, claim.from, claim.to, claim.reason, claim.answeredAt],
          })
        } catch (error) {
          if (sqlState(error) === '23505') {
            throw new ActiveRunConflict('run already has an active review', { cause: error })
          }
          throw error
        }
      })
      const row = result.rows[0] as Record<string, unknown> | undefined
      if (row === undefined) return null
      const moved = { runId: String(row.run_id), state: String(row.state) }
      return row.claimed === true
        ? { ...moved, claimed: true as const, at: String(row.at) }
        : { ...moved, claimed: false as const }
    },
    async selectReview(decisionId) {
      const rows = await query(
        `SELECT decision_id, run_id, binding, state, state_changed_at FROM ${s}.pushary_reviews WHERE decision_id = $1`,
        [decisionId],
      )
      return rows[0] === undefined ? null : storedReviewRow(rows[0])
    },
    async selectClaimState(decisionId) {
      const rows = await query(
        `SELECT state, state_changed_at, ${PG_NOW} AS now FROM ${s}.pushary_reviews WHERE decision_id = $1`,
        [decisionId],
      )
      const row = rows[0]
      if (row === undefined) return null
      return { state: String(row.state), stateChangedAt: String(row.state_changed_at), now: String(row.now) }
    },
    async selectByState(state, limit, after) {
      // Keyset paging: a cursor that left the state has lost its place, so
      // the listing starts over rather than skipping rows.
      const rows = await query(
        `WITH cursor AS (
           SELECT state_changed_at AS at, seq AS id FROM ${s}.pushary_reviews WHERE decision_id = $3 AND state = $1)
         SELECT decision_id, run_id, binding, state, state_changed_at FROM ${s}.pushary_reviews
         WHERE state = $1 AND (NOT EXISTS (SELECT 1 FROM cursor)
           OR (state_changed_at, seq) > (SELECT at, id FROM cursor))
         ORDER BY state_changed_at, seq LIMIT $2`,
        [state, limit, after ?? ''],
      )
      return rows.map(storedReviewRow)
    },
    async selectHistory(decisionId) {
      const rows = await query(
        `SELECT decision_id, from_state, to_state, event, reason, at FROM ${s}.pushary_review_transitions
         WHERE decision_id = $1 ORDER BY id`,
        [decisionId],
      )
      return rows.map(
        (row): StoredTransitionRow => ({
          decisionId: String(row.decision_id),
          from: nullableText(row.from_state),
          to: String(row.to_state),
          event: nullableText(row.event),
          reason: nullableText(row.reason),
          at: String(row.at),
        }),
      )
    },
    async insertReceipt(receipt: ReviewReceipt) {
      await query(
        `INSERT INTO ${s}.pushary_review_receipts (decision_id, received_at, body) VALUES ($1, $2, $3)`,
        [receipt.decisionId, receipt.receivedAt, receipt.body],
      )
    },
    async selectReceipts(decisionId) {
      const rows = await query(
        `SELECT decision_id, received_at, body FROM ${s}.pushary_review_receipts WHERE decision_id = $1 ORDER BY id`,
        [decisionId],
      )
      return rows.map((row) => ({
        decisionId: String(row.decision_id),
        receivedAt: String(row.received_at),
        body: String(row.body),
      }))
    },
    async updatePermit(decisionId, permit) {
      const set = await query(
        `UPDATE ${s}.pushary_reviews SET permit = $1 WHERE decision_id = $2 AND permit IS NULL RETURNING 1`,
        [permit, decisionId],
      )
      if (set.length === 1) return 'set'
      const found = await query(`SELECT 1 FROM ${s}.pushary_reviews WHERE decision_id = $1`, [decisionId])
      return found.length === 0 ? 'missing' : 'kept'
    },
    async selectPermit(decisionId) {
      const rows = await query(`SELECT permit FROM ${s}.pushary_reviews WHERE decision_id = $1`, [decisionId])
      return nullableText(rows[0]?.permit ?? null)
    },
    async updateAction(decisionId, action) {
      const set = await query(
        `UPDATE ${s}.pushary_reviews SET action = $1 WHERE decision_id = $2 RETURNING 1`,
        [action, decisionId],
      )
      return set.length === 1
    },
    async selectAction(decisionId) {
      const rows = await query(`SELECT action FROM ${s}.pushary_reviews WHERE decision_id = $1`, [decisionId])
      return nullableText(rows[0]?.action ?? null)
    },
    ...postgresStatsStatements(query, s),
    async close() {
      if (closed) return
      closed = true
      if (ownsPool && pool !== undefined) {
        // A pool that failed to come into being has nothing to end.
        const owned = await pool.catch(() => undefined)
        await owned?.end()
      }
    },
  }
  return createReviewStore(driver, options.now ?? (() => new Date()))
}
