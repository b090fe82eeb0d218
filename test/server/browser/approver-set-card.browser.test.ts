/**
 * Issue 41, item 4 in Debian Chromium at 375×812: a real 2-of-3 workflow
 * approval (Mastra on a LibSQL file, a SQLite review store, the local
 * decision service over loopback HTTP, the dispatcher). Each approver's
 * phone is enrolled through its link. Alice's open list counts bob's
 * approval without a reload; once alice approves and the set settles,
 * carol's open question says why it was withdrawn, also without a reload.
 * Saves a screenshot of alice's card to a temporary folder;
 * `PUSHARY_REFRESH_IMAGES=1` writes it to docs/images/ instead.
 */
import { mkdirSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Mastra } from '@mastra/core/mastra'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPusharyDispatcher } from '../../../src/agents/dispatcher.js'
import type { PusharyWorkflowReview } from '../../../src/store/review-schema.js'
import type { PusharyReviewStore } from '../../../src/store/review-store.js'
import { launchChromium } from '../../helpers/browser.js'
import { createTestEnv, type TestEnv } from '../../helpers/mastra.js'
import { mastraOnFile, refundWorkflow, scratchReviewStore } from '../../steps/support/refund-fixtures.js'

const WAIT_MS = 20_000
const ROOT = join(import.meta.dirname, '..', '..', '..')
const IMAGES =
  process.env.PUSHARY_REFRESH_IMAGES === '1'
    ? join(ROOT, 'docs', 'images')
    : mkdtempSync(join(tmpdir(), 'pushary-approver-card-images-'))
const QUESTION = 'Pay EUR 12,000.00 to ACME Ltd?'

let env: TestEnv
let store: PusharyReviewStore
let mastra: Mastra
let browser: Browser
let payments = 0
const contexts: BrowserContext[] = []

beforeAll(async () => {
  env = await createTestEnv('approver-set-card')
  const scratch = scratchReviewStore('pushary-approver-set-card-')
  store = scratch.store
  const workflow = refundWorkflow({
    id: 'supplier-payment',
    config: { client: env.client, store },
    approval: { id: 'approve-payment' },
    onRefund: () => {
      payments += 1
    },
  })
  mastra = mastraOnFile({ dir: scratch.dir, id: 'approver-set-card', workflows: { workflow } })
  browser = await launchChromium()
}, 60_000)

afterAll(async () => {
  for (const context of contexts) await context.close().catch(() => undefined)
  await browser?.close()
  await store?.close()
  await env?.close()
})

/** A phone enrolled for `externalId` through its link, on the list page. */
async function phone(externalId: string): Promise<Page> {
  const { universalLink } = await env.client.enroll(externalId)
  const context = await browser.newContext({
    viewport: { width: 375, height: 812 },
    deviceScaleFactor: 2,
    isMobile: true,
    hasTouch: true,
  })
  contexts.push(context)
  const page = await context.newPage()
  await page.goto(universalLink)
  await page.getByRole('button', { name: 'Link this phone', exact: true }).tap({ timeout: WAIT_MS })
  await page.waitForURL((url) => url.pathname === '/review', { timeout: WAIT_MS })
  return page
}

/** Marks the document; the mark survives only as long as the page is not reloaded. */
async function markDocument(page: Page): Promise<void> {
  await page.evaluate(() => {
    ;(window as unknown as { notReloaded?: boolean }).notReloaded = true
  })
}

async function stillTheSameDocument(page: Page): Promise<boolean> {
  return page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded === true)
}

async function textOf(page: Page, selector: string, expected: string): Promise<void> {
  await page.waitForFunction(
    ([css, text]) => document.querySelector(css as string)?.textContent === text,
    [selector, expected],
    { timeout: WAIT_MS },
  )
}

