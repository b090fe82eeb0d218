/**
 * Who may ask, who may answer, who may consume, over loopback HTTP: a key
 * bound to one customer asks for that customer only, never answers (no
 * relay, no approval link on create, on replay or on read), sees only the
 * hosted fields of its decisions, and has its own idempotency keys. The link
 * page answers only through a link that was handed to the site key.
 */

import { pathToFileURL } from 'node:url'
import { createClient } from '@libsql/client'
import { describe, expect, it } from 'vitest'
import { createPusharyClient, type PusharyClient } from '../../src/pushary/client.js'
import { type Harness, serviceFixture } from './service-harness.js'

const service = serviceFixture('bound-key-answers')

async function boundKey(h: Harness, externalId: string): Promise<{ apiKey: string; client: PusharyClient }> {
  const issued = await h.client.keys.issue({ externalId })
  return {
    apiKey: issued.apiKey,
    client: createPusharyClient({ apiKey: issued.apiKey, baseUrl: h.server.baseUrl }),
  }
}

const tap = (url: string, answer: string) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ answer }).toString(),
  })

const refund = {
  question: 'Refund EUR 480 on order o-9?',
  externalId: 'customer_a',
  toolName: 'refund.create',
  toolTarget: 'order o-9',
}

describe('a bound key never answers', () => {
  it('refuses a bound key an approval link on create, so it cannot approve its own refund and no permit is issued', async () => {
    const h = await service.start()
    const a = await boundKey(h, 'customer_a')
    const asked = await h.api('POST', '/decisions', { ...refund, approvalUrl: true }, { key: a.apiKey })
    expect(asked.status).toBe(403)
    expect(asked.json).toMatchObject({ code: 'forbidden' })
    expect(JSON.stringify(asked.json)).not.toContain('/a/')
    // Nothing was opened that anyone could answer or spend.
    const { decisions } = await h.client.decisions.list({ externalId: 'customer_a' })
    expect(decisions).toEqual([])
  })

  it('refuses a bound key the link of a site-created decision it replays, and its own read carries none', async () => {
    const h = await service.start()
    const a = await boundKey(h, 'customer_a')
    const body = { ...refund, idempotencyKey: 'refund-o-9' }
    const bySite = await h.api('POST', '/decisions', body)
    expect(bySite.status).toBe(201)
    const decisionId = String(bySite.json.decisionId)

    const replayed = await h.api('POST', '/decisions', { ...body, approvalUrl: true }, { key: a.apiKey })
    expect(replayed.status).toBe(403)
    expect(JSON.stringify(replayed.json)).not.toContain('/a/')

    const read = await h.api('GET', `/decisions/${decisionId}`, undefined, { key: a.apiKey })
    expect(read.status).toBe(200)
    expect(read.json).not.toHaveProperty('approvalUrl')
    expect(await h.client.decisions.get(decisionId)).toMatchObject({ status: 'pending', value: null })
  })

  it('answers through a link only when the link was handed to the site key', async () => {
    const h = await service.start()
    const created = await h.client.decisions.create({ ...refund, approvalUrl: true })
    const link = created.approvalUrl ?? ''
    // A link whose recipient is not recorded (issued before recipients were
    // recorded, or written by hand into the file) may be in the asker's hands.
    const db = createClient({ url: pathToFileURL(h.dbPath).href })
    await db.execute('UPDATE approval_links SET issued_to = NULL')
    db.close()

    const opened = await fetch(link)
    expect(opened.status).toBe(403)
    expect(await opened.text()).not.toContain('name="answer"')
    expect((await tap(link, 'yes')).status).toBe(403)
    expect(await h.client.decisions.get(created.decisionId)).toMatchObject({ status: 'pending', value: null })
    await expect(
      h.client.consumeAuthorization({
        authorizationId: created.decisionId,
        toolName: 'refund.create',
        toolTarget: 'order o-9',
        externalId: 'customer_a',
      }),
    ).resolves.toMatchObject({ status: 'refused' })
  })
})

describe('a bound key sees and scopes only its own', () => {
  it("gives key B a new decision for an idempotency key key A already used, instead of a 409 that tells B of A's request", async () => {
    const h = await service.start()
    const a = await boundKey(h, 'customer_a')
    const b = await boundKey(h, 'customer_b')
    const ofA = await a.client.decisions.create({ ...refund, idempotencyKey: 'shared-key' })
    const ofB = await h.api(
      'POST',
      '/decisions',
      { question: 'Refund EUR 5 on order o-2?', externalId: 'customer_b', idempotencyKey: 'shared-key' },
      { key: b.apiKey },
    )
    expect(ofB.status).toBe(201)
    expect(ofB.json.decisionId).not.toBe(ofA.decisionId)
    expect(ofB.json).not.toHaveProperty('idempotent')
    // A's own replay still returns A's decision.
    const again = await a.client.decisions.create({ ...refund, idempotencyKey: 'shared-key' })
    expect(again).toMatchObject({ decisionId: ofA.decisionId, idempotent: true })
  })

  it("shows a bound key neither the application's callback URL nor what a permit binds", async () => {
    const h = await service.start()
    const receiver = await service.receive()
    const a = await boundKey(h, 'customer_a')
    const created = await h.client.decisions.create({
      ...refund,
      callbackUrl: `${receiver.url}?token=s3cret-callback-token`,
      parameters: { amountMinor: 48_000, currency: 'EUR' },
      presentation: { label: 'Refund', effect: 'Sends EUR 480 back to the card' },
    })
    await h.client.decisions.answer(created.decisionId, 'yes')
    await receiver.waitFor(1)

    const read = await h.api('GET', `/decisions/${created.decisionId}`, undefined, { key: a.apiKey })
    const listed = await h.api('GET', '/decisions', undefined, { key: a.apiKey })
    for (const seen of [read.json, (listed.json.decisions as Record<string, unknown>[])[0] ?? {}]) {
      expect(seen).toMatchObject({ decisionId: created.decisionId, status: 'answered', value: 'yes' })
      for (const field of [
        'deliveries',
        'toolName',
        'toolTarget',
        'parameters',
        'presentation',
        'agentName',
      ]) {
        expect(seen[field] ?? null).toBeNull()
      }
      expect(JSON.stringify(seen)).not.toContain('s3cret-callback-token')
    }
    const deliveries = await h.api('GET', `/decisions/${created.decisionId}/deliveries`, undefined, {
      key: a.apiKey,
    })
    expect(deliveries.status).toBe(403)
    // The site key still reads everything, as the hosted API and `deliveries list` expect.
    const bySite = await h.api('GET', `/decisions/${created.decisionId}`)
    expect(bySite.json).toMatchObject({ toolName: 'refund.create', parameters: { amountMinor: 48_000 } })
    expect(JSON.stringify(bySite.json.deliveries)).toContain('s3cret-callback-token')
  })
})
