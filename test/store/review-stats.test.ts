/**
 * The operator's numbers (`readPusharyReviewStats`) on every store (a real
 * SQLite file and a real PostgreSQL schema): a store holding pending,
 * answered-but-waiting, misconfigured, completed, stale and uncertain
 * reviews, written through the store API with an injected clock, gives the
 * right counts, ages, latencies and endings; bad options are refused naming
 * the field; a table from an earlier release gains the columns.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { readPusharyReviewStats } from '../../src/store/review-stats.js'
import { isPusharyStoreError } from '../../src/store/store-error.js'
import { workflowReview } from './support/reviews.js'
import { STORE_KINDS, stopTestPostgres } from './support/stores.js'

afterAll(async () => {
  await stopTestPostgres()
})

const T0 = Date.parse('2031-03-01T08:00:00.000Z')
const at = (minutes: number) => new Date(T0 + minutes * 60_000)
const iso = (minutes: number) => at(minutes).toISOString()

describe.each(STORE_KINDS)('$name review store: the operator numbers', (kind) => {
  it('counts reviews per state with the oldest one’s age, answered and misconfigured pending reviews, latencies and endings in the window', async () => {
    const harness = await kind.setup('stats')
    try {
      let clock = at(0)
      const store = harness.open({ now: () => clock })
      const save = async (minute: number) => {
        clock = at(minute)
        const review = workflowReview()
        await store.save(review)
        return review
      }
      const end = async (
        review: { decisionId: string; runId: string },
        answered: number | null,
        endMinute: number,
        state: 'completed' | 'stale' | 'uncertain',
      ) => {
        // The resume path notes the answer time with its claim (one commit).
        const note = answered === null ? undefined : { answeredAt: iso(answered) }
        expect(await store.claim(review.decisionId, review.runId, undefined, note)).toBe('claimed')
        clock = at(endMinute)
        await store.finish(review.decisionId, state, `ended ${state}`)
      }

      // Waiting on a person: asked at minute 0 and minute 30.
      await save(0)
      await save(30)
      // Answered at minute 12, nobody resumed it yet (waiting on the operator).
      const waiting = await save(10)
      await store.recordAnswered(waiting.decisionId, iso(12))
      // Two workers lacked the workflow, one the storage.
      for (const gap of ['workflow', 'workflow', 'storage']) {
        const review = await save(20)
        clock = at(21)
        await store.recordMisconfigured(review.decisionId, gap)
      }
      // Five completed resumes: answered-to-resumed 1, 2, 3, 4 and 20 minutes.
      for (const [index, latency] of [1, 2, 3, 4, 20].entries()) {
        const review = await save(index)
        await end(review, 5, 5 + latency, 'completed')
        await store.recordAction(review.decisionId, {
          outcome: 'ran',
          reason: 'the run continued past the gate',
        })
      }
      // A stale ending (1 minute after its answer) and two uncertain ones (no answer noted).
      const stale = await save(1)
      await end(stale, 40, 41, 'stale')
      const uncertainEarly = await save(2)
      await end(uncertainEarly, null, 15, 'uncertain')
      const uncertainLate = await save(2)
      await end(uncertainLate, null, 45, 'uncertain')
      // An ending before the window is not counted in it.
      const before = await save(-120)
      await end(before, -119, -100, 'completed')
      // An operator confirmed one uncertain review ran: an ending by the operator.
      clock = at(50)
      await store.recover(uncertainLate.decisionId, 'completed', 'receipt rf_9 found')
      await store.recordReceipt({ decisionId: waiting.decisionId, receivedAt: iso(12), body: '{}' })

      const stats = await readPusharyReviewStats(harness.open(), { now: at(60), since: at(0) })

      expect(stats.now).toBe(iso(60))
      expect(stats.since).toBe(iso(0))
      expect(stats.states.pending).toEqual({ count: 6, oldestSince: iso(0), oldestAgeMs: 60 * 60_000 })
      expect(stats.pending).toMatchObject({ count: 6, answered: 1, oldestAnsweredAgeMs: 48 * 60_000 })
      expect(stats.states.completed.count).toBe(7)
      expect(stats.states.stale).toEqual({ count: 1, oldestSince: iso(41), oldestAgeMs: 19 * 60_000 })
      expect(stats.states.uncertain).toEqual({ count: 1, oldestSince: iso(15), oldestAgeMs: 45 * 60_000 })
      expect(stats.states.resuming).toEqual({ count: 0, oldestSince: null, oldestAgeMs: null })
      expect(stats.uncertain).toBe(1)
      expect(stats.misconfigured).toEqual({ count: 3, byGap: { workflow: 2, storage: 1 } })
      // Resume endings in the window with a noted answer: 1, 2, 3, 4, 20 (completed) and 1 (stale) minutes.
      expect(stats.answeredToResumed).toEqual({
        count: 6,
        medianMs: 2 * 60_000,
        p95Ms: 20 * 60_000,
        maxMs: 20 * 60_000,
      })
      expect(stats.endings).toEqual({
        completed: 6,
        stale: 1,
        uncertain: 2,
        byEvent: {
          RESUMED: 5,
          STALE_DETECTED: 1,
          FAILED_AFTER_CLAIM: 2,
          OPERATOR_CONFIRMED_EXECUTED: 1,
          OPERATOR_CONFIRMED_NOT_EXECUTED: 0,
        },
      })
      expect(stats.actions).toEqual({ ran: 5, failed: 0, refused: 0, not_run: 0, unknown: 0 })
      expect(stats.callbacksReceived).toBe(1)
    } finally {
      await harness.dispose()
    }
  })

  it('keeps the first answer time, and stops counting a misconfigured attempt once the review moved on', async () => {
    const harness = await kind.setup('stats_notes')
    try {
      let clock = at(0)
      const store = harness.open({ now: () => clock })
      const review = workflowReview()
      await store.save(review)
      await store.recordAnswered(review.decisionId, iso(3))
      await store.recordAnswered(review.decisionId, iso(9))
      clock = at(4)
      await store.recordMisconfigured(review.decisionId, 'agent')
      const early = await readPusharyReviewStats(store, { now: at(10), since: at(0) })
      expect(early.pending.oldestAnsweredAgeMs).toBe(7 * 60_000)
      expect(early.misconfigured).toEqual({ count: 1, byGap: { agent: 1 } })
      // Claimed and released (nothing ran): pending again, the old gap no longer counts.
      // The claim's own answer time does not replace the first one noted.
      const claimNote = { answeredAt: iso(8) }
      expect(await store.claim(review.decisionId, review.runId, undefined, claimNote)).toBe('claimed')
      clock = at(5)
      await store.finish(review.decisionId, 'pending', 'the step suspended again')
      const later = await readPusharyReviewStats(store, { now: at(10), since: at(0) })
      expect(later.misconfigured).toEqual({ count: 0, byGap: {} })
      expect(later.pending.answered).toBe(1)
    } finally {
      await harness.dispose()
    }
  })

  it('answers an empty store with zeros and nulls, and refuses bad options naming the field before any query', async () => {
    const harness = await kind.setup('stats_empty')
    try {
      const store = harness.open()
      const stats = await readPusharyReviewStats(store, { now: at(0) })
      expect(stats.since).toBe(new Date(T0 - 24 * 3_600_000).toISOString())
      expect(stats.pending).toEqual({
        count: 0,
        oldestSince: null,
        oldestAgeMs: null,
        answered: 0,
        oldestAnsweredAgeMs: null,
      })
      expect(stats.answeredToResumed).toEqual({ count: 0, medianMs: null, p95Ms: null, maxMs: null })
      for (const [options, field] of [
        [{ now: new Date(Number.NaN) }, 'now'],
        [{ since: '2031-01-01' }, 'since'],
        [{ now: at(0), since: at(1) }, 'since'],
      ] as const) {
        const error = await readPusharyReviewStats(store, options as never).catch((caught: unknown) => caught)
        expect(isPusharyStoreError(error) && { code: error.code, field: error.field }).toEqual({
          code: 'invalid_argument',
          field,
        })
      }
      await expect(store.recordAnswered('dec_missing', iso(0))).rejects.toMatchObject({ code: 'not_found' })
      await expect(store.recordMisconfigured('dec_missing', 'agent')).rejects.toMatchObject({
        code: 'not_found',
      })
    } finally {
      await harness.dispose()
    }
  })

  it('adds the note columns to a table created before them, and reads its rows', async () => {
    const harness = await kind.setup('stats_migrate')
    try {
      await harness.createPrePermitTable()
      const store = harness.open({ now: () => at(0) })
      const review = workflowReview()
      await store.save(review)
      await store.recordAnswered(review.decisionId, iso(0))
      const stats = await readPusharyReviewStats(store, { now: at(1), since: at(0) })
      expect(stats.pending).toMatchObject({ count: 1, answered: 1 })
    } finally {
      await harness.dispose()
    }
  })
})

describe('the docs sample (docs/operations.md "Review numbers")', () => {
  it('reads the numbers into gauges from an empty store', async () => {
    process.env.README_SAMPLES_DIR = mkdtempSync(join(tmpdir(), 'pushary-stats-sample-'))
    const sample = await import('../readme/samples/review-stats.js')
    try {
      expect(Object.fromEntries(sample.gauges)).toEqual({
        pushary_pending: 0,
        pushary_oldest_pending_ms: 0,
        pushary_uncertain: 0,
      })
    } finally {
      await sample.store.close()
    }
  })
})
