/**
 * The local decision service keeps everything in one SQLite file so that a
 * restart loses nothing: decisions, enrolment links, bound devices, the API
 * key and webhook secret, and the callback outbox.
 */
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { type Client, createClient } from '@libsql/client'
import { APPROVER_SET_INDEX } from './approver-sets.js'
import { migrateServiceDatabase } from './migrations.js'

/** Default database location, relative to the working directory. */
export const DEFAULT_DB_PATH = '.pushary/dev.db'

// Every statement is idempotent so that opening an existing file is a no-op.
const SCHEMA: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS decisions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    decision_id TEXT NOT NULL UNIQUE,
    status TEXT NOT NULL,
    type TEXT NOT NULL,
    question TEXT NOT NULL,
    options TEXT,
    placeholder TEXT,
    context TEXT,
    external_id TEXT,
    email TEXT,
    callback_url TEXT,
    agent_name TEXT,
    tool_name TEXT,
    tool_target TEXT,
    actor TEXT,
    environment TEXT,
    parameters TEXT,
    presentation TEXT,
    sandbox_outcome TEXT,
    idempotency_key TEXT UNIQUE,
    request_digest TEXT,
    created_at TEXT NOT NULL,
    created_ms INTEGER NOT NULL,
    expires_at TEXT NOT NULL,
    expires_ms INTEGER NOT NULL,
    answered_at TEXT,
    value TEXT,
    answer_source TEXT,
    asked_by TEXT
  )`,
  'CREATE INDEX IF NOT EXISTS decisions_status_expires ON decisions (status, expires_ms)',
  'CREATE INDEX IF NOT EXISTS decisions_external_id ON decisions (external_id, seq)',
  APPROVER_SET_INDEX,
  `CREATE TABLE IF NOT EXISTS enrollments (
    token_hash TEXT PRIMARY KEY,
    external_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    consumed_at TEXT
  )`,
  `CREATE TABLE IF NOT EXISTS devices (
    token_hash TEXT PRIMARY KEY,
    external_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    last_seen_at TEXT NOT NULL
  )`,
  'CREATE INDEX IF NOT EXISTS devices_external_id ON devices (external_id)',
  `CREATE TABLE IF NOT EXISTS settings (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
  )`,
  `CREATE TABLE IF NOT EXISTS callback_deliveries (
    delivery_id INTEGER PRIMARY KEY AUTOINCREMENT,
    decision_id TEXT NOT NULL,
    event TEXT NOT NULL,
    url TEXT NOT NULL,
    body TEXT NOT NULL,
    state TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_ms INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    last_attempt_at TEXT,
    last_status_code INTEGER,
    last_error TEXT,
    delivered_at TEXT,
    UNIQUE (decision_id, event)
  )`,
  'CREATE INDEX IF NOT EXISTS callback_deliveries_due ON callback_deliveries (state, next_attempt_ms)',
  `CREATE TABLE IF NOT EXISTS callback_attempts (
    delivery_id INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    at TEXT NOT NULL,
    status_code INTEGER,
    error TEXT,
    ok INTEGER NOT NULL,
    PRIMARY KEY (delivery_id, attempt)
  )`,
]

/**
 * Opens (creating if needed) the service database at `path` and applies the
 * schema. The caller owns the returned client and must `close()` it.
 *
 * @example
 * const db = await openServiceDatabase('.pushary/dev.db')
 * await db.execute('SELECT count(*) FROM decisions')
 * db.close()
 */
export async function openServiceDatabase(path: string): Promise<Client> {
  const absolute = resolve(path)
  makePrivateFile(absolute)
  // `timeout` is the per-connection busy timeout; the client pools connections,
  // so a PRAGMA on one connection would not cover the others. The URL is built
  // by `pathToFileURL` because the driver decodes it: `d%41e.db` would
  // otherwise open `dAe.db`, and `a#b.db` would lose everything after `#`.
  const client = createClient({ url: pathToFileURL(absolute).href, timeout: 5_000 })
  try {
    await client.execute('PRAGMA journal_mode = WAL')
    await migrateServiceDatabase(client)
    for (const statement of SCHEMA) {
      await client.execute(statement)
    }
    // SQLite gives -wal and -shm the main file's mode; files left by an older
    // version (0644) are tightened here as well.
    for (const suffix of ['', '-wal', '-shm']) {
      if (existsSync(absolute + suffix)) chmodSync(absolute + suffix, PRIVATE_FILE_MODE)
    }
  } catch (error) {
    client.close()
    throw error
  }
  return client
}

/** Mode of the database file and its -wal/-shm companions: owner read/write only. */
export const PRIVATE_FILE_MODE = 0o600
/** Mode of a directory the service creates for its database: owner only. */
export const PRIVATE_DIR_MODE = 0o700

// The file holds the API key and webhook secret: any local user who can read
// it can answer every decision. Directories are made private only when this
// call creates them, so `--db /tmp/x.db` never changes /tmp.
function makePrivateFile(absolute: string): void {
  const directory = dirname(absolute)
  const firstCreated = mkdirSync(directory, { recursive: true, mode: PRIVATE_DIR_MODE })
  if (firstCreated !== undefined) {
    for (let current = directory; current.startsWith(firstCreated); current = dirname(current)) {
      chmodSync(current, PRIVATE_DIR_MODE)
      if (current === firstCreated) break
    }
  }
  // Created before the driver opens it, so there is no moment when it is world-readable.
  if (!existsSync(absolute)) closeSync(openSync(absolute, 'a', PRIVATE_FILE_MODE))
  chmodSync(absolute, PRIVATE_FILE_MODE)
}

/**
 * Reads one row of the `settings` table.
 *
 * @example
 * const key = await readSetting(db, 'api_key')
 */
export async function readSetting(db: Client, key: string): Promise<string | null> {
  const result = await db.execute({ sql: 'SELECT value FROM settings WHERE key = ?', args: [key] })
  const value = result.rows[0]?.value
  return typeof value === 'string' ? value : null
}

/**
 * Writes (inserting or replacing) one row of the `settings` table.
 *
 * @example
 * await writeSetting(db, 'webhook_secret', 'whsec_…')
 */
export async function writeSetting(db: Client, key: string, value: string): Promise<void> {
  await db.execute({
    sql: 'INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    args: [key, value],
  })
}

/**
 * Returns the stored value for `key`, creating it with `create()` on first use,
 * and whether this call created it. An `INSERT OR IGNORE` followed by a read
 * keeps two racing callers on one value.
 *
 * @example
 * const { value: secret, created } = await ensureSetting(db, 'webhook_secret', () => randomSecret())
 */
export async function ensureSetting(
  db: Client,
  key: string,
  create: () => string,
): Promise<{ value: string; created: boolean }> {
  const inserted = await db.execute({
    sql: 'INSERT OR IGNORE INTO settings (key, value) VALUES (?, ?)',
    args: [key, create()],
  })
  const value = await readSetting(db, key)
  if (value === null) throw new Error(`Pushary dev server: setting "${key}" could not be stored.`)
  return { value, created: inserted.rowsAffected === 1 }
}
