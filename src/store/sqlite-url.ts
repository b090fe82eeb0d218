/**
 * Which libsql URLs the SQLite review store accepts, decided without loading
 * `@libsql/client`. The client loads on the store's first operation, so what
 * it would refuse at open is refused here, when the store is made: an
 * approval step asks the person before its first store call, and a store
 * that cannot open must not be found only then.
 */
import { statSync } from 'node:fs'
import { dirname } from 'node:path'
import { PusharyStoreError } from './store-error.js'

/** The schemes `@libsql/client` opens (anything else it refuses when it loads). */
const LIBSQL_SCHEME = /^(file|libsql|wss?|https?):/i

function isInMemory(url: string): boolean {
  return url === ':memory:' || url.startsWith('file::memory:') || /[?&]mode=memory\b/.test(url)
}

/** Why libsql could not open `url`, or `null`. */
function unopenable(url: string): string | null {
  if (!LIBSQL_SCHEME.test(url)) {
    return 'the URL scheme is not one libsql opens (file:, libsql:, ws:, wss:, http:, https:)'
  }
  if (!/^file:/i.test(url)) return null
  const path = url.replace(/^file:(\/\/(?=\/))?/i, '').replace(/\?.*$/, '')
  if (path === '') return 'a file: URL must name the database file'
  try {
    if (statSync(dirname(path)).isDirectory()) return null
  } catch {
    // reported below
  }
  return `the directory ${dirname(path)} does not exist; libsql creates the database file, not its directory`
}

function refused(message: string): PusharyStoreError {
  return new PusharyStoreError({
    code: 'invalid_options',
    operation: 'createSqliteReviewStore',
    field: 'url',
    message,
  })
}

/**
 * The store's URL, or a typed `invalid_options` error naming `url`: blank, in
 * memory (it cannot coordinate processes or survive a restart), a scheme
 * libsql does not open, or a `file:` path whose directory does not exist.
 *
 * @example
 * const url = checkedSqliteUrl('file:/var/lib/app/reviews.db')
 */
export function checkedSqliteUrl(url: unknown): string {
  if (typeof url !== 'string' || url.trim() === '') {
    throw refused('url must be a libsql URL such as file:/path/reviews.db')
  }
  if (isInMemory(url)) {
    throw refused('an in-memory database cannot coordinate processes or survive a restart; use a file')
  }
  const problem = unopenable(url)
  if (problem !== null) throw refused(`cannot open ${url}: ${problem}`)
  return url
}
