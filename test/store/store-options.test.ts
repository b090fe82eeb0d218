import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createClient } from '@libsql/client'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { isPusharyError } from '../../src/pushary/errors.js'
import { createPostgresReviewStore } from '../../src/store/postgres-store.js'
import { createSqliteReviewStore } from '../../src/store/sqlite-store.js'
import { isPusharyStoreError, PusharyStoreError } from '../../src/store/store-error.js'
import { dropSchema, ensurePostgres, type TestPostgres, uniqueSchema } from './support/postgres.js'
import { agentReview } from './support/reviews.js'

function thrown(run: () => unknown): PusharyStoreError {
  try {
    run()
  } catch (error) {
    if (error instanceof PusharyStoreError) return error
    throw error
  }
  throw new Error('expected a PusharyStoreError')
}

const dirs: string[] = []
function tempUrl(): string {
  const dir = mkdtempSync(join(tmpdir(), 'pushary-options-'))
  dirs.push(dir)
  return `file:${join(dir, 'reviews.db')}`
}

let server: TestPostgres | undefined
afterAll(async () => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  await server?.stop()
})

describe('createSqliteReviewStore', () => {
  it('refuses an in-memory database, which cannot coordinate processes', () => {
    const error = thrown(() => createSqliteReviewStore({ url: ':memory:' }))
    expect(error.code).toBe('invalid_options')
    expect(error.field).toBe('url')
    expect(isPusharyStoreError(error) && isPusharyError(error)).toBe(true)
  })

  it('refuses a blank URL and a negative busy timeout, naming the option', () => {
    expect(thrown(() => createSqliteReviewStore({ url: ' ' })).field).toBe('url')
    expect(thrown(() => createSqliteReviewStore({ url: tempUrl(), busyTimeoutMs: -1 })).field).toBe(
      'busyTimeoutMs',
    )
  })

  it('refuses, when the store is made, a URL libsql could not open (the client itself loads later)', () => {
    for (const url of ['file:/nonexistent-pushary-dir/reviews.db', 'postgres://localhost/reviews', 'file:']) {
      const error = thrown(() => createSqliteReviewStore({ url }))
      expect(error.code, url).toBe('invalid_options')
      expect(error.field, url).toBe('url')
    }
    // A file in an existing directory, and the file:// spelling of the same path, open.
    const url = tempUrl()
    expect(() => createSqliteReviewStore({ url }).close()).not.toThrow()
    expect(() => createSqliteReviewStore({ url: url.replace('file:', 'file://') }).close()).not.toThrow()
  })

  it('reports a file that cannot be opened at its first operation as a typed error, and opens once it can', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pushary-options-gone-'))
    dirs.push(dir)
    const store = createSqliteReviewStore({ url: `file:${join(dir, 'reviews.db')}` })
    rmSync(dir, { recursive: true, force: true })
    const error = await store.get('dec_1').then(
      () => null,
      (caught: unknown) => caught,
    )
    expect(isPusharyStoreError(error), String(error)).toBe(true)
    expect((error as PusharyStoreError).field).toBe('url')
    // The failed open is not remembered: once the directory is back, the same store works.
    mkdirSync(dir)
    expect(await store.get('dec_1')).toBeNull()
    await store.close()
  })

  it('switches the database file to WAL so readers never wait for a claim', async () => {
    const url = tempUrl()
    const store = createSqliteReviewStore({ url })
    await store.get('dec_1')
    await store.close()
    const raw = createClient({ url })
    expect((await raw.execute('PRAGMA journal_mode')).rows[0]?.journal_mode).toBe('wal')
    raw.close()
  })

  it('waits out another connection holding the write lock, then claims', async () => {
    const url = tempUrl()
    const store = createSqliteReviewStore({ url })
    const review = agentReview()
    await store.save(review)
    const other = createClient({ url })
    const lock = await other.transaction('write')
    const release = setTimeout(() => {
      void lock.commit().then(() => lock.close())
    }, 300)
    expect(await store.claim(review.decisionId, review.runId)).toBe('claimed')
    clearTimeout(release)
    await store.finish(review.decisionId, 'completed')
    expect((await store.get(review.decisionId))?.state).toBe('completed')
    other.close()
    await store.close()
  })

  it('reports database_busy when the lock outlives the busy timeout, and claims normally afterwards', async () => {
    const url = tempUrl()
    const store = createSqliteReviewStore({ url, busyTimeoutMs: 100 })
    const review = agentReview()
    await store.save(review)
    const other = createClient({ url })
    const lock = await other.transaction('write')
    const error = await store.claim(review.decisionId, review.runId).catch((caught: unknown) => caught)
    expect(isPusharyStoreError(error) && error.code).toBe('database_busy')
    await lock.rollback()
    lock.close()
    other.close()
    expect((await store.get(review.decisionId))?.state).toBe('pending')
    expect(await store.claim(review.decisionId, review.runId)).toBe('claimed')
    await store.finish(review.decisionId, 'completed')
    expect((await store.history(review.decisionId)).map((entry) => entry.to)).toEqual([
      'pending',
      'resuming',
      'completed',
    ])
    await store.close()
  })
})

