/**
 * Store claims, issue 12 target 5: N pending reviews (one run each), shared
 * out among W worker processes like callbacks among resumers, and every
 * review is also handed to a second worker (a duplicate delivery) so each
 * one is raced by two processes. Claims/s = N / (last worker done − common
 * start). On PostgreSQL each row has its floor beside it: the store's own
 * claim statement sent through a plain pg client per process. Every worker
 * first claims reviews of its own, not counted, so both sides are measured
 * warm, as a long-lived worker runs. The bench fails unless every review was won exactly once (zero
 * double claims) and the store holds exactly N reviews `resuming`.
 */
import { spawn } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { createPostgresReviewStore } from '../../src/store/postgres-store.js'
import type { PusharyReviewStore } from '../../src/store/review-store.js'
import { createSqliteReviewStore } from '../../src/store/sqlite-store.js'
import { dropSchema, ensurePostgres } from '../../test/store/support/postgres.js'
import { workflowReview } from '../../test/store/support/reviews.js'
import type { ClaimWorkerConfig, ClaimWorkerReport } from '../fixtures/claim-worker.js'
import type { Row } from '../lib/report.js'

const GROUP = '5. Store claims'
/** Claims each worker makes on its own reviews before the start line (JIT warm-up; not counted). */
const WARMUP_CLAIMS = 100
const ROOT = join(import.meta.dirname, '../..')

let configs = 0

