/**
 * The reviewer page end to end: the real dev server (SQLite file), the package
 * client, a real callback receiver verifying signatures, and Debian Chromium
 * at phone width driving the page as a reviewer would.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { SIGNATURE_HEADER, verifyWebhookSignature } from '../../../src/pushary/callbacks.js'
import { createPusharyClient, type PusharyClient } from '../../../src/pushary/client.js'
import { createPusharyDevServer, type PusharyDevServer } from '../../../src/server/dev-server.js'
import { launchChromium } from '../../helpers/browser.js'

const WAIT_MS = 15_000
const ARTIFACTS = join(import.meta.dirname, '..', '..', 'artifacts')

interface ReceivedCallback {
  readonly verified: boolean
  readonly body: Record<string, unknown>
}

interface CallbackReceiver {
  readonly url: string
  next(decisionId: string): Promise<ReceivedCallback>
  close(): Promise<void>
}

/** A webhook endpoint that records each callback with its signature verdict. */
async function startCallbackReceiver(secret: string): Promise<CallbackReceiver> {
  const received: Array<ReceivedCallback> = []
  const waiters = new Set<() => void>()
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8')
      const signature = request.headers[SIGNATURE_HEADER]
      received.push({
        verified: verifyWebhookSignature(raw, typeof signature === 'string' ? signature : null, secret),
        body: JSON.parse(raw) as Record<string, unknown>,
      })
      response.writeHead(200).end('ok')
      for (const wake of [...waiters]) wake()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/pushary/callback`,
    next(decisionId) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const hit = received.find((callback) => callback.body.correlationId === decisionId)
          if (hit === undefined) return false
          waiters.delete(check)
          clearTimeout(timer)
          resolve(hit)
          return true
        }
        const timer = setTimeout(() => {
          waiters.delete(check)
          reject(new Error(`no callback for ${decisionId} within ${WAIT_MS} ms`))
        }, WAIT_MS)
        if (!check()) waiters.add(check)
      })
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

describe('reviewer page in Chromium at 375 px', () => {
  let dir: string
  let server: PusharyDevServer
  let receiver: CallbackReceiver
  let client: PusharyClient
  let browser: Browser
  const contexts: BrowserContext[] = []
  const pageErrors: string[] = []

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'pushary-reviewer-browser-'))
    server = await createPusharyDevServer({
      dbPath: join(dir, 'dev.db'),
      port: 0,
      callbackAddresses: { allowLoopback: true },
    })
    receiver = await startCallbackReceiver(server.webhookSecret)
    client = createPusharyClient({ baseUrl: server.baseUrl, apiKey: server.apiKey })
    browser = await launchChromium()
  })

  afterEach(() => {
    expect(pageErrors).toEqual([])
  })

  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => undefined)
    await browser?.close()
    await receiver?.close()
    await server?.close()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  /** A fresh phone: its own cookie jar, enrolled by opening the printed link. */
  async function enrolledDevice(externalId: string): Promise<{ context: BrowserContext; page: Page }> {
    const { universalLink } = await client.enroll(externalId)
    const context = await browser.newContext({
      viewport: { width: 375, height: 812 },
      isMobile: true,
      hasTouch: true,
    })
    contexts.push(context)
    const page = await context.newPage()
    // A CSP violation or script error would silently stop live updates; fail loudly instead.
    page.on('pageerror', (error) => pageErrors.push(`${externalId}: ${error.message}`))
    page.on('console', (message) => {
      if (message.type() === 'error') pageErrors.push(`${externalId}: ${message.text()}`)
    })
    await linkThisPhone(page, universalLink, externalId)
    // The page is live once the event stream said `ready`; later creations then cannot be missed.
    await page.getByText('Live', { exact: true }).waitFor({ timeout: WAIT_MS })
    return { context, page }
  }

  function card(page: Page, question: string): Locator {
    return page.getByRole('article', { name: question, exact: true })
  }

  async function createFor(externalId: string, input: Record<string, unknown> & { question: string }) {
    const created = await client.decisions.create({ externalId, callbackUrl: receiver.url, ...input })
    return created.decisionId
  }

  /** Opens the printed link, checks the confirmation page, taps "Link this phone" and lands on the list. */
  async function linkThisPhone(page: Page, link: string, externalId: string): Promise<void> {
    await page.goto(link)
    await page
      .getByRole('heading', { name: `Link this phone to ${externalId}`, exact: true })
      .waitFor({ timeout: WAIT_MS })
    await page.getByRole('button', { name: 'Link this phone', exact: true }).tap({ timeout: WAIT_MS })
    await page.waitForURL((url) => url.pathname === '/review', { timeout: WAIT_MS })
  }

  async function enrolledDeviceFromLink(
    link: string,
    externalId: string,
  ): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ viewport: { width: 375, height: 812 }, hasTouch: true })
    contexts.push(context)
    const page = await context.newPage()
    await linkThisPhone(page, link, externalId)
    return { context, page }
  }

  it('binds a device to its customer through the single-use link with an HttpOnly cookie', async () => {
    const { universalLink } = await client.enroll('cust_link')
    // A chat app's link preview fetches the URL first; it must not use up the link.
    const preview = await browser.newContext()
    contexts.push(preview)
    expect((await preview.request.get(universalLink)).status()).toBe(200)
    expect(await preview.cookies()).toEqual([])

    const { context } = await enrolledDeviceFromLink(universalLink, 'cust_link')
    const cookie = (await context.cookies()).find((c) => c.name === 'pushary_device')
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' })
    expect(cookie?.value.length).toBeGreaterThanOrEqual(32)

    const second = await browser.newContext({ viewport: { width: 375, height: 812 } })
    contexts.push(second)
    const reused = await (await second.newPage()).goto(universalLink)
    expect(reused?.status()).toBe(410)
    expect(await second.cookies()).toEqual([])
  })

  it('fits pending confirm, select and input decisions into 375 px and saves a screenshot', async () => {
    const { page } = await enrolledDevice('cust_shot')
    const ids = [
      await createFor('cust_shot', {
        question: 'Refund order #1042 to Ada Lovelace?',
        agentName: 'Support agent',
        toolName: 'refund.create',
        parameters: { amountMinor: 4800, items: 2, restock: true },
        presentation: {
          label: 'Refund',
          effect: 'Money goes back to the customer’s card',
          risk: 'high',
          changes: [
            { parameter: 'amountMinor', label: 'Amount', format: { kind: 'currency', currency: 'EUR' } },
            { parameter: 'items', label: 'Items', format: { kind: 'quantity', unit: 'pcs' } },
            { parameter: 'restock', label: 'Restock', format: { kind: 'boolean' } },
          ],
        },
      }),
      await createFor('cust_shot', {
        question: 'Which carrier should ship the replacement?',
        type: 'select',
        options: ['DHL Express', 'UPS Standard', 'Hold the order'],
        agentName: 'Fulfilment agent',
      }),
      await createFor('cust_shot', {
        question: 'Why is this refund needed?',
        type: 'input',
        placeholder: 'A short reason for the ledger',
        agentName: 'Support agent',
      }),
    ]
    const refund = card(page, 'Refund order #1042 to Ada Lovelace?')
    await refund.waitFor({ timeout: WAIT_MS })
    await card(page, 'Why is this refund needed?').waitFor({ timeout: WAIT_MS })
    expect(await refund.getByRole('row', { name: 'Amount €48.00' }).count()).toBe(1)
    expect(await refund.getByText('High risk').count()).toBe(1)
    expect(await refund.getByText('Support agent').count()).toBe(1)
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth)
    expect(overflow).toBeLessThanOrEqual(375)

    mkdirSync(ARTIFACTS, { recursive: true })
    await page.screenshot({ path: join(ARTIFACTS, 'reviewer-375.png'), fullPage: true })
    for (const id of ids) await client.decisions.cancel(id)
    await refund.waitFor({ state: 'detached', timeout: WAIT_MS })
  })

  it('approves a pending confirm with one tap, records answered/yes and delivers a signed callback', async () => {
    const { page } = await enrolledDevice('cust_a')
    const question = 'Refund EUR 48 for order 7?'
    const decisionId = await createFor('cust_a', { question, agentName: 'Refund agent' })
    const approval = card(page, question)
    await approval.getByRole('button', { name: 'Approve', exact: true }).tap({ timeout: WAIT_MS })
    await approval.waitFor({ state: 'detached', timeout: WAIT_MS })
    await page.getByRole('status').getByText('Approved.').waitFor({ timeout: WAIT_MS })

    const decision = await client.decisions.get(decisionId)
    expect(decision).toMatchObject({ status: 'answered', answered: true, value: 'yes' })
    const callback = await receiver.next(decisionId)
    expect(callback.verified).toBe(true)
    expect(callback.body).toMatchObject({ correlationId: decisionId, answer: 'yes', value: 'yes' })
  })

  it('answers a select with the tapped option and an input with the typed text', async () => {
    const { page } = await enrolledDevice('cust_a')
    const selectId = await createFor('cust_a', {
      question: 'Ship with which carrier?',
      type: 'select',
      options: ['DHL', 'UPS <fast>'],
    })
    await card(page, 'Ship with which carrier?')
      .getByRole('button', { name: 'UPS <fast>', exact: true })
      .tap({ timeout: WAIT_MS })
    await card(page, 'Ship with which carrier?').waitFor({ state: 'detached', timeout: WAIT_MS })
    expect(await client.decisions.get(selectId)).toMatchObject({ status: 'answered', value: 'UPS <fast>' })
    expect(await receiver.next(selectId)).toMatchObject({ verified: true, body: { answer: 'UPS <fast>' } })

    const inputId = await createFor('cust_a', {
      question: 'Reason for the refund?',
      type: 'input',
      placeholder: 'Type a reason',
    })
    const reason = card(page, 'Reason for the refund?')
    const box = reason.getByRole('textbox', { name: 'Your answer' })
    await box.waitFor({ timeout: WAIT_MS })
    expect(await box.getAttribute('placeholder')).toBe('Type a reason')
    await box.fill('Parcel arrived damaged')
    await reason.getByRole('button', { name: 'Send', exact: true }).tap()
    await reason.waitFor({ state: 'detached', timeout: WAIT_MS })
    expect(await client.decisions.get(inputId)).toMatchObject({
      status: 'answered',
      value: 'Parcel arrived damaged',
    })
    expect(await receiver.next(inputId)).toMatchObject({
      verified: true,
      body: { correlationId: inputId, answer: 'Parcel arrived damaged' },
    })
  })

  it('shows new decisions and drops answered, cancelled and expired ones without a reload', async () => {
    const { page } = await enrolledDevice('cust_live')
    await page.evaluate(() => {
      ;(window as unknown as { loadMarker: number }).loadMarker = 42
    })
    const question = 'Deploy build 311 to production?'
    const liveId = await createFor('cust_live', { question })
    await card(page, question).waitFor({ timeout: WAIT_MS })

    const other = 'Rotate the staging API key?'
    const otherId = await createFor('cust_live', { question: other })
    await card(page, other).waitFor({ timeout: WAIT_MS })
    await client.decisions.answer(liveId, 'no')
    await card(page, question).waitFor({ state: 'detached', timeout: WAIT_MS })
    await client.decisions.cancel(otherId)
    await card(page, other).waitFor({ state: 'detached', timeout: WAIT_MS })
    const expiring = 'Extend the trial by 7 days?'
    await createFor('cust_live', { question: expiring, expiresInSeconds: 1 })
    await card(page, expiring).waitFor({ timeout: WAIT_MS })
    await card(page, expiring).waitFor({ state: 'detached', timeout: WAIT_MS })
    await page.getByText('No pending decisions.').waitFor({ timeout: WAIT_MS })

    const marker = await page.evaluate(() => (window as unknown as { loadMarker?: number }).loadMarker)
    expect(marker).toBe(42)
  })

  it('keeps one customer’s decision away from another customer’s device', async () => {
    const deviceA = await enrolledDevice('cust_iso_a')
    const deviceB = await enrolledDevice('cust_iso_b')
    const question = 'Close account of customer A?'
    const decisionId = await createFor('cust_iso_a', { question })
    await card(deviceA.page, question).waitFor({ timeout: WAIT_MS })

    await deviceB.page.reload()
    await deviceB.page.getByText('No pending decisions.').waitFor({ timeout: WAIT_MS })
    expect(await card(deviceB.page, question).count()).toBe(0)

    const direct = await deviceB.page.goto(`${server.url}/review/${decisionId}`)
    expect(direct?.status()).toBe(403)
    // Chromium logs every non-2xx navigation; this one is the expected refusal.
    const expected = pageErrors.findIndex((text) => text.includes('status of 403'))
    expect(expected).toBeGreaterThanOrEqual(0)
    pageErrors.splice(expected, 1)
    expect(await deviceB.page.content()).not.toContain(question)

    const post = await deviceB.context.request.post(`${server.url}/review/${decisionId}/answer`, {
      form: { answer: 'yes' },
      headers: { origin: server.url, accept: 'application/json' },
    })
    expect(post.status()).toBe(403)
    expect(await client.decisions.get(decisionId)).toMatchObject({ status: 'pending', value: null })
  })
})
