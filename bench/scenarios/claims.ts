/**
 * Store claims, issue 12 target 5: N pending reviews (one run each), shared
 * out among W worker processes like callbacks among resumers, and every
 * review is also handed to a second worker (a duplicate delivery) so each
 * one is raced by two processes. Claims/s = N / (last worker done − common
 * start). The bench fails unless every review was won exactly once (zero
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
): Promise<{ perSecond: number; attempts: number }> {
  const store = open()
  const decisions: ClaimWorkerConfig['decisions'] = []
  for (let index = 0; index < reviews; index++) {
    const review = workflowReview({ forEachIndex: null })
    await store.save(review)
    decisions.push({ decisionId: review.decisionId, runId: review.runId })
  }
  // Worker k owns every review i with i % W === k and also gets its
  // neighbour's share: with two or more workers each review is raced twice.
  const handed = (k: number) =>
    decisions.filter(
      (_, index) => index % workers === k || (workers > 1 && index % workers === (k + 1) % workers),
    )
  const running = Array.from({ length: workers }, (_, k) =>
    startWorker(worker, dir, { store: storeConfig, decisions: handed(k) }),
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
  if (won.length !== reviews || distinct.size !== reviews || resuming !== reviews) {
    throw new Error(
      `double or lost claims: ${won.length} wins for ${distinct.size} distinct of ${reviews} reviews, ${resuming} resuming`,
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
        const tag = `${kind}-${workers}-${process.pid}`
        const schema = `pushary_bench_${workers}_${process.pid}`
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
          const result = await race(worker, options.dir, storeConfig, open, options.reviews, workers)
          const goal = kind === 'postgres' && workers === 16
          rows.push({
            group: GROUP,
            scenario: `${kind === 'sqlite' ? 'SQLite (one file, WAL)' : 'PostgreSQL'}: ${workers} worker process${workers === 1 ? '' : 'es'}`,
            params: `${options.reviews} reviews${workers > 1 ? ', each raced by two workers' : ''} (${result.attempts} claim calls)`,
            unit: '/s',
            median: result.perSecond,
            note: 'zero double claims: checked',
            ...(goal ? { target: '≥ 1,000 claims/s', met: result.perSecond >= 1000 } : {}),
          })
        } finally {
          if (kind === 'postgres') await dropSchema(postgres.connectionString, schema)
        }
      }
    }
  } finally {
    await postgres.stop()
  }
  return rows
}
