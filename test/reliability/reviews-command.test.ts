/**
 * `pushary-mastra reviews` as an operator runs it: a real OS process against
 * the SQLite review store next to a real Mastra run, and against PostgreSQL.
 * It lists and shows what the store holds, and `recover` follows exactly the
 * rules of `store.recover`: a reason is required, and only what the
 * lifecycle machine allows is written.
 */
import { randomUUID } from 'node:crypto'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SIGNATURE_HEADER, signWebhookBody } from '../../src/pushary/callbacks.js'
import { createPostgresReviewStore } from '../../src/store/postgres-store.js'
import type { PusharyReview, ReviewReceipt, ReviewTransition } from '../../src/store/review-schema.js'
import { createTestEnv, runFixture, type TestEnv, waitFor } from '../helpers/mastra.js'
import { dropSchema, ensurePostgres, type TestPostgres, uniqueSchema } from '../store/support/postgres.js'
import { workflowReview } from '../store/support/reviews.js'
import { buildApp, CLAIM_LEASE_MS, EXTERNAL_ID, type TestApp } from '../workflows/fixtures/app.js'
import { openAgentRefund } from '../workflows/fixtures/refund-agent.js'
import { jsonOf, runCli } from './support/cli.js'
import { effectCounts } from './support/scenario.js'

let env: TestEnv
let app: TestApp
let db: string
const ids = { pending: '', uncertain: '', completed: '' }

async function startRun(): Promise<{ decisionId: string; runId: string }> {
  const workflow = app.mastra.getWorkflowById('refund-single' as never) as unknown as {
    createRun(): Promise<{ runId: string; start(p: { inputData: unknown }): Promise<{ status: string }> }>
  }
  const run = await workflow.createRun()
  await run.start({ inputData: { operationId: `cli-${run.runId}`, question: 'Refund?' } })
  const review = (await app.store.listByState('pending', { limit: 1000 })).find((r) => r.runId === run.runId)
  return { decisionId: review?.decisionId as string, runId: run.runId }
}

beforeAll(async () => {
  env = await createTestEnv('reviews-cli')
  app = buildApp(env)
  db = join(env.dir, 'reviews.db')
  ids.pending = (await startRun()).decisionId
  const body = JSON.stringify({ decisionId: ids.pending, correlationId: ids.pending, answer: 'yes' })
  // A signed callback while the decision is still pending: 503, but the receipt is kept.
  await app.dispatcher.handleCallback(
    new Request('http://127.0.0.1/callback', {
      method: 'POST',
      headers: { [SIGNATURE_HEADER]: signWebhookBody(body, env.webhookSecret) },
      body,
    }),
  )
  const uncertain = await startRun()
  ids.uncertain = uncertain.decisionId
  await app.store.claim(uncertain.decisionId, uncertain.runId)
  await app.store.finish(uncertain.decisionId, 'uncertain', 'the refund service timed out after the claim')
  const completed = await startRun()
  ids.completed = completed.decisionId
  await env.client.decisions.answer(completed.decisionId, 'yes')
  expect((await app.dispatcher.resumeDecision(completed.decisionId)).status).toBe('resumed')
})

afterAll(async () => {
  await app?.close()
  await env?.close()
})

