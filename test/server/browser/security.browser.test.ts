/**
 * Issue 9 page cases in Debian Chromium: a device cookie tossed from another
 * port of the same host (item 6), options that could never be chosen
 * (item 7), and displayed numbers that could lie (item 4).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPusharyClient, type PusharyClient } from '../../../src/pushary/client.js'
import { createPusharyDevServer, type PusharyDevServer } from '../../../src/server/dev-server.js'
import { launchChromium } from '../../helpers/browser.js'
import { enrollDevice } from '../support/devices.js'

const WAIT_MS = 15_000

let dir: string
let server: PusharyDevServer
let client: PusharyClient
let browser: Browser
const contexts: BrowserContext[] = []

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pushary-security-browser-'))
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

/** A phone enrolled for `externalId` by opening the link and tapping the button. */
async function phone(externalId: string, options: { javaScript?: boolean } = {}): Promise<Page> {
  const context = await browser.newContext({
    viewport: { width: 375, height: 812 },
    javaScriptEnabled: options.javaScript ?? true,
  })
  contexts.push(context)
  const page = await context.newPage()
  const { universalLink } = await client.enroll(externalId)
  await page.goto(universalLink)
  await page.getByRole('button', { name: 'Link this phone', exact: true }).click({ timeout: WAIT_MS })
  await page.waitForURL((url) => url.pathname === '/review', { timeout: WAIT_MS })
  return page
}

/** A page on another port of the same host: what an attacker's local web app could serve. */
async function startOtherPortPage(script: string): Promise<{ url: string; close(): Promise<void> }> {
  const other: Server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html' })
    response.end(`<!doctype html><title>other app</title><script>${script}</script><p>hello</p>`)
  })
  await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve))
  const { port } = other.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        other.closeAllConnections()
        other.close(() => resolve())
      }),
  }
}

describe('a device cookie tossed from another port (item 6)', () => {
  it('refuses to show or answer anything when a second device cookie was planted', async () => {
    const victim = await phone('victim_toss')
    const mine = await client.decisions.create({
      question: 'Victim: refund EUR 5?',
      externalId: 'victim_toss',
    })
    const attacker = await enrollDevice(client, 'attacker_toss')
    const bait = await client.decisions.create({
      question: 'Attacker: approve wire of EUR 50,000?',
      externalId: 'attacker_toss',
    })
    const other = await startOtherPortPage(
      `document.cookie = 'pushary_device=${attacker.token}; path=/review; SameSite=Lax'`,
    )
    try {
      await victim.goto(other.url)
      await victim.getByText('hello').waitFor({ timeout: WAIT_MS })
    } finally {
      await other.close()
    }
    const cookies = (await victim.context().cookies(`${server.url}/review`)).filter(
      (c) => c.name === 'pushary_device',
    )
    expect(cookies).toHaveLength(2)

    const response = await victim.goto(`${server.url}/review`)
    expect(response?.status()).toBe(400)
    const body = (await victim.locator('body').textContent()) ?? ''
    expect(body).toContain('Two device cookies')
    expect(body).not.toContain(bait.decisionId)
    expect(body).not.toContain('Attacker: approve wire')
    expect(body).not.toContain(mine.decisionId)
    expect((await victim.goto(`${server.url}/review/${bait.decisionId}`))?.status()).toBe(400)
    // Nothing got answered on anyone's behalf.
    expect((await client.decisions.get(bait.decisionId)).status).toBe('pending')
  })
})

