/**
 * Bound keys on the local service, over loopback HTTP with the package's
 * client: a key issued for one customer creates, reads, lists, cancels and
 * enrols only for that customer, never answers, and gets 403 elsewhere.
 */
import { describe, expect, it } from 'vitest'
import { createPusharyClient, type PusharyClient } from '../../src/pushary/client.js'
import { PusharyApiError } from '../../src/pushary/errors.js'
import { type Harness, serviceFixture } from './service-harness.js'

const service = serviceFixture('bound-keys')

const isStatus = (status: number) => (error: unknown) =>
  error instanceof PusharyApiError && error.status === status

async function boundClient(
  h: Harness,
  externalId: string,
): Promise<{ client: PusharyClient; apiKey: string; keyPrefix: string }> {
  const issued = await h.client.keys.issue({ externalId, name: `${externalId} bot` })
  return {
    client: createPusharyClient({ apiKey: issued.apiKey, baseUrl: h.server.baseUrl }),
    apiKey: issued.apiKey,
    keyPrefix: issued.keyPrefix,
  }
}

describe('bound keys', () => {
  it("gets 403 reading, cancelling or answering customer B's decision with customer A's key, and B's decision is untouched", async () => {
    const h = await service.start()
    const a = await boundClient(h, 'customer_a')
    const ofB = await h.client.decisions.create({ question: 'Refund B?', externalId: 'customer_b' })
    await expect(a.client.decisions.get(ofB.decisionId)).rejects.toSatisfy(isStatus(403))
    await expect(a.client.decisions.cancel(ofB.decisionId)).rejects.toSatisfy(isStatus(403))
    await expect(a.client.decisions.answer(ofB.decisionId, 'yes')).rejects.toSatisfy(isStatus(403))
    const raw = await h.api('GET', `/decisions/${ofB.decisionId}/deliveries`, undefined, { key: a.apiKey })
    expect(raw.status).toBe(403)
    expect(raw.json).toMatchObject({ code: 'forbidden', error: expect.stringContaining(' ') })
    expect(await h.client.decisions.get(ofB.decisionId)).toMatchObject({ status: 'pending', value: null })
  })

  it('cannot answer even its own customer’s decision', async () => {
    const h = await service.start()
    const a = await boundClient(h, 'customer_a')
    const own = await a.client.decisions.create({ question: 'Refund A?', externalId: 'customer_a' })
    await expect(a.client.decisions.answer(own.decisionId, 'yes')).rejects.toSatisfy(isStatus(403))
    expect(await h.client.decisions.get(own.decisionId)).toMatchObject({ status: 'pending' })
  })

  it('creates, reads, lists, cancels, enrols and checks reachability for its own customer only', async () => {
    const h = await service.start()
    const a = await boundClient(h, 'customer_a')
    await h.client.decisions.create({ question: 'Refund B?', externalId: 'customer_b' })
    const own = await a.client.decisions.create({ question: 'Refund A?', externalId: 'customer_a' })
    expect(await a.client.decisions.get(own.decisionId)).toMatchObject({ externalId: 'customer_a' })
    const listed = await a.client.decisions.list()
    expect(listed.decisions.map((d) => d.externalId)).toEqual(['customer_a'])
    await expect(a.client.decisions.list({ externalId: 'customer_b' })).rejects.toSatisfy(isStatus(403))
    expect(await a.client.decisions.cancel(own.decisionId)).toMatchObject({ cancelled: true })
    await expect(
      a.client.decisions.create({ question: 'Refund B?', externalId: 'customer_b' }),
    ).rejects.toSatisfy(isStatus(403))
    await expect(a.client.decisions.create({ question: 'Anyone?' })).rejects.toSatisfy(isStatus(403))
    expect(await a.client.enroll('customer_a')).toMatchObject({ externalId: 'customer_a' })
    await expect(a.client.enroll('customer_b')).rejects.toSatisfy(isStatus(403))
    expect(await a.client.reachability('customer_a')).toMatchObject({ deliverability: 'fallback' })
    await expect(a.client.reachability('customer_b')).rejects.toSatisfy(isStatus(403))
  })

  it('cannot issue keys, read the webhook secret, ask for a verdict or spend a permit', async () => {
    const h = await service.start()
    const a = await boundClient(h, 'customer_a')
    await expect(a.client.keys.issue({ externalId: 'customer_a' })).rejects.toSatisfy(isStatus(403))
    await expect(a.client.keys.list()).rejects.toSatisfy(isStatus(403))
    await expect(a.client.webhookSecret.get()).rejects.toSatisfy(isStatus(403))
    await expect(a.client.authorize({ toolName: 'refund.create' })).rejects.toSatisfy(isStatus(403))
    await expect(
      a.client.consumeAuthorization({ authorizationId: 'dec_x', toolName: 'refund.create' }),
    ).rejects.toSatisfy(isStatus(403))
  })

  it('stops working once revoked (401), and lists as inactive', async () => {
    const h = await service.start()
    const a = await boundClient(h, 'customer_a')
    expect(await h.client.keys.revoke(a.keyPrefix)).toEqual({ keyPrefix: a.keyPrefix, revoked: true })
    expect(await h.client.keys.revoke(a.keyPrefix)).toEqual({ keyPrefix: a.keyPrefix, revoked: false })
    await expect(a.client.decisions.list()).rejects.toSatisfy(isStatus(401))
    const { keys } = await h.client.keys.list()
    expect(keys).toEqual([
      expect.objectContaining({ keyPrefix: a.keyPrefix, isActive: false, name: 'customer_a bot' }),
    ])
  })

  it('refuses a key with the right prefix and a wrong secret (401)', async () => {
    const h = await service.start()
    const a = await boundClient(h, 'customer_a')
    const forged = `${a.keyPrefix}.sk_${'0'.repeat(48)}`
    const response = await h.api('GET', '/decisions', undefined, { key: forged })
    expect(response.status).toBe(401)
  })
})
