/**
 * Several approvers (issue 41) on several hosts: two worker processes, each
 * with Mastra on `@mastra/pg` and the PostgreSQL review store in one shared
 * schema (as several-hosts.test.ts sets them up), resolve a 2-of-3 set
 * whose two approvals arrive at the same moment. Every callback the decision
 * service sends is delivered to both hosts at once, and both hosts run
 * `reconcile` at the same moment, over and over, while the set settles.
 * Repeated for several runs.
 *
 * Expected each time: the protected payment ran exactly once (a row in the
 * shared effects table), the two approvers' reviews ended `completed` and
 * the third `stale`, the third decision is cancelled at the service, no
 * review is left `pending`, `resuming` or `uncertain`, and no claim was ever
 * taken over.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { PostgresStore } from '@mastra/pg'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPostgresReviewStore } from '../../src/store/postgres-store.js'
import type { PusharyWorkflowReview } from '../../src/store/review-schema.js'
import type { PusharyReviewStore } from '../../src/store/review-store.js'
import { createTestEnv, startFetchServer, type TestEnv, writeEnvFile } from '../helpers/mastra.js'
import { nodeScript } from '../helpers/node-script.js'
import { dropSchema, ensurePostgres, type TestPostgres, uniqueSchema } from '../store/support/postgres.js'
import { allReviews } from './support/scenario.js'

/** Runs of the set; raise or lower with PUSHARY_SET_HOSTS_ROUNDS. */
const ROUNDS = Number(process.env.PUSHARY_SET_HOSTS_ROUNDS ?? 6)
const HOSTS = 2
const APPROVERS = ['alice', 'bob', 'carol'] as const
/** Who approves in each round (the third is withdrawn). */
const PAIRS = [
  ['alice', 'bob'],
  ['bob', 'carol'],
  ['alice', 'carol'],
] as const

interface Host {
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
const hosts: Host[] = []
const delivered = { callbacks: 0 }

function startHost(name: string): Promise<Host> {
  const child = spawn(
    process.execPath,
    [...nodeScript('test/reliability/fixtures/approver-set-pg-host.ts'), env.dir, schema, name],
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
    const timer = setTimeout(() => reject(new Error(`host ${name} did not start:\n${out}`)), 120_000)
    child.stdout.on('data', () => {
      const port = /"port":(\d+)/.exec(out)?.[1]
      if (port) {
        clearTimeout(timer)
        resolve({ name, child, url: `http://127.0.0.1:${port}`, output: () => out })
      }
    })
    child.once('exit', (code) => reject(new Error(`host ${name} exited ${code}:\n${out}`)))
  })
}

