/**
 * The approval link page in Debian Chromium at 375×812: a link handed to the
 * site key shows Approve; a link recorded as handed to a bound key (the
 * customer's agent, the one asking) shows why it cannot answer, offers no
 * button, and the decision stays pending with nothing to spend.
 */
import { pathToFileURL } from 'node:url'
import { createClient } from '@libsql/client'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchChromium } from '../../helpers/browser.js'
import { serviceFixture } from '../service-harness.js'

const service = serviceFixture('bound-key-link-browser')
let browser: Browser

beforeAll(async () => {
  browser = await launchChromium()
}, 60_000)

afterAll(async () => {
  await browser?.close()
})

describe('the approval link page and bound keys', () => {
  it('offers no Approve button on a link handed to a bound key, and the refund stays unapproved', async () => {
    const h = await service.start()
    const bound = await h.client.keys.issue({ externalId: 'customer_a' })
    const refund = {
      question: 'Refund EUR 480 on order o-9?',
      externalId: 'customer_a',
      toolName: 'refund.create',
    }
    const bySite = await h.client.decisions.create({ ...refund, approvalUrl: true })
    const handedToBoundKey = await h.client.decisions.create({ ...refund, approvalUrl: true })
    const db = createClient({ url: pathToFileURL(h.dbPath).href })
    await db.execute({
      sql: 'UPDATE approval_links SET issued_to = ? WHERE decision_id = ?',
      args: [bound.keyPrefix, handedToBoundKey.decisionId],
    })
    db.close()

    const context = await browser.newContext({ viewport: { width: 375, height: 812 }, isMobile: true })
    try {
      const page = await context.newPage()
      await page.goto(bySite.approvalUrl ?? '')
      await expect(page.getByRole('button', { name: 'Approve', exact: true }).isVisible()).resolves.toBe(true)

      const refused = await page.goto(handedToBoundKey.approvalUrl ?? '')
      expect(refused?.status()).toBe(403)
      await expect(page.getByText('Link cannot answer').first().isVisible()).resolves.toBe(true)
      await expect(page.getByRole('button', { name: 'Approve', exact: true }).count()).resolves.toBe(0)
    } finally {
      await context.close()
    }
    expect(await h.client.decisions.get(handedToBoundKey.decisionId)).toMatchObject({ status: 'pending' })
    await expect(
      h.client.consumeAuthorization({
        authorizationId: handedToBoundKey.decisionId,
        toolName: 'refund.create',
        externalId: 'customer_a',
      }),
    ).resolves.toMatchObject({ status: 'refused' })
  })
})
