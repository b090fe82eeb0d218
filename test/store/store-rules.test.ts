/**
 * The one-active-review-per-run rule is guarded twice: by the store's own
 * check inside the claim transaction and by the database's partial unique
 * index. Each hides the other's absence, so each is tested here alone, on a
 * real SQLite file: once with the index dropped, once with the store's check
 * bypassed in the driver. The one-statement claims and transitions, and
 * the indexes they rely on, are tested at the end.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Client, createClient } from '@libsql/client'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { PusharyReviewStore } from '../../src/store/review-store.js'
import { createSqliteReviewDriver, createSqliteReviewStore } from '../../src/store/sqlite-store.js'
import { createReviewStore } from '../../src/store/store-core.js'
import type { ReviewStoreDriver } from '../../src/store/store-driver.js'
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

/**
 * The real SQLite driver, except that its claims run as transactions that
 * never report an active review of the run (the one-statement claim checks
 * in its own SQL, so it is taken away here).
 */
function withoutStoreCheck({ claimInOneStatement: _, ...driver }: ReviewStoreDriver): ReviewStoreDriver {
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

async function failure(promise: Promise<unknown>) {
  try {
    await promise
  } catch (error) {
    return error as { code: string; operation: string; field: string; message: string }
  }
  throw new Error('expected the store to refuse')
}

const SINCE = '2030-01-01T00:00:00.000Z'

describe('what a refusing store tells the caller', () => {
  it('names the operation and the field of every bad argument', async () => {
    store = createSqliteReviewStore({ url })
    const s = store
    const cases: [Promise<unknown>, string, string][] = [
      [s.get(' '), 'get', 'decisionId'],
      [s.claim(' ', 'run_1'), 'claim', 'decisionId'],
      [s.claim('dec_1', ' '), 'claim', 'runId'],
      [s.finish(' ', 'completed'), 'finish', 'decisionId'],
      [s.finish('dec_1', 'completed', 5 as never), 'finish', 'reason'],
      [s.finish('dec_1', 'resuming' as never), 'finish', 'state'],
      [s.recover(' ', 'stale', 'checked'), 'recover', 'decisionId'],
      [s.recover('dec_1', 'resuming' as never, 'checked'), 'recover', 'outcome'],
      [s.recover('dec_1', 'stale', ' '), 'recover', 'reason'],
      [s.reclaim(' ', SINCE, 'crash'), 'reclaim', 'decisionId'],
      [s.reclaim('dec_1', 'yesterday', 'crash'), 'reclaim', 'since'],
      [s.reclaim('dec_1', SINCE, ' '), 'reclaim', 'reason'],
      [s.claimState(' '), 'claimState', 'decisionId'],
      [s.keepAlive(' ', SINCE), 'keepAlive', 'decisionId'],
      [s.keepAlive('dec_1', 'now'), 'keepAlive', 'since'],
      [s.listByState('waiting' as never, { limit: 5 }), 'listByState', 'state'],
      [s.listByState('pending', { limit: 1001 }), 'listByState', 'limit'],
      [s.listByState('pending', { limit: 5, after: ' ' }), 'listByState', 'after'],
      [s.listByState('pending', undefined as never), 'listByState', 'limit'],
      [s.history(' '), 'history', 'decisionId'],
      [s.listReceipts(' '), 'listReceipts', 'decisionId'],
      [
        s.recordReceipt({ decisionId: 'dec_1', receivedAt: 'now', body: '{}' }),
        'recordReceipt',
        'receivedAt',
      ],
      [s.save({ ...agentReview(), runId: ' ' }), 'save', 'runId'],
    ]
    for (const [promise, operation, field] of cases) {
      expect(await failure(promise), `${operation} ${field}`).toMatchObject({ operation, field })
    }
    expect(await s.listByState('pending', { limit: 1000 })).toEqual([])
    const resuming = await failure(s.save({ ...agentReview(), state: 'resuming' }))
    expect(resuming).toMatchObject({ code: 'invalid_review', operation: 'save', field: 'state' })
    expect(resuming.message).toContain('a review is saved as pending, got resuming')
  })

  it('names the decision and the refused event in not_found, run_mismatch, not_recoverable and conflict errors', async () => {
    store = createSqliteReviewStore({ url })
    expect(await failure(store.finish('dec_gone', 'completed'))).toMatchObject({
      code: 'not_found',
      operation: 'finish',
      field: 'decisionId',
      message: expect.stringContaining('no review for decision "dec_gone"'),
    })
    expect(await failure(store.reclaim('dec_gone', SINCE, 'crash'))).toMatchObject({
      code: 'not_found',
      operation: 'reclaim',
      field: 'decisionId',
      message: expect.stringContaining('no review for decision "dec_gone"'),
    })
    expect(await failure(store.claim('dec_gone', 'run_1'))).toMatchObject({
      code: 'not_found',
      operation: 'claim',
      message: expect.stringContaining('no review for decision "dec_gone"; call get first'),
    })
    expect(await store.keepAlive('dec_gone', SINCE)).toBeNull()
    const review = agentReview()
    await store.save(review)
    expect(await failure(store.claim(review.decisionId, 'run_other'))).toMatchObject({
      operation: 'claim',
      message: expect.stringContaining(`is bound to run "${review.runId}", not "run_other"`),
    })
    expect(await failure(store.save({ ...review, toolName: 'refund.delete' }))).toMatchObject({
      code: 'conflicting_binding',
      operation: 'save',
      message: expect.stringContaining(
        `decision "${review.decisionId}" is already bound to a different review`,
      ),
    })
    await store.claim(review.decisionId, review.runId)
    await store.finish(review.decisionId, 'completed')
    expect(await failure(store.recover(review.decisionId, 'stale', 'checked'))).toMatchObject({
      code: 'not_recoverable',
      operation: 'recover',
      message: expect.stringContaining('is completed; the lifecycle refuses OPERATOR_CONFIRMED_NOT_EXECUTED'),
    })
  })

  it('returns a review to pending on a resume that ran nothing and on an operator reopen', async () => {
    store = createSqliteReviewStore({ url })
    const review = agentReview()
    await store.save(review)
    await store.claim(review.decisionId, review.runId)
    await store.finish(review.decisionId, 'pending', 'the same step is suspended again')
    await store.claim(review.decisionId, review.runId)
    await store.finish(review.decisionId, 'uncertain', 'resume threw')
    await store.recover(review.decisionId, 'pending', 'operator: nothing ran, ask again')
    expect((await store.get(review.decisionId))?.state).toBe('pending')
    expect((await store.history(review.decisionId)).map((entry) => entry.event)).toEqual([
      null,
      'CLAIM',
      'NOT_APPLIED',
      'CLAIM',
      'FAILED_AFTER_CLAIM',
      'OPERATOR_REOPENED',
    ])
  })

  it('refuses every operation of a closed store, naming it', async () => {
    store = createSqliteReviewStore({ url })
    const s = store
    await s.close()
    const calls: [string, Promise<unknown>][] = [
      ['save', s.save(agentReview())],
      ['get', s.get('dec_1')],
      ['claim', s.claim('dec_1', 'run_1')],
      ['finish', s.finish('dec_1', 'completed')],
      ['recover', s.recover('dec_1', 'stale', 'checked')],
      ['reclaim', s.reclaim('dec_1', SINCE, 'crash')],
      ['claimState', s.claimState('dec_1')],
      ['keepAlive', s.keepAlive('dec_1', SINCE)],
      ['listByState', s.listByState('pending', { limit: 1 })],
      ['history', s.history('dec_1')],
      ['recordReceipt', s.recordReceipt({ decisionId: 'dec_1', receivedAt: SINCE, body: '{}' })],
      ['listReceipts', s.listReceipts('dec_1')],
    ]
    for (const [operation, promise] of calls) {
      expect(await failure(promise), operation).toMatchObject({
        code: 'closed',
        operation,
        message: expect.stringContaining('the store was closed'),
      })
    }
  })

  it('names the operation that found the database locked past its busy timeout', async () => {
    store = createSqliteReviewStore({ url, busyTimeoutMs: 0 })
    const review = agentReview()
    const claimed = agentReview()
    await store.save(review)
    await store.save(claimed)
    await store.claim(claimed.decisionId, claimed.runId)
    const since = (await store.claimState(claimed.decisionId))?.since ?? ''
    // Another connection holds the file's write lock (BEGIN IMMEDIATE).
    const holder = await raw.transaction('write')
    try {
      const calls: [string, Promise<unknown>][] = [
        ['save', store.save(agentReview())],
        ['claim', store.claim(review.decisionId, review.runId)],
        ['finish', store.finish(claimed.decisionId, 'completed')],
        ['recover', store.recover(claimed.decisionId, 'completed', 'checked')],
        ['reclaim', store.reclaim(claimed.decisionId, since, 'crash')],
        ['keepAlive', store.keepAlive(claimed.decisionId, since)],
      ]
      for (const [operation, promise] of calls) {
        expect(await failure(promise), operation).toMatchObject({ code: 'database_busy', operation })
      }
    } finally {
      await holder.rollback()
      holder.close()
    }
    expect((await store.get(claimed.decisionId))?.state).toBe('resuming')
  })

  it('reports a database error as storage_failed and a corrupt row under the reading operation', async () => {
    store = createSqliteReviewStore({ url })
    const review = agentReview()
    await store.save(review)
    await raw.execute({
      sql: 'UPDATE pushary_reviews SET binding = ? WHERE decision_id = ?',
      args: ['{"broken":', review.decisionId],
    })
    expect(await failure(store.get(review.decisionId))).toMatchObject({ operation: 'get' })
    expect(await failure(store.listByState('pending', { limit: 10 }))).toMatchObject({
      operation: 'listByState',
    })
    await raw.execute('DROP TABLE pushary_reviews')
    expect(await failure(store.get(review.decisionId))).toMatchObject({
      code: 'storage_failed',
      operation: 'get',
      message: expect.stringContaining('no such table'),
    })
  })
})

/** The real SQLite driver with every write as a transaction, as before claims and transitions were one statement. */
function transactionsOnly({
  claimInOneStatement: _claim,
  transitionInOneStatement: _transition,
  ...driver
}: ReviewStoreDriver): ReviewStoreDriver {
  return driver
}

describe('one-statement claims and transitions on SQLite', () => {
  it('share one file with a writer that runs them as transactions: every move recorded once, in order', async () => {
    store = createSqliteReviewStore({ url })
    const older = createReviewStore(transactionsOnly(createSqliteReviewDriver({ url })), () => new Date())
    try {
      const review = agentReview()
      await store.save(review)
      const id = review.decisionId
      expect(await older.claim(id, review.runId)).toBe('claimed')
      expect(await store.claim(id, review.runId)).toBe('busy')
      await store.finish(id, 'pending', 'the same step is suspended again')
      expect(await store.claim(id, review.runId)).toBe('claimed')
      const since = (await older.claimState(id))?.since ?? ''
      expect(await store.reclaim(id, since, 'holder gone')).toBe(true)
      expect(await older.reclaim(id, since, 'holder gone')).toBe(false)
      await older.finish(id, 'uncertain', 'resume threw')
      await store.recover(id, 'completed', 'operator: it ran')
      expect(await older.claim(id, review.runId)).toBe('settled')

      const history = await store.history(id)
      expect(history.map(({ from, to, event }) => [from, to, event])).toEqual([
        [null, 'pending', null],
        ['pending', 'resuming', 'CLAIM'],
        ['resuming', 'pending', 'NOT_APPLIED'],
        ['pending', 'resuming', 'CLAIM'],
        ['resuming', 'resuming', 'RECLAIM'],
        ['resuming', 'uncertain', 'FAILED_AFTER_CLAIM'],
        ['uncertain', 'completed', 'OPERATOR_CONFIRMED_EXECUTED'],
      ])
      expect(history.map((entry) => entry.reason)).toEqual([
        null,
        null,
        'the same step is suspended again',
        null,
        'holder gone',
        'resume threw',
        'operator: it ran',
      ])
      // The review row carries the last transition exactly, whichever writer made it.
      const row = await raw.execute({
        sql: 'SELECT state, reason, state_changed_at FROM pushary_reviews WHERE decision_id = ?',
        args: [id],
      })
      expect(row.rows[0]).toMatchObject({
        state: 'completed',
        reason: 'operator: it ran',
        state_changed_at: history.at(-1)?.at,
      })
    } finally {
      await older.close()
    }
  })

  it('moves nothing and writes no history when the compare-and-set fails', async () => {
    store = createSqliteReviewStore({ url })
    const review = agentReview()
    await store.save(review)
    const id = review.decisionId
    expect(await failure(store.finish(id, 'completed'))).toMatchObject({
      code: 'not_claimed',
      message: expect.stringContaining('is pending; the lifecycle refuses RESUMED there'),
    })
    await store.claim(id, review.runId)
    expect(await store.reclaim(id, SINCE, 'holder gone')).toBe(false)
    expect(await failure(store.recover(id, 'pending', 'operator: reopen'))).toMatchObject({
      code: 'not_recoverable',
      message: expect.stringContaining('is resuming; the lifecycle refuses OPERATOR_REOPENED there'),
    })
    expect((await store.history(id)).map((entry) => entry.event)).toEqual([null, 'CLAIM'])
    expect((await store.get(id))?.state).toBe('resuming')
  })
})

describe('the SQLite indexes', () => {
  it('answer the active-review check from the partial unique index, and drop the older (run_id, state) index', async () => {
    // A file an earlier release wrote has the (run_id, state) index.
    const earlier = createSqliteReviewStore({ url })
    await earlier.get('dec_none')
    await earlier.close()
    await raw.execute('CREATE INDEX pushary_reviews_run ON pushary_reviews (run_id, state)')
    store = createSqliteReviewStore({ url })
    const review = agentReview()
    await store.save(review)
    expect(await store.claim(review.decisionId, review.runId)).toBe('claimed')
    const indexes = await raw.execute(
      "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'pushary_reviews'",
    )
    expect(indexes.rows.map((row) => row.name)).not.toContain('pushary_reviews_run')
    const plan = await raw.execute(
      "EXPLAIN QUERY PLAN SELECT 1 FROM pushary_reviews WHERE run_id = 'r' AND state IN ('resuming', 'uncertain')",
    )
    expect(plan.rows.map((row) => String(row.detail)).join(' ')).toContain(
      'pushary_reviews_one_active_per_run',
    )
  })
})

describe('the SQLite history trigger', () => {
  // The trigger and history table as the release before the notes wrote them.
  const EARLIER_TRIGGER = `CREATE TRIGGER IF NOT EXISTS pushary_review_transition_applies
    AFTER INSERT ON pushary_review_transitions WHEN NEW.from_state IS NOT NULL
    BEGIN
      UPDATE pushary_reviews SET state = NEW.to_state, reason = NEW.reason, state_changed_at = NEW.at
      WHERE decision_id = NEW.decision_id;
    END`

  it('replaces the earlier release trigger on a file it wrote, and a claim and an ending carry their notes in one statement', async () => {
    const earlier = createSqliteReviewStore({ url })
    await earlier.get('dec_none')
    await earlier.close()
    // Back to the earlier file: its trigger, no note columns on the history.
    await raw.execute('DROP TRIGGER pushary_review_transition_applies_v2')
    await raw.execute('ALTER TABLE pushary_review_transitions DROP COLUMN action')
    await raw.execute('ALTER TABLE pushary_review_transitions DROP COLUMN answered_at')
    await raw.execute(EARLIER_TRIGGER)
    store = createSqliteReviewStore({ url })
    const review = agentReview()
    await store.save(review)
    const answeredAt = '2026-12-07T06:00:00.000Z'
    expect(await store.claim(review.decisionId, review.runId, undefined, { answeredAt })).toBe('claimed')
    await store.finish(review.decisionId, 'completed', undefined, {
      outcome: 'ran',
      reason: 'the refund ran',
    })
    const triggers = await raw.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
    expect(triggers.rows.map((row) => row.name)).toEqual(['pushary_review_transition_applies_v2'])
    const row = await raw.execute({
      sql: 'SELECT state, answered_at, action FROM pushary_reviews WHERE decision_id = ?',
      args: [review.decisionId],
    })
    expect(row.rows[0]).toMatchObject({ state: 'completed', answered_at: answeredAt })
    expect(JSON.parse(String(row.rows[0]?.action))).toMatchObject({ outcome: 'ran' })
  })

  it('keeps the notes when a process of the earlier release re-creates its trigger beside this one', async () => {
    store = createSqliteReviewStore({ url })
    const review = agentReview()
    await store.save(review)
    await raw.execute(EARLIER_TRIGGER)
    const answeredAt = '2026-12-07T06:00:00.000Z'
    expect(await store.claim(review.decisionId, review.runId, undefined, { answeredAt })).toBe('claimed')
    await store.finish(review.decisionId, 'completed', undefined, {
      outcome: 'ran',
      reason: 'the refund ran',
    })
    // The earlier release appends history rows without notes: they keep what is there.
    await raw.execute({
      sql: `INSERT INTO pushary_review_transitions (decision_id, from_state, to_state, event, reason, at)
            VALUES (?, 'pending', 'resuming', 'CLAIM', NULL, '2026-12-07T06:01:00.000Z')`,
      args: [review.decisionId],
    })
    const row = await raw.execute({
      sql: 'SELECT answered_at, action FROM pushary_reviews WHERE decision_id = ?',
      args: [review.decisionId],
    })
    expect(row.rows[0]?.answered_at).toBe(answeredAt)
    expect(JSON.parse(String(row.rows[0]?.action))).toMatchObject({ outcome: 'ran' })
  })
})
