/**
 * Several hosts: three worker processes, each with Mastra on `@mastra/pg`
 * and the PostgreSQL review store in one shared schema, resolve hundreds of
 * reviews at once. The decision service's callbacks go to a random worker
 * (some delivered to two workers at once), and every worker also runs
 * `reconcile` in a loop. Every review must be resumed exactly once, every
 * approved refund must run exactly once and no declined one ever.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { PostgresStore } from '@mastra/pg'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPostgresReviewStore } from '../../src/store/postgres-store.js'
import type { PusharyReviewStore } from '../../src/store/review-store.js'
import { createTestEnv, startFetchServer, type TestEnv, waitFor, writeEnvFile } from '../helpers/mastra.js'
import { nodeScript } from '../helpers/node-script.js'
import { dropSchema, ensurePostgres, type TestPostgres, uniqueSchema } from '../store/support/postgres.js'
import { allReviews } from './support/scenario.js'

/** Reviews resolved per run; raise or lower with PUSHARY_HOSTS_REVIEWS. */
const REVIEWS = Number(process.env.PUSHARY_HOSTS_REVIEWS ?? 500)
const HOSTS = 3

interface Worker {
  name: string
  child: ChildProcess
  url: string
  output: () => string
}

let postgres: TestPostgres
let schema: string
let env: TestEnv
let store: PusharyReviewStore
let router: Awaited<ReturnType<typeof startFetchServer>>
const workers: Worker[] = []
const delivered = { callbacks: 0, duplicated: 0 }

function startWorker(name: string): Promise<Worker> {
  const child = spawn(
    process.execPath,
    [...nodeScript('test/reliability/fixtures/pg-worker.ts'), env.dir, schema, name],
    {
      cwd: process.cwd(),
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, PUSHARY_TEST_PG_URL: postgres.connectionString },
    },
  )
  let out = ''
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString('utf8')
  })
  child.stderr.on('data', (chunk: Buffer) => {
    out += chunk.toString('utf8')
  })
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker ${name} did not start:\n${out}`)), 120_000)
    child.stdout.on('data', () => {
      const port = /"port":(\d+)/.exec(out)?.[1]
      if (port) {
        clearTimeout(timer)
        resolve({ name, child, url: `http://127.0.0.1:${port}`, output: () => out })
      }
    })
    child.once('exit', (code) => reject(new Error(`worker ${name} exited ${code}:\n${out}`)))
  })
}