describe("an approvers' set on the phones", () => {
  it("counts bob's approval on alice's open card without a reload, then tells carol why her question was withdrawn", async () => {
    const [alice, bob, carol] = await Promise.all([phone('alice_pay'), phone('bob_pay'), phone('carol_pay')])
    const run = await mastra.getWorkflow('workflow').createRun()
    const started = await run.start({
      inputData: {
        operationId: 'payment:INV-2041',
        question: QUESTION,
        approvers: { externalIds: ['alice_pay', 'bob_pay', 'carol_pay'], required: 2 },
        subject: {
          toolName: 'payment.send',
          toolTarget: 'ACME Ltd, invoice INV-2041',
          parameters: { amountMinor: 1_200_000 },
          presentation: {
            label: 'Supplier payment',
            effect: 'Sends EUR 12,000.00 to ACME Ltd from the operating account',
            changes: [
              {
                parameter: 'amountMinor',
                label: 'Amount',
                format: { kind: 'currency', currency: 'EUR' },
              },
            ],
            risk: 'high',
          },
        },
      } as never,
    })
    expect(started.status).toBe('suspended')
    const reviews = (await store.listByState('pending', { limit: 100 })).filter(
      (review): review is PusharyWorkflowReview =>
        review.runId === run.runId && review.target === 'workflow-step',
    )
    const decisionOf = (externalId: string) =>
      reviews.find((review) => review.externalId === externalId)?.decisionId as string
    expect(reviews).toHaveLength(3)
    const dispatcher = createPusharyDispatcher({ mastra, client: env.client, store })

    // Alice keeps her list open; carol opened her question's own page (the notification link).
    const aliceLine = `[data-decision-id="${decisionOf('alice_pay')}"] .approvers`
    await textOf(alice, aliceLine, '0 of 2 approvals so far · 3 asked · 0 answered')
    await alice.getByText('Live', { exact: true }).waitFor({ timeout: WAIT_MS })
    await markDocument(alice)
    await carol.goto(`${env.server.url}/review/${decisionOf('carol_pay')}`)
    await carol.getByText('Live', { exact: true }).waitFor({ timeout: WAIT_MS })
    await textOf(carol, '.approvers', '0 of 2 approvals so far · 3 asked · 0 answered')
    await markDocument(carol)

    // Bob approves on his phone; the dispatcher resumes his review (the set is not settled yet).
    const bobCard = bob.getByRole('article', { name: QUESTION, exact: true })
    await bobCard.getByRole('button', { name: 'Approve', exact: true }).tap({ timeout: WAIT_MS })
    await bob.getByText('Approved.', { exact: true }).waitFor({ timeout: WAIT_MS })
    expect(await dispatcher.resumeDecision(decisionOf('bob_pay'))).toMatchObject({ status: 'resumed' })
    expect(payments).toBe(0)

    await textOf(alice, aliceLine, '1 of 2 approvals so far · 3 asked · 1 answered')
    await textOf(carol, '.approvers', '1 of 2 approvals so far · 3 asked · 1 answered')
    expect(await stillTheSameDocument(alice)).toBe(true)
    expect(await stillTheSameDocument(carol)).toBe(true)
    expect(await alice.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375)

    const aliceCard = alice.getByRole('article', { name: QUESTION, exact: true })
    const text = (await aliceCard.textContent()) ?? ''
    expect(text).toContain('Approvals needed')
    expect(text).toContain('2 of 3, one denial declines')
    expect(text).toContain('bob_pay, carol_pay')
    mkdirSync(IMAGES, { recursive: true })
    const shot = join(IMAGES, 'approver-set-card.png')
    await alice.screenshot({ path: shot })
    process.stdout.write(`approver-set card screenshot: ${shot}\n`)

    // Alice approves: the quorum is reached, the payment runs once, carol's question is withdrawn.
    await aliceCard.getByRole('button', { name: 'Approve', exact: true }).tap()
    await alice.getByText('Approved.', { exact: true }).waitFor({ timeout: WAIT_MS })
    expect(await dispatcher.resumeDecision(decisionOf('alice_pay'))).toMatchObject({
      status: 'resumed',
      actionOutcome: 'ran',
    })
    expect(payments).toBe(1)
    expect((await env.client.decisions.get(decisionOf('carol_pay'))).status).toBe('cancelled')

    const withdrawn = "Withdrawn: the approvers' set was settled (2 of 2 approvals)."
    await textOf(carol, '.outcome', withdrawn)
    expect(await stillTheSameDocument(carol)).toBe(true)
    expect(await carol.getByRole('button', { name: 'Approve', exact: true }).count()).toBe(0)
    await textOf(carol, '.approvers', '2 of 2 approvals · 3 asked · 2 answered')
    // The same after a reload, and the question has left her list.
    await carol.reload()
    await textOf(carol, '.outcome', withdrawn)
    await carol.goto(`${env.server.url}/review`)
    await carol.getByText('No pending decisions.').waitFor({ timeout: WAIT_MS })
  })
})
