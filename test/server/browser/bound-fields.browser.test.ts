/**
 * Issue 38, findings 3 and 4 on the page, in Debian Chromium at 375×812.
 * What you see is what you approve: every field a permit binds (action name,
 * target, actor, environment, parameters) is drawn, exactly as sent, on the
 * phone card, the list, the batch card and the approval-link page; and a
 * folded long value's summary never shows U+FFFD.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPusharyClient, type PusharyClient } from '../../../src/pushary/client.js'
import { createPusharyDevServer, type PusharyDevServer } from '../../../src/server/dev-server.js'
import { batchGroupKey } from '../../../src/steps/workflow-binding.js'
import { launchChromium } from '../../helpers/browser.js'

const WAIT_MS = 15_000

let dir: string
let server: PusharyDevServer
let client: PusharyClient
let browser: Browser
const contexts: BrowserContext[] = []

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pushary-bound-fields-browser-'))
  server = await createPusharyDevServer({ dbPath: join(dir, 'dev.db'), port: 0 })
  client = createPusharyClient({ baseUrl: server.baseUrl, apiKey: server.apiKey })
  browser = await launchChromium()
})

afterAll(async () => {
  for (const context of contexts) await context.close().catch(() => undefined)
  await browser?.close()
  await server?.close()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

async function newPage(): Promise<Page> {
  const context = await browser.newContext({
    viewport: { width: 375, height: 812 },
    isMobile: true,
    hasTouch: true,
  })
  contexts.push(context)
  return context.newPage()
}

/** A phone enrolled for `externalId` by opening the link and tapping the button. */
async function phone(externalId: string): Promise<Page> {
  const page = await newPage()
  const { universalLink } = await client.enroll(externalId)
  await page.goto(universalLink)
  await page.getByRole('button', { name: 'Link this phone', exact: true }).tap({ timeout: WAIT_MS })
  await page.waitForURL((url) => url.pathname === '/review', { timeout: WAIT_MS })
  return page
}

/** The action a permit will bind; values a reviewer must be able to tell apart from near misses. */
function action(suffix: string) {
  return {
    toolName: 'refund.create',
    toolTarget: `order o-77 of ACME GmbH (${suffix})`,
    actor: `agent:billing-bot@tenant-9 (${suffix})`,
    environment: 'production-eu',
    parameters: { amountMinor: 4800, currency: 'EUR', reason: `damaged in transit (${suffix})` },
  }
}

/** Asserts that the card draws every bound field, each as text the reviewer reads exactly as sent. */
async function expectBoundFieldsShown(card: Locator, bound: ReturnType<typeof action>): Promise<void> {
  await card.waitFor({ timeout: WAIT_MS })
  // innerText is what is drawn (hidden or closed content is not in it), which is the point here.
  // biome-ignore lint/performance/useDomNodeTextContent: the test asserts rendered text, not the DOM tree
  const drawn = await card.innerText()
  for (const value of [
    bound.toolName,
    bound.toolTarget,
    bound.actor,
    bound.environment,
    ...Object.values(bound.parameters).map(String),
  ]) {
    expect(drawn, `the card shows ${JSON.stringify(value)}`).toContain(value)
  }
}

function cardOf(page: Page, decisionId: string): Locator {
  return page.locator(`article[data-decision-id="${decisionId}"]`)
}