describe('pushary-mastra reviews on SQLite', () => {
  it('lists reviews by state, as JSON and as text', async () => {
    const all = await runCli(['reviews', 'list', '--db', db, '--json'])
    expect(all.code, all.stderr).toBe(0)
    const states = Object.fromEntries(jsonOf<PusharyReview[]>(all).map((r) => [r.decisionId, r.state]))
    expect(states).toMatchObject({
      [ids.pending]: 'pending',
      [ids.uncertain]: 'uncertain',
      [ids.completed]: 'completed',
    })
    const uncertain = await runCli(['reviews', 'list', '--state', 'uncertain', '--db', db])
    expect(uncertain.code).toBe(0)
    expect(uncertain.stdout).toContain(ids.uncertain)
    expect(uncertain.stdout).toContain('refund-single/')
    expect(uncertain.stdout).toContain('"the refund service timed out after the claim"')
    expect(uncertain.stdout).not.toContain(ids.pending)
  })

  it("shows the binding, the history with reasons, the receipts and the Mastra run's status", async () => {
    const shown = await runCli([
      'reviews',
      'show',
      ids.pending,
      '--db',
      db,
      '--mastra-db',
      join(env.dir, 'mastra.db'),
      '--json',
    ])
    expect(shown.code, shown.stderr).toBe(0)
    const view = jsonOf<{
      review: PusharyReview
      history: ReviewTransition[]
      receipts: ReviewReceipt[]
      run: { status: string; approval: string }
    }>(shown)
    expect(view.review).toMatchObject({ decisionId: ids.pending, target: 'workflow-step', state: 'pending' })
    expect(view.history.map((entry) => entry.to)).toEqual(['pending'])
    expect(view.receipts).toHaveLength(1)
    expect(view.run).toMatchObject({ status: 'suspended', approval: 'suspended' })

    const text = await runCli(['reviews', 'show', ids.uncertain, '--db', db])
    expect(text.code).toBe(0)
    expect(text.stdout).toMatch(/resuming -> uncertain\s+FAILED_AFTER_CLAIM\s+"the refund service timed out/)
  })

  it("shows an agent review's own review run: its approval waits until resumed, then is past", async () => {
    const { decisionId } = await openAgentRefund(app, EXTERNAL_ID, 'cli-agent-order', 'cli-agent-run')
    const show = async () => {
      const shown = await runCli([
        'reviews',
        'show',
        decisionId,
        '--db',
        db,
        '--mastra-db',
        join(env.dir, 'mastra.db'),
        '--json',
      ])
      expect(shown.code, shown.stderr).toBe(0)
      return jsonOf<{ review: PusharyReview; run: { workflowId: string; status: string; approval: string } }>(
        shown,
      )
    }
    const waiting = await show()
    expect(waiting.review).toMatchObject({ target: 'agent', runId: 'cli-agent-run', state: 'pending' })
    expect(waiting.run).toMatchObject({
      workflowId: 'pushary-agent-review',
      status: 'suspended',
      approval: 'suspended',
    })
    await env.client.decisions.answer(decisionId, 'yes')
    expect((await app.dispatcher.resumeDecision(decisionId)).status).toBe('resumed')
    expect((await show()).run).toMatchObject({ status: 'success', approval: 'completed' })
  })

  it('recovers an uncertain review with the reason kept, and refuses what store.recover refuses', async () => {
    const refused = await runCli(['reviews', 'recover', ids.completed, 'stale', '--reason', 'no', '--db', db])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(/not_recoverable/)
    expect((await app.store.get(ids.completed))?.state).toBe('completed')
    const pending = await runCli([
      'reviews',
      'recover',
      ids.pending,
      'completed',
      '--reason',
      'x',
      '--db',
      db,
    ])
    expect(pending.code).toBe(1)
    expect((await app.store.get(ids.pending))?.state).toBe('pending')

    const done = await runCli([
      'reviews',
      'recover',
      ids.uncertain,
      'stale',
      '--reason',
      'ticket 7: no refund in the ledger',
      '--db',
      db,
      '--json',
    ])
    expect(done.code, done.stderr).toBe(0)
    expect(jsonOf<{ transition: ReviewTransition }>(done).transition).toMatchObject({
      from: 'uncertain',
      to: 'stale',
      event: 'OPERATOR_CONFIRMED_NOT_EXECUTED',
      reason: 'ticket 7: no refund in the ledger',
    })
    expect((await app.store.get(ids.uncertain))?.state).toBe('stale')
  })

  it('refuses to change a live claim (the tool is running), naming its holder and lease, and the action completes', async () => {
    const tag = randomUUID().slice(0, 8)
    const orderId = `cli-live-${tag}`
    const { decisionId } = await openAgentRefund(app, EXTERNAL_ID, orderId, `cli-live-run-${tag}`)
    await env.client.decisions.answer(decisionId, 'yes')
    const hold = join(env.dir, `hold-${tag}`)
    const resuming = runFixture<{ status: string }[]>(
      ['resume-decisions', env.dir, JSON.stringify([decisionId])],
      {
        env: { PUSHARY_TEST_HOLD_REFUND: hold },
      },
    )
    await waitFor(async () => (existsSync(`${hold}.held`) ? true : undefined), 60_000, 50)
    // Well past the claim time, but the holder keeps it alive within the lease.
    await new Promise((resolve) => setTimeout(resolve, 2 * CLAIM_LEASE_MS))
    const refused = await runCli([
      'reviews',
      'recover',
      decisionId,
      'stale',
      '--reason',
      'looks stuck',
      '--lease-ms',
      String(CLAIM_LEASE_MS),
      '--db',
      db,
    ])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(/claimed by the resumer that took it at \S+ \(CLAIM/)
    expect(refused.stderr).toMatch(/lease runs until \d{4}-\d\d-\d\dT/)
    expect((await app.store.get(decisionId))?.state).toBe('resuming')
    writeFileSync(hold, '')
    expect((await resuming)[0]).toMatchObject({ status: 'resumed' })
    expect((await app.store.get(decisionId))?.state).toBe('completed')
    expect((await effectCounts(env.dir)).get(orderId)).toBe(1)
  }, 120_000)

  it('refuses bad arguments with exit code 2 before opening any database', async () => {
    const missing = join(env.dir, 'typo.db')
    const cases: [string[], RegExp][] = [
      [['reviews', 'recover', ids.pending, 'completed', '--db', db], /needs --reason/],
      [['reviews', 'recover', ids.pending, 'done', '--reason', 'r', '--db', db], /outcome/],
      [['reviews', 'list', '--state', 'waiting', '--db', db], /unknown --state "waiting"/],
      [['reviews', 'list'], /a review store is required/],
      [['reviews', 'list', '--db', db, '--pg', 'postgres://x'], /either --db or --pg/],
      [['reviews', 'list', '--db', db, '--reason', 'r'], /--reason does not apply/],
      [['reviews', 'show', '--db', db], /needs a decision ID/],
      [['reviews', 'purge', '--db', db], /unknown action/],
      [['reviews', 'list', '--limit', '0', '--db', db], /--limit/],
    ]
    const results = await Promise.all(cases.map(([args]) => runCli(args)))
    for (const [index, [args, message]] of cases.entries()) {
      expect(results[index]?.code, args.join(' ')).toBe(2)
      expect(results[index]?.stderr, args.join(' ')).toMatch(message)
    }
    const typo = await runCli(['reviews', 'list', '--db', missing])
    expect(typo.code).toBe(1)
    expect(typo.stderr).toMatch(/no review store at/)
    expect(existsSync(missing)).toBe(false)
    const unknown = await runCli(['reviews', 'show', 'dec_nope', '--db', db])
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toMatch(/no review for decision dec_nope/)
  })
})

describe('pushary-mastra reviews on PostgreSQL', () => {
  let postgres: TestPostgres
  let schema: string

  beforeAll(async () => {
    postgres = await ensurePostgres()
    schema = uniqueSchema('cli')
  })

  afterAll(async () => {
    await dropSchema(postgres.connectionString, schema)
    await postgres.stop()
  })

  it('lists, shows and recovers a crash-left claim with the same rules', async () => {
    const store = createPostgresReviewStore({ connectionString: postgres.connectionString, schema })
    const review = workflowReview()
    try {
      await store.save(review)
      expect(await store.claim(review.decisionId, review.runId)).toBe('claimed')
    } finally {
      await store.close()
    }
    // Crash-left: nobody keeps the claim alive, so after a (short) lease it is no longer live.
    await new Promise((resolve) => setTimeout(resolve, 200))
    const where = ['--pg', postgres.connectionString, '--schema', schema, '--lease-ms', '100']
    const listed = await runCli([
      'reviews',
      'list',
      '--state',
      'resuming',
      '--pg',
      postgres.connectionString,
      '--schema',
      schema,
      '--json',
    ])
    expect(listed.code, listed.stderr).toBe(0)
    expect(jsonOf<PusharyReview[]>(listed).map((r) => r.decisionId)).toEqual([review.decisionId])
    const reopen = await runCli([
      'reviews',
      'recover',
      review.decisionId,
      'pending',
      '--reason',
      'r',
      ...where,
    ])
    expect(reopen.code).toBe(1)
    expect(reopen.stderr).toMatch(/not_recoverable/)
    const done = await runCli([
      'reviews',
      'recover',
      review.decisionId,
      'completed',
      '--reason',
      'the refund is in the ledger',
      ...where,
    ])
    expect(done.code, done.stderr).toBe(0)
    const shown = await runCli([
      'reviews',
      'show',
      review.decisionId,
      '--pg',
      postgres.connectionString,
      '--schema',
      schema,
      '--json',
    ])
    const view = jsonOf<{
      review: PusharyReview
      claim: { state: string; since: string }
      history: ReviewTransition[]
    }>(shown)
    expect(view.claim).toMatchObject({ state: 'completed', since: view.history.at(-1)?.at })
    expect(view.review.state).toBe('completed')
    expect(view.history.map((entry) => entry.event)).toEqual([null, 'CLAIM', 'OPERATOR_CONFIRMED_EXECUTED'])
    expect(view.history.at(-1)?.reason).toBe('the refund is in the ledger')
  })
})