async function post<T>(host: Host, path: string, body: unknown): Promise<T> {
  const response = await fetch(`${host.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  if (!response.ok) throw new Error(`${host.name}${path}: ${response.status} ${await response.text()}`)
  return (await response.json()) as T
}

/** Delivers each signed callback to every host at the same moment; the service sees the first answer. */
async function route(request: Request): Promise<Response> {
  const body = await request.text()
  delivered.callbacks++
  const responses = await Promise.all(
    hosts.map((host) => fetch(`${host.url}/callback`, { method: 'POST', headers: request.headers, body })),
  )
  const texts = await Promise.all(responses.map((response) => response.text()))
  const first = responses[0] as Response
  return new Response(texts[0], { status: first.status, headers: { 'content-type': 'application/json' } })
}

/** Every host runs one `reconcile`, all at the same moment. */
function reconcileEverywhere(): Promise<unknown[]> {
  return Promise.all(hosts.map((host) => post(host, '/reconcile', {})))
}

beforeAll(async () => {
  postgres = await ensurePostgres()
  schema = uniqueSchema('set_hosts')
  env = await createTestEnv('set-hosts', { callbackDelayMs: 100 })
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
    id: 'set-hosts-setup',
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
  for (let index = 0; index < HOSTS; index++) hosts.push(await startHost(`host-${index}`))
}, 300_000)

afterAll(async () => {
  for (const host of hosts) host.child.kill('SIGKILL')
  await router?.close()
  await store?.close()
  await env?.close()
  if (schema && postgres) await dropSchema(postgres.connectionString, schema)
  await postgres?.stop()
})

async function reviewsOf(runId: string): Promise<PusharyWorkflowReview[]> {
  return (await allReviews(store)).filter(
    (review): review is PusharyWorkflowReview => review.target === 'workflow-step' && review.runId === runId,
  )
}

async function query<T>(sql: string, args: unknown[] = []): Promise<T[]> {
  const db = new pg.Client({ connectionString: postgres.connectionString })
  await db.connect()
  try {
    return (await db.query(sql, args)).rows as T[]
  } finally {
    await db.end()
  }
}

async function runStatus(runId: string): Promise<string | undefined> {
  const rows = await query<{ status: string }>(
    `SELECT (snapshot::jsonb)->>'status' AS status FROM "${schema}".mastra_workflow_snapshot WHERE run_id = $1`,
    [runId],
  )
  return rows[0]?.status
}

const TERMINAL = new Set(['completed', 'stale'])

describe('several approvers on two hosts on PostgreSQL', () => {
  it(`settles a 2-of-3 set answered at the same moment ${ROUNDS} times: one payment each, every review ended`, async () => {
    const summary: string[] = []
    for (let round = 0; round < ROUNDS; round++) {
      const tag = randomUUID().slice(0, 8)
      const runId = `set-hosts-${round}-${tag}`
      const op = `pay:${tag}`
      const input = {
        operationId: op,
        question: `Pay invoice ${tag}?`,
        type: 'confirm',
        approvers: { externalIds: APPROVERS.map((name) => `${name}-${tag}`), required: 2 },
      }
      const starter = hosts[round % HOSTS] as Host
      expect(await post(starter, '/start', { runId, input })).toMatchObject({ status: 'suspended' })
      const reviews = await reviewsOf(runId)
      expect(reviews).toHaveLength(3)
      const idOf = (name: string) =>
        reviews.find((review) => review.externalId === `${name}-${tag}`)?.decisionId as string
      const [first, second] = PAIRS[round % PAIRS.length] as readonly [string, string]
      const third = APPROVERS.find((name) => name !== first && name !== second) as string
      const label = `round ${round} (${first} and ${second} approve)`

      // Both answers at the same moment, while both hosts reconcile.
      await Promise.all([
        env.client.decisions.answer(idOf(first), 'yes'),
        env.client.decisions.answer(idOf(second), 'yes'),
        reconcileEverywhere(),
      ])
      const deadline = Date.now() + 60_000
      for (;;) {
        await reconcileEverywhere()
        const states = (await reviewsOf(runId)).map((review) => review.state)
        if (states.every((state) => TERMINAL.has(state)) || Date.now() > deadline) break
        await new Promise((resolve) => setTimeout(resolve, 200))
      }
      // A few more rounds on both hosts after the set settled change nothing.
      for (let extra = 0; extra < 3; extra++) await reconcileEverywhere()

      const paid = await query<{ host: string }>(`SELECT host FROM "${schema}".effects WHERE key = $1`, [op])
      expect(paid.length, `${label}: payments`).toBe(1)
      expect(await runStatus(runId), label).toBe('success')
      const final = await reviewsOf(runId)
      const stateOf = (name: string) => final.find((review) => review.decisionId === idOf(name))?.state
      expect(stateOf(first), label).toBe('completed')
      expect(stateOf(second), label).toBe('completed')
      expect(stateOf(third), label).toBe('stale')
      expect((await env.client.decisions.get(idOf(third))).status, label).toBe('cancelled')
      for (const review of final) {
        const history = await store.history(review.decisionId)
        const events = history.map((entry) => entry.event)
        expect(
          events.filter((event) => event === 'CLAIM'),
          `${label}: ${review.externalId}`,
        ).toHaveLength(1)
        expect(events, `${label}: ${review.externalId}`).not.toContain('RECLAIM')
        expect(history.at(-1)?.reason, `${label}: ${review.externalId}`).toMatch(
          /the approvers' set was approved \(2 of 3 required|waits on the other approvers/,
        )
      }
      summary.push(
        `${label}: paid once on ${paid[0]?.host}; ${final.map((review) => `${review.externalId?.split('-')[0]} ${review.state}`).join(', ')}`,
      )
    }

    // Nothing anywhere is left open or held.
    const left = (await allReviews(store)).filter((review) => !TERMINAL.has(review.state))
    expect(left.map((review) => `${review.decisionId} ${review.state}`)).toEqual([])
    const effects = await query<{ key: string; n: number }>(
      `SELECT key, COUNT(*)::int AS n FROM "${schema}".effects GROUP BY key`,
    )
    expect(effects.map((row) => row.n)).toEqual(Array(ROUNDS).fill(1))
    const stats = await Promise.all(hosts.map((host) => post<Record<string, unknown>>(host, '/stop', {})))
    hosts.length = 0
    console.log(
      `approver set on ${HOSTS} hosts (PostgreSQL): ${ROUNDS} runs, each paid once; callbacks routed ${delivered.callbacks} (each to every host)\n${summary.join('\n')}\nhost results: ${JSON.stringify(stats)}`,
    )
  }, 600_000)
})
