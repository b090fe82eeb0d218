/**
 * `pushary-mastra reviews stats` as a separate OS process over a real SQLite
 * review store and a real PostgreSQL schema: `--json` prints exactly what
 * `readPusharyReviewStats` returns for the same window, the text names the
 * same counts and ages, and bad arguments are refused before any database.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPostgresReviewStore } from '../../src/store/postgres-store.js'
import { readPusharyReviewStats } from '../../src/store/review-stats.js'
import type { PusharyReviewStore } from '../../src/store/review-store.js'
import { createSqliteReviewStore } from '../../src/store/sqlite-store.js'
import { jsonOf, runCli } from '../reliability/support/cli.js'
import { dropSchema, ensurePostgres, type TestPostgres, uniqueSchema } from '../store/support/postgres.js'
import { workflowReview } from '../store/support/reviews.js'

const T0 = Date.parse('2031-05-01T09:00:00.000Z')
const at = (minutes: number) => new Date(T0 + minutes * 60_000)

/** Pending (asked at 0 and 5), one answered and waiting, one misconfigured, two completed, one uncertain. */
async function seed(store: PusharyReviewStore, clock: { now: Date }): Promise<void> {
  const save = async (minute: number) => {
    clock.now = at(minute)
    const review = workflowReview()
    await store.save(review)
    return review
  }
  await save(0)
  const answered = await save(5)
  await store.recordAnswered(answered.decisionId, at(6).toISOString())
  const misconfigured = await save(7)
  await store.recordMisconfigured(misconfigured.decisionId, 'workflow')
  for (const [minute, latency] of [
    [1, 2],
    [2, 9],
  ] as const) {
    const review = await save(minute)
    await store.recordAnswered(review.decisionId, at(minute + 1).toISOString())
    await store.claim(review.decisionId, review.runId)
    clock.now = at(minute + 1 + latency)
    await store.finish(review.decisionId, 'completed')
  }
  const uncertain = await save(3)
  await store.claim(uncertain.decisionId, uncertain.runId)
  clock.now = at(20)
  await store.finish(uncertain.decisionId, 'uncertain', 'the run ended failed after the resume')
}

let postgres: TestPostgres
let dir: string

beforeAll(async () => {
  postgres = await ensurePostgres()
  dir = mkdtempSync(join(tmpdir(), 'pushary-cli-stats-'))
})
afterAll(async () => {
  await postgres?.stop()
  rmSync(dir, { recursive: true, force: true })
})

const window = ['--since', at(0).toISOString(), '--now', at(30).toISOString()]

describe.each([{ name: 'sqlite' as const }, { name: 'postgres' as const }])(
  'reviews stats on $name',
  ({ name }) => {
    it('prints, as --json, what readPusharyReviewStats returns, and the same counts and ages as text', async () => {
      const clock = { now: at(0) }
      const schema = uniqueSchema('cli_stats')
      const file = join(dir, `${name}.db`)
      const store =
        name === 'sqlite'
          ? createSqliteReviewStore({ url: `file:${file}`, now: () => clock.now })
          : createPostgresReviewStore({
              connectionString: postgres.connectionString,
              schema,
              now: () => clock.now,
            })
      const flags =
        name === 'sqlite' ? ['--db', file] : ['--pg', postgres.connectionString, '--schema', schema]
      try {
        await seed(store, clock)
        const expected = await readPusharyReviewStats(store, { since: at(0), now: at(30) })
        expect(expected.pending).toMatchObject({ count: 3, answered: 1, oldestAgeMs: 30 * 60_000 })
        expect(expected.answeredToResumed).toMatchObject({
          count: 2,
          medianMs: 2 * 60_000,
          maxMs: 9 * 60_000,
        })

        const json = await runCli(['reviews', 'stats', ...flags, ...window, '--json'])
        expect(json.stderr).toBe('')
        expect(json.code).toBe(0)
        expect(jsonOf(json)).toEqual(expected)

        const text = await runCli(['reviews', 'stats', ...flags, ...window])
        expect(text.code).toBe(0)
        const lines = text.stdout.split('\n')
        expect(lines).toContain(`  pending         3  oldest 30m 0s (since ${at(0).toISOString()})`)
        expect(lines).toContain(`  uncertain       1  oldest 10m 0s (since ${at(20).toISOString()})`)
        expect(lines).toContain('  answered, not resumed  1  oldest answer 24m 0s ago')
        expect(lines).toContain('  misconfigured          1  (workflow 1)')
        expect(lines).toContain('  answered to resumed    2 resumes, median 2m 0s, p95 9m 0s, max 9m 0s')
        expect(lines).toContain('  endings                completed 2, stale 0, uncertain 1')
      } finally {
        await store.close()
        if (name === 'postgres') await dropSchema(postgres.connectionString, schema)
      }
    })
  },
)

it('refuses a bad window before opening any store', async () => {
  const missing = join(tmpdir(), 'pushary-no-such-store.db')
  const bad = await runCli(['reviews', 'stats', '--db', missing, '--since', 'yesterday'])
  expect(bad.code).toBe(2)
  expect(bad.stderr).toContain('--since must be an ISO time')
  const reversed = await runCli([
    'reviews',
    'stats',
    '--db',
    missing,
    '--since',
    at(5).toISOString(),
    '--now',
    at(0).toISOString(),
  ])
  expect(reversed.code).toBe(2)
  expect(reversed.stderr).toContain('--since must not be after --now')
})
