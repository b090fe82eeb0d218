/**
 * The review board in Debian Chromium, served by the local service as an
 * operator starts it (`pushary-mastra dev --board-db`, a separate process)
 * over a real SQLite review store file: sign in with the service's API key,
 * list reviews by state, filter, open one review's timeline beside the
 * highlighted lifecycle, recover what `reviews recover` would allow and be
 * refused what it would refuse (a claim its holder keeps alive). Saves its
 * screenshots to a temporary folder; `PUSHARY_REFRESH_IMAGES=1` writes them to
 * docs/images/ instead, to refresh the README's (a test run never changes the
 * checkout by itself).
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PusharyReviewStore } from '../../src/store/review-store.js'
import { createSqliteReviewStore } from '../../src/store/sqlite-store.js'
import { launchChromium } from '../helpers/browser.js'
import { nodeScript } from '../helpers/node-script.js'
import { agentReview, workflowReview } from '../store/support/reviews.js'

const ROOT = join(import.meta.dirname, '..', '..')
const IMAGES =
  process.env.PUSHARY_REFRESH_IMAGES === '1'
    ? join(ROOT, 'docs', 'images')
    : mkdtempSync(join(tmpdir(), 'pushary-board-images-'))

let dir: string
let store: PusharyReviewStore
let child: ChildProcessWithoutNullStreams
let output = ''
let boardUrl: string
let apiKey: string
let browser: Browser
let page: Page
let keepAlive: ReturnType<typeof setInterval> | undefined
const ids = { uncertain: '', live: '', pendingAgent: '', pendingWf: '', completed: '', stale: '' }

async function seed(): Promise<void> {
  const pendingWf = workflowReview({
    externalId: 'acme-ops',
    workflowId: 'deploy-release',
    stepId: 'approve-deploy',
    forEachIndex: null,
    question: { question: 'Deploy release 4.2.0 to production?', type: 'confirm' },
  })
  delete (pendingWf as { parent?: unknown }).parent
  const pendingAgent = agentReview({
    externalId: 'customer_7731',
    toolName: 'refund.create',
    question: { question: 'Refund EUR 48.00 for order 1001?', type: 'confirm' },
  })
  const uncertain = workflowReview({
    externalId: 'customer_4410',
    workflowId: 'refund-order',
    stepId: 'approve-refund',
    forEachIndex: null,
    question: { question: 'Refund EUR 120.00 for order 2087?', type: 'confirm' },
  })
  delete (uncertain as { parent?: unknown }).parent
  const live = agentReview({
    externalId: 'customer_7731',
    toolName: 'account.delete',
    question: { question: 'Delete the account of customer_7731?', type: 'confirm' },
  })
  const completed = agentReview({ externalId: 'customer_4410' })
  const stale = workflowReview({ externalId: 'acme-ops' })
  for (const review of [pendingWf, pendingAgent, uncertain, live, completed, stale]) await store.save(review)
  await store.claim(uncertain.decisionId, uncertain.runId)
  await store.finish(uncertain.decisionId, 'uncertain', 'the refund service timed out after the claim')
  await store.claim(completed.decisionId, completed.runId)
  await store.finish(completed.decisionId, 'completed', 'resumed: the refund ran')
  await store.claim(stale.decisionId, stale.runId)
  await store.finish(stale.decisionId, 'stale', 'the order changed since the question was asked')
  await store.claim(live.decisionId, live.runId, 'callback')
  Object.assign(ids, {
    uncertain: uncertain.decisionId,
    live: live.decisionId,
    pendingAgent: pendingAgent.decisionId,
    pendingWf: pendingWf.decisionId,
    completed: completed.decisionId,
    stale: stale.decisionId,
  })
}

async function startDev(args: string[]): Promise<void> {
  child = spawn(process.execPath, [...nodeScript('src/cli/main.ts'), 'dev', ...args], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: '1' },
  })
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8')
  })
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8')
  })
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`dev did not start:\n${output}`)), 45_000)
    child.stdout.on('data', () => {
      if (output.includes('Press Ctrl-C to stop.')) {
        clearTimeout(timer)
        resolve()
      }
    })
    child.once('exit', () => {
      clearTimeout(timer)
      reject(new Error(`dev exited early:\n${output}`))
    })
  })
  boardUrl = /Review board\s+(http:\/\/\S+\/board)/.exec(output)?.[1] ?? ''
  apiKey = /API key\s+(pk_\S+)/.exec(output)?.[1] ?? ''
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pushary-board-browser-'))
  mkdirSync(IMAGES, { recursive: true })
  store = createSqliteReviewStore({ url: `file:${join(dir, 'reviews.db')}` })
  await seed()
  // The live review's holder keeps its claim alive, as a resumer does while the tool runs.
  keepAlive = setInterval(() => {
    void store.claimState(ids.live).then((claim) => claim && store.keepAlive(ids.live, claim.since))
  }, 2_000)
  await startDev([
    '--port',
    '0',
    '--db',
    join(dir, 'service.db'),
    '--board-db',
    join(dir, 'reviews.db'),
    '--show-secrets',
  ])
  browser = await launchChromium()
  page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage()
}, 120_000)

afterAll(async () => {
  clearInterval(keepAlive)
  await browser?.close()
  if (child && child.exitCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGINT')
    await exited
  }
  await store?.close()
  rmSync(dir, { recursive: true, force: true })
})

function rowsShown(): Promise<string[]> {
  return page
    .locator('tr[data-decision]')
    .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-decision') ?? ''))
}

describe('the review board in Chromium, served by pushary-mastra dev', () => {
  it('asks for the operator key, then lists reviews by state, and filters', async () => {
    expect(boardUrl, output).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/board$/)
    await page.goto(boardUrl)
    await expect.poll(() => page.locator('input[name="key"]').count()).toBe(1)
    expect(await page.locator('tr[data-decision]').count()).toBe(0)
    await page.fill('input[name="key"]', apiKey)
    await Promise.all([page.waitForURL(boardUrl), page.click('button[type="submit"]')])
    for (const [state, id] of [
      ['pending', ids.pendingAgent],
      ['resuming', ids.live],
      ['completed', ids.completed],
      ['stale', ids.stale],
      ['uncertain', ids.uncertain],
    ] as const) {
      await expect
        .poll(() => page.locator(`section[data-state="${state}"] tr[data-decision="${id}"]`).count())
        .toBe(1)
    }
    expect(await page.locator('section[data-state="pending"] tr[data-decision]').count()).toBe(2)
    await page.screenshot({ path: join(IMAGES, 'review-board-list.png'), fullPage: true })

    await page.check('input[name="state"][value="pending"]')
    await page.selectOption('select[name="kind"]', 'agent')
    await Promise.all([page.waitForURL(/kind=agent/), page.click('form.filters button[type="submit"]')])
    expect(await rowsShown()).toEqual([ids.pendingAgent])
    await page.fill('input[name="customer"]', 'acme-ops')
    await page.uncheck('input[name="state"][value="pending"]')
    await page.selectOption('select[name="kind"]', '')
    await Promise.all([
      page.waitForURL(/customer=acme-ops/),
      page.click('form.filters button[type="submit"]'),
    ])
    expect((await rowsShown()).sort()).toEqual([ids.pendingWf, ids.stale].sort())
  })

  it('opens a review: its timeline and the lifecycle with its state highlighted', async () => {
    await page.goto(boardUrl)
    await page.click(`tr[data-decision="${ids.uncertain}"] a`)
    await page.waitForURL(/\/board\/reviews\//)
    const current = page.locator('figure.lifecycle g.state.current')
    expect(await current.getAttribute('data-state')).toBe('uncertain')
    expect(await page.locator('figure.lifecycle g.state').count()).toBe(5)
    // The highlight is drawn, not only named: the current box is filled with the accent colour.
    const fills = await page
      .locator('figure.lifecycle g.state rect:first-child')
      .evaluateAll((rects) => rects.map((rect) => getComputedStyle(rect).fill))
    expect(new Set(fills).size).toBe(2)
    const timeline = await page.locator('ol.timeline li').allInnerTexts()
    expect(timeline).toHaveLength(3)
    expect(timeline[2]).toContain('resuming → uncertain')
    expect(timeline[2]).toContain('the refund service timed out after the claim')
  })

  it('recovers what the CLI would allow, after a confirm step, and it is logged', async () => {
    await page.check('input[name="outcome"][value="stale"]')
    await page.fill('textarea[name="reason"]', 'Ledger shows no refund for order 2087 (ticket 7)')
    await page.click('text=Review this recovery')
    await page.waitForURL(/\/recover$/)
    expect(await page.locator('main').textContent()).toContain('Confirm recovery')
    await page.click('button:has-text("Confirm: mark stale")')
    await expect.poll(() => page.locator('p.notice').textContent()).toContain('Recovered: uncertain → stale')
    expect(await page.locator('figure.lifecycle g.state.current').getAttribute('data-state')).toBe('stale')
    expect((await store.get(ids.uncertain))?.state).toBe('stale')
    await page.screenshot({ path: join(IMAGES, 'review-board-review.png'), fullPage: true })
    await expect.poll(() => output).toContain(`operator recovered ${ids.uncertain}: uncertain -> stale`)
  })

  it('refuses what the CLI would refuse: a claim its holder still keeps alive', async () => {
    await page.goto(`${boardUrl}/reviews/${encodeURIComponent(ids.live)}`)
    await page.check('input[name="outcome"][value="stale"]')
    await page.fill('textarea[name="reason"]', 'looks stuck')
    await page.click('text=Review this recovery')
    await page.click('button:has-text("Confirm: mark stale")')
    const notice = page.locator('p.notice.refused')
    await expect
      .poll(() => notice.textContent())
      .toMatch(/Recovery refused: review \S+ is claimed by the resumer that took it at/)
    expect((await store.get(ids.live))?.state).toBe('resuming')
    await expect.poll(() => output).toContain(`recovery of ${ids.live} refused (live_claim)`)
  })
})