describe('every field a permit binds is on every page that can approve it (finding 3)', () => {
  it('the phone card (decision page) and the list show action, target, actor, environment and parameters', async () => {
    const page = await phone('bound_single')
    const bound = action('single')
    const { decisionId } = await client.decisions.create({
      question: 'Refund the damaged order?',
      externalId: 'bound_single',
      ...bound,
    })
    await page.goto(`${server.url}/review`)
    await expectBoundFieldsShown(cardOf(page, decisionId), bound)
    await page.goto(`${server.url}/review/${decisionId}`)
    await expectBoundFieldsShown(cardOf(page, decisionId), bound)
  })

  it('the batch card shows every item’s bound fields above "Approve all"', async () => {
    const page = await phone('bound_batch')
    const group = batchGroupKey({ workflowId: 'refunds', runId: 'run-bound', stepId: 'approve' })
    const items = [0, 1, 2].map((index) => ({ index, bound: action(`item ${index + 1}`) }))
    const ids: string[] = []
    for (const { index, bound } of items) {
      const created = await client.decisions.create({
        question: `Refund item ${index + 1}?`,
        externalId: 'bound_batch',
        context: JSON.stringify({
          pushary: 'workflow-step',
          workflowId: 'item',
          batch: group,
          batchItem: index,
        }),
        ...bound,
      })
      ids.push(created.decisionId)
    }
    await page.goto(`${server.url}/review`)
    const batch = page.locator('article.batch')
    await batch.getByRole('button', { name: 'Approve all 3', exact: true }).waitFor({ timeout: WAIT_MS })
    for (const [position, { bound }] of items.entries()) {
      await expectBoundFieldsShown(batch.locator(`article[data-decision-id="${ids[position]}"]`), bound)
    }
  })

  it('the approval-link page shows them, and the permit spent from its answer covers exactly that action', async () => {
    const bound = action('link')
    const created = await client.decisions.create({
      question: 'Refund by link?',
      externalId: 'bound_link_no_device',
      approvalUrl: true,
      ...bound,
    })
    const approvalUrl = (created as { approvalUrl?: string }).approvalUrl
    expect(typeof approvalUrl).toBe('string')
    const page = await newPage()
    await page.goto(approvalUrl as string)
    await expectBoundFieldsShown(cardOf(page, created.decisionId), bound)
    const [answered] = await Promise.all([
      page.waitForResponse((response) => response.request().method() === 'POST', { timeout: WAIT_MS }),
      page.getByRole('button', { name: 'Approve', exact: true }).tap({ timeout: WAIT_MS }),
    ])
    expect(answered.status()).toBe(200)
    const permit = await client.consumeAuthorization({
      authorizationId: created.decisionId,
      externalId: 'bound_link_no_device',
      ...bound,
    })
    expect(permit.status).toBe('permitted')
  })
})

describe('a folded long value (finding 4)', () => {
  it('cuts the summary between characters: no U+FFFD, no split flag, and the summary starts the value', async () => {
    const page = await phone('fold_customer')
    // At a cut after 48 UTF-16 units, the 48th unit is the first half of an emoji or a flag.
    const values = {
      emoji: `${'x'.repeat(47)}${'😀'.repeat(40)}`,
      flags: `${'y'.repeat(47)}${'🇩🇪'.repeat(40)}`,
      accents: `${'z'.repeat(47)}${'e\u0301'.repeat(60)}`,
    }
    const { decisionId } = await client.decisions.create({
      question: 'Send the long note?',
      externalId: 'fold_customer',
      toolName: 'note.send',
      parameters: values,
    })
    await page.goto(`${server.url}/review/${decisionId}`)
    const summaries = cardOf(page, decisionId).locator('details.fold > summary')
    await summaries.first().waitFor({ timeout: WAIT_MS })
    expect(await summaries.count()).toBe(3)
    for (const [index, value] of Object.values(values).entries()) {
      const summary = ((await summaries.nth(index).textContent()) ?? '').split('…')[0] as string
      expect(summary).not.toContain('\uFFFD')
      expect(value.startsWith(summary), `${JSON.stringify(summary)} starts the value`).toBe(true)
      const clusters = [...new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(summary)]
      const whole = [...new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(value)]
      expect(clusters.map((cluster) => cluster.segment)).toEqual(
        whole.slice(0, clusters.length).map((cluster) => cluster.segment),
      )
    }
    // The whole value is still one tap away, unchanged.
    const full = cardOf(page, decisionId).locator('details.fold p.full')
    expect(await full.evaluateAll((nodes) => nodes.map((node) => node.textContent))).toEqual(
      Object.values(values),
    )
  })
})
