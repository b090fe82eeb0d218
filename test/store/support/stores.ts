/**
 * The stores every contract test runs against, each on a real database: a
 * SQLite file in the OS temp directory and a schema of its own in PostgreSQL.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createClient } from '@libsql/client'
import pg from 'pg'
import { createPostgresReviewStore } from '../../../src/store/postgres-store.js'
import type { PusharyReviewStore } from '../../../src/store/review-store.js'
import { createSqliteReviewStore } from '../../../src/store/sqlite-store.js'
import { dropSchema, ensurePostgres, type TestPostgres, uniqueSchema } from './postgres.js'

export interface StoreHarness {
  /** A new store instance on the same database (another "process"). */
  open(options?: { now?: () => Date }): PusharyReviewStore
  /** Writes a state directly, bypassing the store, as a careless writer would. */
  forceState(decisionId: string, state: string): Promise<void>
  /** Overwrites the stored binding directly, to simulate a corrupted row. */
  forceBinding(decisionId: string, binding: string): Promise<void>
  /** Creates the reviews table as releases before permits did (no `permit` column), before any store opens. */
  createPrePermitTable(): Promise<void>
  dispose(): Promise<void>
}

const PRE_PERMIT_COLUMNS = `decision_id TEXT PRIMARY KEY, run_id TEXT NOT NULL, target TEXT NOT NULL,
  binding TEXT NOT NULL, state TEXT NOT NULL, reason TEXT, created_at TEXT NOT NULL, state_changed_at TEXT NOT NULL`

export interface StoreKind {
  readonly name: 'sqlite' | 'postgres'
  setup(label: string): Promise<StoreHarness>
}

async function sqliteHarness(label: string): Promise<StoreHarness> {
  const dir = mkdtempSync(join(tmpdir(), `pushary-store-${label}-`))
  const url = `file:${join(dir, 'reviews.db')}`
  const stores: PusharyReviewStore[] = []
  const raw = createClient({ url, timeout: 5000 })
  return {
    open(options) {
      const store = createSqliteReviewStore({ url, ...options })
      stores.push(store)
      return store
    },
    async forceState(decisionId, state) {
      await raw.execute({
        sql: 'UPDATE pushary_reviews SET state = ? WHERE decision_id = ?',
        args: [state, decisionId],
      })
    },
    async forceBinding(decisionId, binding) {
      await raw.execute({
        sql: 'UPDATE pushary_reviews SET binding = ? WHERE decision_id = ?',
        args: [binding, decisionId],
      })
    },
    async createPrePermitTable() {
      await raw.execute(`CREATE TABLE pushary_reviews (${PRE_PERMIT_COLUMNS})`)
    },
    async dispose() {
      for (const store of stores) await store.close()
      raw.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

let server: Promise<TestPostgres> | undefined

async function postgresHarness(label: string): Promise<StoreHarness> {
  server ??= ensurePostgres()
  const { connectionString } = await server
  const schema = uniqueSchema(label)
  const stores: PusharyReviewStore[] = []
  const raw = new pg.Pool({ connectionString, max: 2 })
  return {
    open(options) {
      const store = createPostgresReviewStore({ connectionString, schema, ...options })
      stores.push(store)
      return store
    },
    async forceState(decisionId, state) {
      await raw.query(`UPDATE "${schema}".pushary_reviews SET state = $1 WHERE decision_id = $2`, [
        state,
        decisionId,
      ])
    },
    async forceBinding(decisionId, binding) {
      await raw.query(`UPDATE "${schema}".pushary_reviews SET binding = $1 WHERE decision_id = $2`, [
        binding,
        decisionId,
      ])
    },
    async createPrePermitTable() {
      await raw.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`)
      await raw.query(
        `CREATE TABLE "${schema}".pushary_reviews (seq BIGSERIAL NOT NULL, ${PRE_PERMIT_COLUMNS})`,
      )
    },
    async dispose() {
      for (const store of stores) await store.close()
      await raw.end()
      await dropSchema(connectionString, schema)
    },
  }
}

/** Stops a PostgreSQL server the harness had to start (none when the shared one answered). */
export async function stopTestPostgres(): Promise<void> {
  if (server) await (await server).stop()
  server = undefined
}

export const STORE_KINDS: readonly StoreKind[] = [
  { name: 'sqlite', setup: sqliteHarness },
  { name: 'postgres', setup: postgresHarness },
]
