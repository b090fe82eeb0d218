/**
 * The SQLite store's one connection (`@libsql/client`) and the rule every
 * statement of the store runs under: alone on the connection, retried while
 * another process holds the file's write lock, and never on a connection
 * that a busy statement spoiled.
 *
 * The last is why the connection is replaced inside the failed operation's
 * own turn. libsql leaves a statement that failed with `SQLITE_BUSY`
 * un-reset, still running inside SQLite, until its JavaScript object is
 * garbage-collected. SQLite counts it as an active writer, so no later
 * autocommit write on that connection commits when it ends: it reports its
 * rows (a claim would answer `claimed`), stays in a transaction nobody
 * opened that holds the file's write lock (every other process waits and
 * runs out of time), and is rolled back when the connection is finally
 * freed. Closing the connection does not free it either while the stuck
 * statement is alive; but a connection that ran nothing after the busy
 * statement holds no lock and no write, so dropping it before anything
 * else runs on it is enough.
 */
import type { Client } from '@libsql/client'
import { PusharyStoreError } from './store-error.js'

// SQLite's own busy timeout (PRAGMA busy_timeout), set at open so a
// reconnect keeps it. Short on purpose: libsql waits synchronously and
// freezes this process's event loop, so longer waits happen here,
// asynchronously, with jittered backoff.
const SQLITE_BUSY_TIMEOUT_MS = 10
const MAX_BUSY_ATTEMPTS = 10_000

/** The store's connection: every operation runs alone on it, in call order. */
export interface SqliteConnection {
  /**
   * Runs `body` when every earlier operation finished. While the file is
   * locked by another process, `body` is run again (on a fresh connection)
   * with jittered backoff, holding this process's turn, for up to the busy
   * budget counted from its first attempt; then `database_busy`.
   */
  run<T>(operation: string, body: (client: Client) => Promise<T>): Promise<T>
  /** Waits for the running operations, then closes the connection. */
  close(): Promise<void>
}

function isBusy(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false
  const { code, extendedCode } = error as { code?: unknown; extendedCode?: unknown }
  return [code, extendedCode].some(
    (value) =>
      typeof value === 'string' && (value.startsWith('SQLITE_BUSY') || value.startsWith('SQLITE_LOCKED')),
  )
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/**
 * Opens (on first use) the one connection of a SQLite store. One is enough:
 * libsql gives a process no parallelism, and a second transaction of the
 * same process would wait for the file lock inside SQLite while the first
 * could not reach its COMMIT.
 *
 * @example
 * const connection = sqliteConnection('file:/var/lib/app/reviews.db', 15_000)
 * await connection.run('read', (client) => client.execute('SELECT 1'))
 */
export function sqliteConnection(url: string, busyTimeoutMs: number): SqliteConnection {
  // `@libsql/client` (and its native binding) loads on the first operation,
  // not when the package is imported: an application that never opens a
  // SQLite store never pays for it.
  let client: Client | undefined
  let opening: Promise<Client> | undefined
  function connect(): Promise<Client> {
    opening ??= import('@libsql/client')
      .then(({ createClient }) => {
        client = createClient({ url, timeout: SQLITE_BUSY_TIMEOUT_MS, concurrency: 1 })
        return client
      })
      .catch((cause: unknown) => {
        opening = undefined
        throw new PusharyStoreError({
          code: 'invalid_options',
          operation: 'createSqliteReviewStore',
          field: 'url',
          message: `cannot open ${url}: ${cause instanceof Error ? cause.message : String(cause)}`,
          cause,
        })
      })
    return opening
  }

  let queue: Promise<unknown> = Promise.resolve()
  function serial<T>(body: () => Promise<T>): Promise<T> {
    const result = queue.then(body, body)
    queue = result.catch(() => undefined)
    return result
  }

  // The retries keep the operation's turn: a process has one contender for
  // the file's lock at a time, its operations keep their order, and the
  // budget measures how long the file stayed locked, not how long the
  // operation queued behind this process's others.
  async function attempt<T>(operation: string, body: (client: Client) => Promise<T>): Promise<T> {
    const db = await connect()
    const deadline = Date.now() + busyTimeoutMs
    for (let tries = 1; ; tries += 1) {
      try {
        return await body(db)
      } catch (error) {
        if (!isBusy(error)) throw error
        // Within this turn, before anything else can run on it (see above).
        await db.reconnect()
        if (Date.now() >= deadline || tries >= MAX_BUSY_ATTEMPTS) {
          throw new PusharyStoreError({
            code: 'database_busy',
            operation,
            message: `the database stayed locked for ${busyTimeoutMs} ms (${tries} attempts); retry later`,
            cause: error,
          })
        }
        // Full jitter keeps several waiting processes from retrying in lockstep.
        await sleep(Math.random() * Math.min(2 ** tries, 40))
      }
    }
  }

  return {
    run: (operation, body) => serial(() => attempt(operation, body)),
    async close() {
      await queue
      // An open still loading finishes first, so its connection is closed too.
      await opening?.catch(() => undefined)
      client?.close()
    },
  }
}