function startWorker(worker: string, dir: string, config: ClaimWorkerConfig) {
  // Thousands of decision IDs exceed what one argv string may hold: pass a file.
  const path = join(dir, `claim-worker-${process.pid}-${configs++}.json`)
  writeFileSync(path, JSON.stringify(config))
  const child = spawn(process.execPath, [worker, path], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  const lines = createInterface({ input: child.stdout })
  const received: string[] = []
  let wake: (() => void) | undefined
  lines.on('line', (line) => {
    received.push(line)
    wake?.()
  })
  const line = async (): Promise<string> => {
    while (received.length === 0) {
      await new Promise<void>((resolve, reject) => {
        wake = resolve
        child.once('exit', (code) => reject(new Error(`claim worker exited ${code}`)))
      })
    }
    return received.shift() as string
  }
  return { child, line }
}

async function countResuming(store: PusharyReviewStore): Promise<number> {
  let count = 0
  let after: string | undefined
  for (;;) {
    const page = await store.listByState('resuming', { limit: 500, ...(after ? { after } : {}) })
    count += page.length
    if (page.length < 500) return count
    after = page.at(-1)?.decisionId
  }
}

async function race(
  worker: string,
  dir: string,
  storeConfig: ClaimWorkerConfig['store'],
  open: () => PusharyReviewStore,
  reviews: number,
  workers: number,
  bare: boolean,
): Promise<{ perSecond: number; attempts: number }> {
  const store = open()
  const saved = async (count: number) => {
    const made: ClaimWorkerConfig['decisions'] = []
    for (let index = 0; index < count; index++) {
      const review = workflowReview({ forEachIndex: null })
      await store.save(review)
      made.push({ decisionId: review.decisionId, runId: review.runId })
    }
    return made
  }
  const decisions = await saved(reviews)
  // Each worker's own warm-up reviews, claimed before the start line.
  const warmups = await Promise.all(Array.from({ length: workers }, () => saved(WARMUP_CLAIMS)))
  // Worker k owns every review i with i % W === k and also gets its
  // neighbour's share: with two or more workers each review is raced twice.
  const handed = (k: number) =>
    decisions.filter(
      (_, index) => index % workers === k || (workers > 1 && index % workers === (k + 1) % workers),
    )
  const running = Array.from({ length: workers }, (_, k) =>
    startWorker(worker, dir, { store: storeConfig, decisions: handed(k), warmups: warmups[k] ?? [], bare }),
  )
  for (const worker of running) if ((await worker.line()) !== 'ready') throw new Error('worker not ready')
  const go = performance.timeOrigin + performance.now()
  for (const worker of running) worker.child.stdin.write('go\n')
  const reports = await Promise.all(
    running.map(async (worker) => JSON.parse(await worker.line()) as ClaimWorkerReport),
  )
  const won = reports.flatMap((report) => report.won)
  const distinct = new Set(won)
  const resuming = await countResuming(store)
  await store.close()
  const warmed = workers * WARMUP_CLAIMS
  if (won.length !== reviews || distinct.size !== reviews || resuming !== reviews + warmed) {
    throw new Error(
      `double or lost claims: ${won.length} wins for ${distinct.size} distinct of ${reviews} reviews, ${resuming} resuming (${warmed} of them warm-ups)`,
    )
  }
  const end = Math.max(...reports.map((report) => report.endedAt))
  const attempts = reports.reduce((sum, report) => sum + report.attempts, 0)
  return { perSecond: reviews / ((end - go) / 1000), attempts }
}

export async function benchClaims(options: {
  pkg: string
  dir: string
  reviews: number
  workers: readonly number[]
}): Promise<Row[]> {
  const worker = fileURLToPath(new URL('claim-worker.js', options.pkg))
  const rows: Row[] = []
  const postgres = await ensurePostgres()
  try {
    for (const kind of ['sqlite', 'postgres'] as const) {
      for (const workers of options.workers) {
        // On PostgreSQL the store's row stands beside its floor: the same
        // claim statement from the same number of processes through one
        // plain pg client each. Rounds alternate A B B A at every worker
        // count, each on its own file or schema; each side reports its mean.
        // (With A B only, the store always ran first: 0.61–0.84× at one
        // worker across runs, 0.99× in A B B A on the same machine.)
        const order: boolean[] = kind === 'sqlite' ? [false] : [false, true, true, false]
        const results = { ours: [] as number[], bare: [] as number[], attempts: 0 }
        for (const [round, bare] of order.entries()) {
          const tag = `${kind}-${workers}-${round}-${process.pid}`
          const schema = `pushary_bench_${workers}_${round}_${process.pid}`
          const storeConfig: ClaimWorkerConfig['store'] =
            kind === 'sqlite'
              ? { kind, url: `file:${join(options.dir, `claims-${tag}.db`)}` }
              : { kind, connectionString: postgres.connectionString, schema }
          const open = () =>
            storeConfig.kind === 'sqlite'
              ? createSqliteReviewStore({ url: storeConfig.url })
              : createPostgresReviewStore({
                  connectionString: storeConfig.connectionString,
                  schema: storeConfig.schema,
                })
          try {
            const result = await race(worker, options.dir, storeConfig, open, options.reviews, workers, bare)
            if (bare) results.bare.push(result.perSecond)
            else {
              results.ours.push(result.perSecond)
              results.attempts = result.attempts
            }
          } finally {
            if (kind === 'postgres') await dropSchema(postgres.connectionString, schema)
          }
        }
        const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length
        const perSecond = mean(results.ours)
        const goal = kind === 'postgres' && workers === 16
        const rounds = results.ours.length > 1 ? `, mean of ${results.ours.length} rounds` : ''
        rows.push({
          group: GROUP,
          scenario: `${kind === 'sqlite' ? 'SQLite (one file, WAL)' : 'PostgreSQL'}: ${workers} worker process${workers === 1 ? '' : 'es'}`,
          params: `${options.reviews} reviews${workers > 1 ? ', each raced by two workers' : ''} (${results.attempts} claim calls${rounds}; each worker first claims ${WARMUP_CLAIMS} of its own, not counted)`,
          unit: '/s',
          median: perSecond,
          note: 'zero double claims: checked',
          ...(results.bare.length > 0
            ? {
                baseline: {
                  label: 'floor: the same statement, plain pg client per process',
                  value: mean(results.bare),
                },
              }
            : {}),
          ...(goal ? { target: '≥ 1,000 claims/s', met: perSecond >= 1000 } : {}),
        })
      }
    }
  } finally {
    await postgres.stop()
  }
  return rows
}
