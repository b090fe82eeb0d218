/**
 * The one-active-review-per-run rule is guarded twice: by the store's own
 * check inside the claim transaction and by the database's partial unique
 * index. Each hides the other's absence, so each is tested here alone, on a
 * real SQLite file: once with the index dropped, once with the store's check
 * bypassed in the driver.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Client, createClient } from '@libsql/client'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { PusharyReviewStore } from '../../src/store/review-store.js'
import { createSqliteReviewDriver, createSqliteReviewStore } from '../../src/store/sqlite-store.js'
import { createReviewStore, type ReviewStoreDriver } from '../../src/store/store-core.js'
import { agentReview } from './support/reviews.js'

let dir: string
let url: string
let raw: Client
let store: PusharyReviewStore | undefined

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'pushary-store-rules-'))
  url = `file:${join(dir, 'reviews.db')}`
  raw = createClient({ url })
})

afterEach(async () => {
  await store?.close()
  store = undefined
  raw.close()
  rmSync(dir, { recursive: true, force: true })
})

/** The real SQLite driver, except that its transactions never report an active review of the run. */
function withoutStoreCheck(driver: ReviewStoreDriver): ReviewStoreDriver {
  return {
    ...driver,
    write: (operation, runId, body) =>
      driver.write(operation, runId, (tx) => body({ ...tx, runHasActiveReview: async () => false })),
  }
}

async function twoReviewsOfOneRun(target: PusharyReviewStore) {
  const first = agentReview()
  const second = agentReview({ runId: first.runId })
  await target.save(first)
  await target.save(second)
  return { first, second, runId: first.runId }
}

describe('one active review per run', () => {
  it('is kept by the store itself on a database without the partial unique index', async () => {
    store = createSqliteReviewStore({ url })
    const { first, second, runId } = await twoReviewsOfOneRun(store)
    await raw.execute('DROP INDEX pushary_reviews_one_active_per_run')
    // Without the index the database would accept a second active row.
    expect(await store.claim(first.decisionId, runId)).toBe('claimed')
    expect(await store.claim(second.decisionId, runId)).toBe('busy')
    await store.finish(first.decisionId, 'uncertain', 'resume threw')
    expect(await store.claim(second.decisionId, runId)).toBe('busy')
    expect((await store.get(second.decisionId))?.state).toBe('pending')
    expect((await store.history(second.decisionId)).map((entry) => entry.event)).toEqual([null])
    await store.recover(first.decisionId, 'stale', 'operator: the refund never ran')
    expect(await store.claim(second.decisionId, runId)).toBe('claimed')
  })

  it('is kept by the database index alone when the store check is bypassed, reported as busy', async () => {
    store = createReviewStore(withoutStoreCheck(createSqliteReviewDriver({ url })), () => new Date())
    const { first, second, runId } = await twoReviewsOfOneRun(store)
    expect(await store.claim(first.decisionId, runId)).toBe('claimed')
    expect(await store.claim(second.decisionId, runId)).toBe('busy')
    expect((await store.get(second.decisionId))?.state).toBe('pending')
    expect((await store.history(second.decisionId)).map((entry) => entry.event)).toEqual([null])
    const active = await raw.execute({
      sql: "SELECT decision_id FROM pushary_reviews WHERE run_id = ? AND state IN ('resuming', 'uncertain')",
      args: [runId],
    })
    expect(active.rows.map((row) => row.decision_id)).toEqual([first.decisionId])
  })

  it('lets reviews of different runs be active at the same time', async () => {
    store = createSqliteReviewStore({ url })
    const one = agentReview()
    const other = agentReview()
    await store.save(one)
    await store.save(other)
    expect(await store.claim(one.decisionId, one.runId)).toBe('claimed')
    expect(await store.claim(other.decisionId, other.runId)).toBe('claimed')
  })
})