async function post<T>(worker: Worker, path: string, body: unknown): Promise<T> {
  const response = await fetch(`${worker.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  if (!response.ok) throw new Error(`${worker.name}${path}: ${response.status} ${await response.text()}`)
  return (await response.json()) as T
}

/** Forwards one signed callback to a random worker, sometimes to two at once. */
async function route(request: Request): Promise<Response> {
  const body = await request.text()
  const pick = () => workers[Math.floor(Math.random() * workers.length)] as Worker
  const send = (worker: Worker) =>
    fetch(`${worker.url}/callback`, { method: 'POST', headers: request.headers, body })
  delivered.callbacks++
  const first = pick()
  if (Math.random() < 0.15) {
    delivered.duplicated++
    const [response] = await Promise.all([send(first), send(pick())])
    return response as Response
  }
  return send(first)
}

beforeAll(async () => {
  postgres = await ensurePostgres()
  schema = uniqueSchema('hosts')
  env = await createTestEnv('hosts', { callbackDelayMs: 200 })
  router = await startFetchServer(route)
  writeEnvFile({
    dir: env.dir,
    baseUrl: env.baseUrl,
    apiKey: env.apiKey,
    webhookSecret: env.webhookSecret,
    callbackUrl: `${router.url}/callback`,
  })
  // One migration before the hosts start, as a deploy step would do it.
  const mastraStorage = new PostgresStore({
    id: 'hosts-setup',
    connectionString: postgres.connectionString,
    schemaName: schema,
  })
  await mastraStorage.init()
  await mastraStorage.close()
  store = createPostgresReviewStore({ connectionString: postgres.connectionString, schema })
  await store.listByState('pending', { limit: 1 })
  const db = new pg.Client({ connectionString: postgres.connectionString })
  await db.connect()
  await db.query(`CREATE TABLE "${schema}".effects (key TEXT NOT NULL, host TEXT NOT NULL)`)
  await db.end()
  for (let index = 0; index < HOSTS; index++) workers.push(await startWorker(`host-${index}`))
}, 300_000)

afterAll(async () => {
  for (const worker of workers) worker.child.kill('SIGKILL')
  await router?.close()
  await store?.close()
  await env?.close()
  if (schema && postgres) await dropSchema(postgres.connectionString, schema)
  await postgres?.stop()
})

describe('three hosts on PostgreSQL', () => {
  it(`resolve ${REVIEWS} reviews concurrently, each resumed once, no refund twice or unapproved`, async () => {
    const tag = randomUUID().slice(0, 8)
    const ops = Array.from({ length: REVIEWS }, (_, index) => `${tag}-${index}`)
    // Every fifth one is declined: its refund must never run.
    const approved = new Set(ops.filter((_, index) => index % 5 !== 0))
    const shares = workers.map((_, host) => ops.filter((_, index) => index % workers.length === host))
    await Promise.all(workers.map((worker, host) => post(worker, '/start', { ops: shares[host] })))

    const reviews = (await allReviews(store)).filter((review) => review.target === 'workflow-step')
    expect(reviews).toHaveLength(REVIEWS)
    // Answered in a shuffled order while the hosts reconcile.
    const order = [...reviews].sort(() => Math.random() - 0.5)
    await Promise.all(
      Array.from({ length: 8 }, async (_, lane) => {
        for (let index = lane; index < order.length; index += 8) {
          const review = order[index]!
          const op = review.target === 'workflow-step' ? review.operationId : ''
          await env.client.decisions.answer(review.decisionId, approved.has(op) ? 'yes' : 'no')
        }
      }),
    )

    await waitFor(
      async () => {
        const completed = await store.listByState('completed', { limit: 1000 })
        return completed.length >= REVIEWS ? true : undefined
      },
      480_000,
      1000,
    )
    const stats = await Promise.all(
      workers.map((worker) =>
        post<{ reconcileRounds: number; reconcileResumed: number; callbacks: number }>(worker, '/stop', {}),
      ),
    )

    const final = await allReviews(store)
    expect(final.map((review) => review.state)).toEqual(Array(REVIEWS).fill('completed'))
    for (const review of final) {
      const events = (await store.history(review.decisionId)).map((entry) => entry.event)
      expect(events, review.decisionId).toEqual([null, 'CLAIM', 'RESUMED'])
    }
    const db = new pg.Client({ connectionString: postgres.connectionString })
    await db.connect()
    try {
      const rows = (await db.query(`SELECT key, host FROM "${schema}".effects`)).rows as {
        key: string
        host: string
      }[]
      const keys = rows.map((row) => row.key)
      expect(new Set(keys).size, 'double executions').toBe(keys.length)
      expect(
        keys.filter((key) => !approved.has(key)),
        'unapproved executions',
      ).toEqual([])
      expect(keys.sort()).toEqual([...approved].sort())
      const runs = await db.query(
        `SELECT (snapshot::jsonb)->>'status' AS status, COUNT(*)::int AS n FROM "${schema}".mastra_workflow_snapshot GROUP BY 1`,
      )
      expect(runs.rows).toEqual([{ status: 'success', n: REVIEWS }])
      const hosts = new Set(rows.map((row) => row.host))
      console.log(
        `several hosts: ${REVIEWS} reviews resolved on PostgreSQL by ${HOSTS} hosts (refunds on ${hosts.size} hosts), ` +
          `${keys.length} refunds, 0 double, 0 unapproved; callbacks routed ${delivered.callbacks} ` +
          `(${delivered.duplicated} delivered twice); reconcile resumed ${stats.reduce((sum, s) => sum + s.reconcileResumed, 0)}`,
      )
    } finally {
      await db.end()
    }
  }, 600_000)
})
