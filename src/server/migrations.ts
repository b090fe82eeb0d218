/**
 * Upgrades a service database written by an older version, in place and in
 * one transaction, tracked by `PRAGMA user_version`. A file written by a newer
 * version is refused rather than guessed at.
 */
import type { Client, ResultSet } from '@libsql/client'
import { PusharyDevServerError } from './dev-server-error.js'
import { hashToken } from './enrollment-repo.js'

/** The schema version this code writes. */
export const SERVICE_SCHEMA_VERSION = 4

// Version 3. `IF NOT EXISTS`, so a fresh file and an upgraded one end alike.
const PLATFORM_TABLES: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS bound_keys (
    key_prefix TEXT PRIMARY KEY,
    key_hash TEXT NOT NULL,
    name TEXT,
    bound_external_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT,
    expires_ms INTEGER,
    revoked_at TEXT,
    last_used_at TEXT
  )`,
  `CREATE TABLE IF NOT EXISTS policy_authorizations (
    authorization_id TEXT PRIMARY KEY,
    action TEXT NOT NULL,
    policy TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_ms INTEGER NOT NULL
  )`,
  `CREATE TABLE IF NOT EXISTS permits (
    permit_id TEXT PRIMARY KEY,
    authorization_id TEXT NOT NULL UNIQUE,
    action TEXT NOT NULL,
    authority TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    execution_state TEXT NOT NULL,
    receipt_summary TEXT,
    receipt_at TEXT
  )`,
  `CREATE TABLE IF NOT EXISTS approval_links (
    token_hash TEXT PRIMARY KEY,
    decision_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_ms INTEGER NOT NULL,
    issued_to TEXT
  )`,
]

async function columnsOf(db: { execute(sql: string): Promise<ResultSet> }, table: string): Promise<string[]> {
  const result = await db.execute(`PRAGMA table_info(${table})`)
  return result.rows.map((row) => String(row.name))
}

/**
 * Brings `db` to {@link SERVICE_SCHEMA_VERSION}. Version 1 stores enrolment
 * tokens as SHA-256 digests (version 0 kept them in plain text, so a copy of
 * the file could enrol a device); unconsumed links keep working because the
 * lookup hashes the presented token. Version 2 adds `decisions.request_digest`,
 * the request an idempotency key is bound to (older rows keep NULL and are
 * compared by their stored fields). Version 3 adds the platform tables:
 * bound keys, policy authorizations, permits with their receipts, and
 * decision-bound approval links (secrets stored as SHA-256 digests).
 * Version 4 records who asked (`decisions.asked_by`) and who received each
 * approval link (`approval_links.issued_to`): `site` or a bound key's
 * prefix. Older rows keep NULL: an older link's holder is unknown, so the
 * link page refuses it (fail closed), and an older decision reads as asked
 * by the site key, whose idempotency keys were stored unscoped.
 *
 * @example
 * await migrateServiceDatabase(db)
 */
export async function migrateServiceDatabase(db: Client): Promise<void> {
  const version = Number((await db.execute('PRAGMA user_version')).rows[0]?.user_version ?? 0)
  if (version > SERVICE_SCHEMA_VERSION) {
    throw new PusharyDevServerError({
      code: 'invalid_database',
      field: 'dbPath',
      message: `the database has schema version ${version}, newer than this version understands (${SERVICE_SCHEMA_VERSION}); upgrade @pushary/mastra or use another --db`,
    })
  }
  if (version === SERVICE_SCHEMA_VERSION) return
  let migratedSecrets = false
  const tx = await db.transaction('write')
  try {
    if ((await columnsOf(tx, 'enrollments')).includes('token')) {
      const rows = await tx.execute(
        'SELECT token, external_id, created_at, expires_at, consumed_at FROM enrollments',
      )
      await tx.execute('ALTER TABLE enrollments RENAME TO enrollments_plain')
      await tx.execute(`CREATE TABLE enrollments (
        token_hash TEXT PRIMARY KEY,
        external_id TEXT NOT NULL,
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        consumed_at TEXT
      )`)
      for (const row of rows.rows) {
        await tx.execute({
          // The customer is copied inside SQLite so its bytes are not cut at a NUL on the way.
          sql: `INSERT INTO enrollments (token_hash, external_id, created_at, expires_at, consumed_at)
                SELECT ?, external_id, created_at, expires_at, consumed_at FROM enrollments_plain WHERE token = ?`,
          args: [hashToken(String(row.token)), String(row.token)],
        })
      }
      // Overwrite the freed pages: a dropped table's bytes otherwise stay in the file.
      await tx.execute('PRAGMA secure_delete = ON')
      await tx.execute('DROP TABLE enrollments_plain')
      migratedSecrets = true
    }
    const decisionColumns = await columnsOf(tx, 'decisions')
    if (decisionColumns.length > 0 && !decisionColumns.includes('request_digest')) {
      await tx.execute('ALTER TABLE decisions ADD COLUMN request_digest TEXT')
    }
    if (decisionColumns.length > 0 && !decisionColumns.includes('asked_by')) {
      await tx.execute('ALTER TABLE decisions ADD COLUMN asked_by TEXT')
    }
    for (const statement of PLATFORM_TABLES) await tx.execute(statement)
    if (!(await columnsOf(tx, 'approval_links')).includes('issued_to')) {
      await tx.execute('ALTER TABLE approval_links ADD COLUMN issued_to TEXT')
    }
    await tx.execute(`PRAGMA user_version = ${SERVICE_SCHEMA_VERSION}`)
    await tx.commit()
  } finally {
    tx.close()
  }
  // And the old pages still in the write-ahead log.
  if (migratedSecrets) await db.execute('PRAGMA wal_checkpoint(TRUNCATE)')
}
