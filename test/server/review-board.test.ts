/**
 * The review board over HTTP: a real SQLite review store file, the board
 * served on loopback by node:http (and mounted in Hono and Express), and the
 * `pushary-mastra reviews recover` command run as a process against the
 * same file, so "the same refusals as the CLI" is compared, not assumed.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import express from 'express'
import { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPusharyReviewBoard, type PusharyReviewBoard } from '../../src/board/review-board.js'
import { PusharyValidationError } from '../../src/pushary/errors.js'
import { createPostgresReviewStore } from '../../src/store/postgres-store.js'
import type { PusharyReviewStore } from '../../src/store/review-store.js'
import { createSqliteReviewStore } from '../../src/store/sqlite-store.js'
import { runCli } from '../reliability/support/cli.js'
import { dropSchema, ensurePostgres, uniqueSchema } from '../store/support/postgres.js'
import { agentReview, workflowReview } from '../store/support/reviews.js'

const KEY = 'board-operator-key-0123456789abcdef'
const LEASE_MS = 120_000

let dir: string
let file: string
let store: PusharyReviewStore
let board: PusharyReviewBoard
let server: Server
let base: string
const logged: string[] = []
const ids = { pendingWf: '', pendingAgent: '', uncertain: '', uncertain2: '', completed: '', live: '' }

async function seed(): Promise<void> {
  const pendingWf = workflowReview({ externalId: 'customer_a' })
  const pendingAgent = agentReview({ externalId: 'customer_b' })
  const uncertain = workflowReview({ externalId: 'customer_a' })
  const uncertain2 = agentReview({ externalId: 'customer_b' })
  const completed = agentReview({ externalId: 'customer_b' })
  const live = workflowReview({ externalId: 'customer_c' })
  for (const review of [pendingWf, pendingAgent, uncertain, uncertain2, completed, live])
    await store.save(review)
  await store.claim(uncertain.decisionId, uncertain.runId)
  await store.finish(uncertain.decisionId, 'uncertain', 'the refund service timed out after the claim')
  await store.claim(uncertain2.decisionId, uncertain2.runId)
  await store.finish(uncertain2.decisionId, 'uncertain', 'the tool threw')
  await store.claim(completed.decisionId, completed.runId)
  await store.finish(completed.decisionId, 'completed', 'resumed')
  // Claimed just now: within the lease, so its holder counts as alive.
  await store.claim(live.decisionId, live.runId)
  Object.assign(ids, {
    pendingWf: pendingWf.decisionId,
    pendingAgent: pendingAgent.decisionId,
    uncertain: uncertain.decisionId,
    uncertain2: uncertain2.decisionId,
    completed: completed.decisionId,
    live: live.decisionId,
  })
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pushary-board-'))
  file = join(dir, 'reviews.db')
  store = createSqliteReviewStore({ url: `file:${file}` })
  await seed()
  const line = (level: string) => (message: string, details?: unknown) =>
    logged.push(`${level} ${message} ${JSON.stringify(details ?? {})}`)
  board = createPusharyReviewBoard({
    store,
    operatorKey: KEY,
    logger: { info: line('info'), warn: line('warn'), error: line('error') },
    claimLeaseMs: LEASE_MS,
  })
  server = createServer(board.node)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/pushary/board`
}, 60_000)

afterAll(async () => {
  await new Promise<void>((resolve) => server?.close(() => resolve()))
  await store?.close()
  rmSync(dir, { recursive: true, force: true })
})

async function signIn(key = KEY): Promise<{ response: Response; cookie: string | null }> {
  const response = await fetch(`${base}/login`, {
    method: 'POST',
    body: new URLSearchParams({ key }),
    redirect: 'manual',
  })
  const set = response.headers.get('set-cookie')
  return { response, cookie: set === null ? null : (set.split(';')[0] as string) }
}

async function page(path: string, cookie: string): Promise<{ status: number; text: string }> {
  const response = await fetch(`${base}${path}`, { headers: { cookie } })
  return { status: response.status, text: await response.text() }
}

function csrfOf(markup: string): string {
  const match = /name="csrf" value="([^"]+)"/.exec(markup)
  if (!match) throw new Error('no form token on the page')
  return match[1] as string
}

function noticeOf(markup: string): string {
  const match = /<p class="notice[^"]*" role="[a-z]+">([^<]*)<\/p>/.exec(markup)
  const text = match?.[1] ?? ''
  return text
    .replaceAll('&quot;', '"')
    .replaceAll('&#39;', "'")
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&#96;', '`')
    .replaceAll('&amp;', '&')
}

async function recover(
  cookie: string,
  decisionId: string,
  outcome: string,
  reason: string,
  extra: Record<string, string> = {},
): Promise<{ status: number; text: string }> {
  const csrf = csrfOf((await page(`/reviews/${decisionId}`, cookie)).text)
  const confirm = await fetch(`${base}/reviews/${decisionId}/recover`, {
    method: 'POST',
    headers: { cookie },
    body: new URLSearchParams({ csrf, outcome, reason }),
  })
  const confirmText = await confirm.text()
  expect(confirm.status, confirmText).toBe(200)
  const expectedState = /name="expectedState" value="([a-z]+)"/.exec(confirmText)?.[1] ?? ''
  const done = await fetch(`${base}/reviews/${decisionId}/recover/confirm`, {
    method: 'POST',
    headers: { cookie },
    body: new URLSearchParams({ csrf, outcome, reason, expectedState, ...extra }),
  })
  return { status: done.status, text: await done.text() }
}

describe('the review board behind the operator key', () => {
  it('refuses every page, and a recovery, without a valid session, and a wrong key sets no cookie', async () => {
    for (const path of ['', `/reviews/${ids.uncertain}`, '/anything']) {
      const response = await fetch(`${base}${path}`)
      const text = await response.text()
      expect(response.status).toBe(401)
      expect(text).toContain('Operator key')
      expect(text).not.toContain(ids.uncertain)
    }
    const forged = await fetch(`${base}/reviews/${ids.uncertain}/recover/confirm`, {
      method: 'POST',
      headers: { cookie: `pushary_board=v1.${Date.now()}.${'A'.repeat(43)}` },
      body: new URLSearchParams({ outcome: 'stale', reason: 'x', expectedState: 'uncertain' }),
    })
    expect(forged.status).toBe(401)
    const wrong = await signIn('not-the-operator-key-at-all-000000')
    expect(wrong.response.status).toBe(401)
    expect(wrong.cookie).toBeNull()
    expect((await store.get(ids.uncertain))?.state).toBe('uncertain')
    expect(logged.some((line) => line.includes('sign-in refused'))).toBe(true)
  })

  it('signs in with an HttpOnly SameSite=Strict cookie, and never lets a page be framed', async () => {
    const { response, cookie } = await signIn()
    expect(response.status).toBe(303)
    const set = response.headers.get('set-cookie') ?? ''
    expect(set).toMatch(/HttpOnly/)
    expect(set).toMatch(/SameSite=Strict/)
    expect(set).not.toContain(KEY)
    const list = await fetch(`${base}`, { headers: { cookie: cookie as string } })
    expect(list.status).toBe(200)
    expect(list.headers.get('content-security-policy')).toMatch(/frame-ancestors 'none'/)
    expect(list.headers.get('content-security-policy')).toMatch(/script-src 'none'/)
    expect(list.headers.get('x-frame-options')).toBe('DENY')
    expect(list.headers.get('cache-control')).toBe('no-store')
  })

  it('refuses a recovery without the form token, or sent cross-site with it, and changes nothing', async () => {
    const { cookie } = await signIn()
    const csrf = csrfOf((await page(`/reviews/${ids.uncertain}`, cookie as string)).text)
    const body = { outcome: 'stale', reason: 'no refund in the ledger', expectedState: 'uncertain' }
    const without = await fetch(`${base}/reviews/${ids.uncertain}/recover/confirm`, {
      method: 'POST',
      headers: { cookie: cookie as string },
      body: new URLSearchParams(body),
    })
    expect(without.status).toBe(403)
    const crossSite = await fetch(`${base}/reviews/${ids.uncertain}/recover/confirm`, {
      method: 'POST',
      headers: { cookie: cookie as string, origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
      body: new URLSearchParams({ ...body, csrf }),
    })
    expect(crossSite.status).toBe(403)
    const otherSession = csrfOf((await page('', (await signIn()).cookie as string)).text)
    const foreignToken = await fetch(`${base}/reviews/${ids.uncertain}/recover/confirm`, {
      method: 'POST',
      headers: { cookie: cookie as string },
      body: new URLSearchParams({ ...body, csrf: otherSession === csrf ? 'x' : otherSession }),
    })
    expect(foreignToken.status).toBe(403)
    expect((await store.get(ids.uncertain))?.state).toBe('uncertain')
  })

  it('lists reviews by state and filters by state, kind, customer and age', async () => {
    const { cookie } = await signIn()
    const all = await page('', cookie as string)
    expect(all.status).toBe(200)
    for (const state of ['pending', 'resuming', 'completed', 'stale', 'uncertain']) {
      expect(all.text).toContain(`data-state="${state}"`)
    }
    // The review numbers of the whole store (readPusharyReviewStats), above the filters.
    expect(all.text).toMatch(/data-number="pending">2\b/)
    expect(all.text).toMatch(/data-number="uncertain">2\b/)
    const shown = (markup: string) =>
      Object.entries(ids)
        .filter(([, id]) => markup.includes(`data-decision="${id}"`))
        .map(([name]) => name)
        .sort()
    expect(shown(all.text)).toEqual(Object.keys(ids).sort())
    expect(shown((await page('?state=uncertain', cookie as string)).text)).toEqual([
      'uncertain',
      'uncertain2',
    ])
    expect(shown((await page('?kind=agent', cookie as string)).text)).toEqual([
      'completed',
      'pendingAgent',
      'uncertain2',
    ])
    expect(shown((await page('?customer=customer_a&state=pending', cookie as string)).text)).toEqual([
      'pendingWf',
    ])
    expect(shown((await page('?minAge=60', cookie as string)).text)).toEqual([])
    expect(shown((await page('?minAge=0&kind=workflow', cookie as string)).text)).toEqual([
      'live',
      'pendingWf',
      'uncertain',
    ])
    const bad = await page('?minAge=soon', cookie as string)
    expect(bad.status).toBe(400)
    expect(bad.text).toContain('minAge')
    expect((await page('?state=done', cookie as string)).status).toBe(400)
  })

  it('shows one review: its timeline and the lifecycle with its state highlighted', async () => {
    const { cookie } = await signIn()
    const { status, text } = await page(`/reviews/${ids.uncertain}`, cookie as string)
    expect(status).toBe(200)
    expect(text).toMatch(/saved → pending/)
    expect(text).toMatch(/pending → resuming<\/strong> <code>CLAIM<\/code>/)
    expect(text).toContain('the refund service timed out after the claim')
    expect(text).toMatch(/<g class="state current[^"]*" data-state="uncertain" aria-current="true">/)
    expect(text).toMatch(/<g class="edge taken" data-edge="resuming>uncertain">/)
    expect(text).not.toMatch(/<g class="edge taken" data-edge="resuming>completed">/)
  })

  it('recovers what the CLI would, confirmed and logged, and refuses exactly what the CLI refuses', async () => {
    const { cookie } = await signIn()
    // Allowed: uncertain -> stale, through the confirm step.
    const done = await recover(cookie as string, ids.uncertain, 'stale', 'ticket 7: no refund in the ledger')
    expect(done.status, done.text).toBe(200)
    expect(noticeOf(done.text)).toContain('Recovered: uncertain → stale (OPERATOR_CONFIRMED_NOT_EXECUTED)')
    expect((await store.get(ids.uncertain))?.state).toBe('stale')
    expect((await store.history(ids.uncertain)).at(-1)?.reason).toBe('ticket 7: no refund in the ledger')
    expect((await store.actionOf(ids.uncertain))?.outcome).toBe('not_run')
    expect(
      logged.some((line) => line.startsWith('info') && line.includes(`recovered ${ids.uncertain}`)),
    ).toBe(true)
    const cli = await runCli([
      'reviews',
      'recover',
      ids.uncertain2,
      'stale',
      '--reason',
      'same',
      '--db',
      file,
    ])
    expect(cli.code, cli.stderr).toBe(0)

    // Refused by the lifecycle (store.recover): a completed review.
    const finished = await recover(cookie as string, ids.completed, 'stale', 'looks wrong')
    expect(finished.status).toBe(409)
    const cliFinished = await runCli([
      'reviews',
      'recover',
      ids.completed,
      'stale',
      '--reason',
      'looks wrong',
      '--db',
      file,
    ])
    expect(cliFinished.code).toBe(1)
    const storeMessage = /refused \((\w+)\): (.*)$/m.exec(cliFinished.stderr)
    expect(noticeOf(finished.text)).toBe(`Recovery refused (${storeMessage?.[1]}): ${storeMessage?.[2]}`)
    expect((await store.get(ids.completed))?.state).toBe('completed')

    // Refused as live work: a claim kept alive within the lease.
    const live = await recover(cookie as string, ids.live, 'stale', 'looks stuck')
    expect(live.status).toBe(409)
    const cliLive = await runCli([
      'reviews',
      'recover',
      ids.live,
      'stale',
      '--reason',
      'looks stuck',
      '--lease-ms',
      String(LEASE_MS),
      '--db',
      file,
    ])
    expect(cliLive.code).toBe(1)
    const cliText = cliLive.stderr.replace(/^pushary-mastra reviews: /, '').trim()
    expect(noticeOf(live.text)).toBe(`Recovery refused: ${cliText}`)
    expect((await store.get(ids.live))?.state).toBe('resuming')
    expect(
      logged.some(
        (line) => line.startsWith('warn') && line.includes(`recovery of ${ids.live} refused (live_claim)`),
      ),
    ).toBe(true)
  }, 120_000)

  it('refuses a confirmation for a review that moved since it was shown', async () => {
    const { cookie } = await signIn()
    const csrf = csrfOf((await page(`/reviews/${ids.pendingWf}`, cookie as string)).text)
    const response = await fetch(`${base}/reviews/${ids.pendingWf}/recover/confirm`, {
      method: 'POST',
      headers: { cookie: cookie as string },
      body: new URLSearchParams({ csrf, outcome: 'stale', reason: 'x', expectedState: 'uncertain' }),
    })
    expect(response.status).toBe(409)
    expect((await store.get(ids.pendingWf))?.state).toBe('pending')
  })
})

describe('mounting the board', () => {
  it('serves the same board from Hono and from Express (a form express.urlencoded() already read)', async () => {
    const hono = new Hono()
    hono.all('/pushary/board/*', (c) => board.fetch(c.req.raw))
    hono.all('/pushary/board', (c) => board.fetch(c.req.raw))
    expect((await hono.request('/pushary/board')).status).toBe(401)
    const login = await hono.request('/pushary/board/login', {
      method: 'POST',
      body: new URLSearchParams({ key: KEY }),
    })
    expect(login.status).toBe(303)

    const app = express()
    app.use(express.urlencoded({ extended: false }))
    app.use('/pushary/board', board.express)
    const listener = app.listen(0, '127.0.0.1')
    await new Promise((resolve) => listener.once('listening', resolve))
    try {
      const url = `http://127.0.0.1:${(listener.address() as AddressInfo).port}/pushary/board`
      const signed = await fetch(`${url}/login`, {
        method: 'POST',
        body: new URLSearchParams({ key: KEY }),
        redirect: 'manual',
      })
      expect(signed.status).toBe(303)
      const cookie = (signed.headers.get('set-cookie') ?? '').split(';')[0] as string
      const list = await fetch(url, { headers: { cookie } })
      expect(list.status).toBe(200)
      expect(await list.text()).toContain(`data-decision="${ids.pendingAgent}"`)
    } finally {
      await new Promise<void>((resolve) => listener.close(() => resolve()))
    }
  })

  it('runs the docs sample: the board mounted in Hono and node:http, behind the operator key', async () => {
    process.env.README_SAMPLES_DIR = dir
    process.env.PUSHARY_BOARD_KEY = KEY
    const sample = await import('../readme/samples/review-board.js')
    try {
      expect((await sample.hono.request('/pushary/board/')).status).toBe(401)
      await new Promise((resolve) =>
        sample.server.listening ? resolve(null) : sample.server.once('listening', resolve),
      )
      const url = `http://127.0.0.1:${(sample.server.address() as AddressInfo).port}/pushary/board/login`
      const signed = await fetch(url, {
        method: 'POST',
        body: new URLSearchParams({ key: KEY }),
        redirect: 'manual',
      })
      expect(signed.status).toBe(303)
      expect(signed.headers.get('set-cookie')).toMatch(/HttpOnly; SameSite=Strict/)
    } finally {
      await new Promise((resolve) => sample.server.close(resolve))
      await sample.store.close()
    }
  })

  it('refuses to build a board without an operator key or a logger, naming the field', () => {
    const logger = { info() {}, warn() {}, error() {} }
    expect(() => createPusharyReviewBoard({ store, operatorKey: 'short', logger })).toThrow(
      PusharyValidationError,
    )
    expect(() => createPusharyReviewBoard({ store, operatorKey: 'short', logger })).toThrow(/operatorKey/)
    expect(() => createPusharyReviewBoard({ store, operatorKey: KEY })).toThrow(/logger/)
  })
})

describe('the review board over a PostgreSQL review store', () => {
  it('lists by state and recovers a crash-left claim, refusing it while its lease runs', async () => {
    const postgres = await ensurePostgres()
    const schema = uniqueSchema('board')
    const pg = createPostgresReviewStore({ connectionString: postgres.connectionString, schema })
    try {
      const review = workflowReview({ externalId: 'customer_pg' })
      await pg.save(review)
      await pg.claim(review.decisionId, review.runId)
      let lease = 60_000
      const logger = { info() {}, warn() {}, error() {} }
      const pgBoard = () =>
        createPusharyReviewBoard({ store: pg, operatorKey: KEY, logger, claimLeaseMs: lease })
      const call = async (b: PusharyReviewBoard, path: string, init: RequestInit = {}) =>
        b.fetch(new Request(`http://127.0.0.1/pushary/board${path}`, init))
      const attempt = async () => {
        const b = pgBoard()
        const login = await call(b, '/login', { method: 'POST', body: new URLSearchParams({ key: KEY }) })
        const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] as string
        const list = await (await call(b, '?state=resuming', { headers: { cookie } })).text()
        expect(list).toContain(`data-decision="${review.decisionId}"`)
        const body = new URLSearchParams({
          csrf: csrfOf(list),
          outcome: 'stale',
          reason: 'the worker crashed; no refund in the ledger',
          expectedState: 'resuming',
        })
        return call(b, `/reviews/${review.decisionId}/recover/confirm`, {
          method: 'POST',
          headers: { cookie },
          body,
        })
      }
      const live = await attempt()
      expect(live.status).toBe(409)
      expect(noticeOf(await live.text())).toMatch(/^Recovery refused: review \S+ is claimed by/)
      expect((await pg.get(review.decisionId))?.state).toBe('resuming')
      // Nobody keeps the claim alive: once a (short) lease has passed, the holder is gone.
      lease = 100
      await new Promise((resolve) => setTimeout(resolve, 300))
      const done = await attempt()
      expect(done.status).toBe(200)
      expect((await pg.get(review.decisionId))?.state).toBe('stale')
      expect((await pg.history(review.decisionId)).at(-1)?.event).toBe('OPERATOR_CONFIRMED_NOT_EXECUTED')
    } finally {
      await pg.close()
      await dropSchema(postgres.connectionString, schema)
      await postgres.stop()
    }
  }, 60_000)
})
