import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { createPostgresReviewStore } from '../../src/store/postgres-store.js'
import type { PusharyReviewStore } from '../../src/store/review-store.js'
import { createSqliteReviewStore } from '../../src/store/sqlite-store.js'
import { nodeScript } from '../helpers/node-script.js'
import type { ClaimWorkerConfig, ClaimWorkerResult } from './fixtures/claim-worker.js'
import { dropSchema, ensurePostgres, type TestPostgres, uniqueSchema } from './support/postgres.js'
import { agentReview } from './support/reviews.js'

const WORKERS = 8
const RUNS = 50
const PER_RUN = 4
const WORKER = fileURLToPath(new URL('./fixtures/claim-worker.ts', import.meta.url))

interface RaceTarget {
  readonly store: PusharyReviewStore
  readonly workerStore: ClaimWorkerConfig['store']
}

interface RunningWorker {
  readonly child: ChildProcess
  readonly ready: Promise<void>
  readonly done: Promise<ClaimWorkerResult>
}

function startWorker(config: ClaimWorkerConfig): RunningWorker {
  const child = spawn(process.execPath, [...nodeScript(WORKER), JSON.stringify(config)], {
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  let markReady: () => void = () => undefined
  const ready = new Promise<void>((resolve) => {
    markReady = resolve
  })
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk
    if (stdout.includes('"ready"')) markReady()
  })
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
  })
  const done = new Promise<ClaimWorkerResult>((resolve, reject) => {
    child.on('error', reject)
    child.on('exit', (code) => {
      const last = stdout.trim().split('\n').at(-1) ?? ''
      if (code !== 0 || !last.includes('"claimed"')) {
        reject(new Error(`worker ${config.worker} exited with ${code}: ${stderr || stdout}`))
        return
      }
      resolve(JSON.parse(last) as ClaimWorkerResult)
    })
  })
  // A worker that dies before reporting ready must fail the race, not hang it.
  return { child, ready: Promise.race([ready, done.then(() => undefined)]), done }
}

/** Polls the store during the race and records the most resuming reviews any run ever had at once. */
function watchRuns(store: PusharyReviewStore): { stop(): Promise<{ maxPerRun: number; polls: number }> } {
  let running = true
  let maxPerRun = 0
  let polls = 0
  const loop = (async () => {
    while (running) {
      const resuming = await store.listByState('resuming', { limit: 1000 })
      const perRun = new Map<string, number>()
      for (const review of resuming) perRun.set(review.runId, (perRun.get(review.runId) ?? 0) + 1)
      maxPerRun = Math.max(maxPerRun, ...perRun.values(), 0)
      polls += 1
      await new Promise((resolve) => setTimeout(resolve, 2))
    }
  })()
  return {
    async stop() {
      running = false
      await loop
      return { maxPerRun, polls }
    },
  }
}

async function race(target: RaceTarget) {
  const reviews = Array.from({ length: RUNS }, () => {
    const first = agentReview()
    return [first, ...Array.from({ length: PER_RUN - 1 }, () => agentReview({ runId: first.runId }))]
  }).flat()
  expect(new Set(reviews.map((review) => review.runId)).size).toBe(RUNS)
  for (const review of reviews) await target.store.save(review)
  const decisions = reviews.map(({ decisionId, runId }) => ({ decisionId, runId }))

  const workers = Array.from({ length: WORKERS }, (_, worker) =>
    startWorker({ worker, store: target.workerStore, decisions }),
  )
  await Promise.all(workers.map((worker) => worker.ready))
  const watcher = watchRuns(target.store)
  for (const worker of workers) worker.child.stdin?.end('go\n')
  const settled = await Promise.allSettled(workers.map((worker) => worker.done))
  const watched = await watcher.stop()
  const results = settled.map((outcome) => {
    if (outcome.status === 'rejected') throw outcome.reason
    return outcome.value
  })
  return { reviews, results, watched }
}

async function assertSingleWinner(target: RaceTarget) {
  const { reviews, results, watched } = await race(target)
  const claims = results.flatMap((result) => result.claimed)

  expect(new Set(results.map((result) => result.pid)).size).toBe(WORKERS)
  expect(claims).toHaveLength(reviews.length)
  expect(new Set(claims).size).toBe(reviews.length)
  expect(results.reduce((sum, result) => sum + result.claimed.length, 0)).toBe(reviews.length)
  for (const result of results) {
    expect(result.claimed.length + result.settled, `worker ${result.worker}`).toBe(reviews.length)
    expect(result.violations, `worker ${result.worker}`).toEqual([])
  }
  expect(watched.maxPerRun).toBeLessThanOrEqual(1)

  for (const review of reviews) {
    expect((await target.store.get(review.decisionId))?.state).toBe('completed')
    const history = await target.store.history(review.decisionId)
    expect(history.filter((entry) => entry.event === 'CLAIM')).toHaveLength(1)
  }
}

describe('claims raced by 8 OS processes over 200 decisions in 50 runs', () => {
  const cleanups: (() => Promise<void>)[] = []
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup()
  })

  it('gives each decision exactly one winner and never two resuming reviews in a run, on one SQLite file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pushary-race-'))
    const url = `file:${join(dir, 'reviews.db')}`
    const store = createSqliteReviewStore({ url })
    cleanups.push(async () => {
      await store.close()
      rmSync(dir, { recursive: true, force: true })
    })
    await assertSingleWinner({ store, workerStore: { kind: 'sqlite', url } })
  }, 180_000)

  it('gives each decision exactly one winner and never two resuming reviews in a run, on PostgreSQL', async () => {
    const server: TestPostgres = await ensurePostgres()
    const schema = uniqueSchema('race')
    const { connectionString } = server
    const store = createPostgresReviewStore({ connectionString, schema })
    cleanups.push(async () => {
      await store.close()
      await dropSchema(connectionString, schema)
      await server.stop()
    })
    await assertSingleWinner({ store, workerStore: { kind: 'postgres', connectionString, schema } })
  }, 180_000)
})