describe('options that could never be chosen (item 7)', () => {
  const refused: Array<[string, string[]]> = [
    ['a carriage return', ['Refund\r\nto card', 'Keep']],
    ['a line feed', ['Refund\nto card', 'Keep']],
    ['a NUL', ['Refund\u0000', 'Keep']],
    ['a tab', ['Refund\tcard', 'Keep']],
    ['two lone surrogates that render alike', ['\ud800', '\udbff']],
    ['two spellings of the same text', ['Caf\u00e9', 'Cafe\u0301']],
  ]

  it.each(refused)('refuses options with %s at creation, naming the field', async (_what, options) => {
    const response = await fetch(`${server.baseUrl}/decisions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ question: 'Pick one', type: 'select', options, externalId: 'chooser' }),
    })
    expect(response.status).toBe(400)
    expect(String(((await response.json()) as { field: string }).field)).toMatch(/^options/)
  })

  const accepted = [
    '  spaced out  ',
    '"Quoted" & <b>not bold</b>',
    'Emoji 😀 refund',
    'RTL \u05e9\u05dc\u05d5\u05dd',
    'Caf\u00e9',
    'U+FFFD \ufffd stays',
  ]

  for (const javaScript of [true, false]) {
    it(`records exactly the tapped option for every option it accepts (JavaScript ${javaScript ? 'on' : 'off'})`, async () => {
      const customer = `chooser_${javaScript ? 'js' : 'nojs'}`
      const page = await phone(customer, { javaScript })
      for (const [index, option] of accepted.entries()) {
        const { decisionId } = await client.decisions.create({
          question: `Pick option ${index} (${javaScript ? 'js' : 'no js'})`,
          type: 'select',
          options: accepted,
          externalId: customer,
        })
        await page.goto(`${server.url}/review/${decisionId}`)
        const buttons = page.locator(`article[data-decision-id="${decisionId}"] button[name="answer"]`)
        expect(await buttons.count()).toBe(accepted.length)
        await buttons.nth(index).click({ timeout: WAIT_MS })
        const read = await waitForAnswer(decisionId)
        expect(read === option, `tapped ${JSON.stringify(option)}, recorded ${JSON.stringify(read)}`).toBe(
          true,
        )
      }
    })
  }
})

async function waitForAnswer(decisionId: string): Promise<string | null> {
  const deadline = Date.now() + WAIT_MS
  for (;;) {
    const decision = await client.decisions.get(decisionId, { wait: 2 })
    if (decision.status !== 'pending') return decision.value
    if (Date.now() > deadline) throw new Error(`${decisionId} was never answered`)
  }
}

describe('displayed numbers (item 4)', () => {
  it('formats only strict values and shows anything else exactly as sent', async () => {
    const page = await phone('numbers')
    const rows: Array<[string, string | number, Record<string, unknown>, string]> = [
      ['Binary', '0b111110100', { kind: 'currency', currency: 'EUR' }, '0b111110100 EUR'],
      ['Exponent', '5e2', { kind: 'currency', currency: 'EUR' }, '5e2 EUR'],
      ['Padded', ' 500\n', { kind: 'currency', currency: 'EUR' }, ' 500\n EUR'],
      ['Leading zero', '0500', { kind: 'currency', currency: 'EUR' }, '0500 EUR'],
      ['Fraction of a cent', 500.5, { kind: 'currency', currency: 'EUR' }, '500.5 EUR'],
      ['Strict string', '500', { kind: 'currency', currency: 'EUR' }, '€5.00'],
      ['Strict number', 500, { kind: 'currency', currency: 'EUR' }, '€5.00'],
      ['Digits date', '20300102', { kind: 'timestamp' }, '20300102'],
      ['Rolled-over date', '2030-02-31T00:00:00Z', { kind: 'timestamp' }, '2030-02-31T00:00:00Z'],
      ['ISO date', '2030-01-02T03:04:00Z', { kind: 'timestamp' }, 'Jan 2, 2030, 3:04 AM UTC'],
      ['Hex quantity', '0x10', { kind: 'quantity', unit: 'seats' }, '0x10 seats'],
      ['Precise quantity', '1.0000001', { kind: 'quantity', unit: 'kg' }, '1.0000001 kg'],
      ['Plain quantity', 1200, { kind: 'quantity', unit: 'seats' }, '1,200 seats'],
      ['Shouted boolean', 'TRUE', { kind: 'boolean' }, 'TRUE'],
    ]
    const parameters = Object.fromEntries(rows.map(([, value], index) => [`p${index}`, value]))
    const { decisionId } = await client.decisions.create({
      question: 'Refund as shown?',
      externalId: 'numbers',
      parameters: parameters as Record<string, string | number>,
      presentation: {
        label: 'Refund',
        effect: 'Money leaves the account',
        changes: rows.map(([label, , format], index) => ({ parameter: `p${index}`, label, format }) as never),
      },
    })
    await page.goto(`${server.url}/review/${decisionId}`)
    for (const [label, , , shown] of rows) {
      const cell = page
        .locator('tr', { has: page.locator('th', { hasText: new RegExp(`^${label}$`) }) })
        .locator('td')
      expect(await cell.textContent({ timeout: WAIT_MS }), label).toBe(shown)
    }
  })
})