describe('createPostgresReviewStore', () => {
  it('refuses a schema name that is not a plain identifier', () => {
    const error = thrown(() =>
      createPostgresReviewStore({
        connectionString: 'postgres://127.0.0.1/test',
        schema: 'x"; DROP TABLE y; --',
      }),
    )
    expect(error.code).toBe('invalid_options')
    expect(error.field).toBe('schema')
  })

  it('refuses options with neither a connection string nor a pool', () => {
    expect(thrown(() => createPostgresReviewStore({ connectionString: '' })).field).toBe('connectionString')
  })

  it('uses a caller-owned pool and leaves it open on close', async () => {
    server = await ensurePostgres()
    const schema = uniqueSchema('options')
    const pool = new pg.Pool({ connectionString: server.connectionString, max: 3 })
    try {
      const store = createPostgresReviewStore({ pool, schema })
      const review = agentReview()
      await store.save(review)
      expect(await store.claim(review.decisionId, review.runId)).toBe('claimed')
      await store.close()
      const rows = await pool.query(`SELECT state FROM "${schema}".pushary_reviews WHERE decision_id = $1`, [
        review.decisionId,
      ])
      expect(rows.rows[0]?.state).toBe('resuming')
    } finally {
      await pool.end()
      await dropSchema(server.connectionString, schema)
    }
  })

  it('answers busy when another review of the run became active while the claim ran, with no history entry', async () => {
    server = await ensurePostgres()
    const schema = uniqueSchema('options')
    const store = createPostgresReviewStore({ connectionString: server.connectionString, schema })
    const rival = new pg.Client({ connectionString: server.connectionString })
    await rival.connect()
    try {
      const first = agentReview()
      const second = agentReview({ runId: first.runId })
      await store.save(first)
      await store.save(second)
      // Another host's claim of `first`, written but not yet committed: the
      // claim of `second` cannot see it, so only the unique index on active
      // reviews can stop it.
      await rival.query('BEGIN')
      await rival.query(`UPDATE "${schema}".pushary_reviews SET state = 'resuming' WHERE decision_id = $1`, [
        first.decisionId,
      ])
      const claiming = store.claim(second.decisionId, first.runId)
      await new Promise((resolve) => setTimeout(resolve, 200))
      await rival.query('COMMIT')
      expect(await claiming).toBe('busy')
      expect((await store.get(second.decisionId))?.state).toBe('pending')
      expect((await store.history(second.decisionId)).map((entry) => entry.to)).toEqual(['pending'])
    } finally {
      await rival.end()
      await store.close()
      await dropSchema(server.connectionString, schema)
    }
  })

  it('reports an unreachable server as storage_failed, not a raw driver error', async () => {
    const store = createPostgresReviewStore({ connectionString: 'postgres://postgres@127.0.0.1:1/test' })
    const error = await store.get('dec_1').catch((caught: unknown) => caught)
    expect(isPusharyStoreError(error) && error.code).toBe('storage_failed')
    await store.close()
  })
})
