/**
 * Permits and receipts on the local service, through the package's client
 * over loopback HTTP: an approval is spent once, only for exactly the action
 * that was approved, and the first receipt wins.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { PusharyApiError } from '../../src/pushary/errors.js'
import { type Harness, serviceFixture, tempDir } from './service-harness.js'

const service = serviceFixture('permits')

const REFUND = {
  toolName: 'refund.create',
  toolTarget: 'order o-1',
  actor: 'support-agent',
  environment: 'production',
  parameters: { amountMinor: 4800, currency: 'EUR' },
}

async function approved(h: Harness, answer = 'yes', extra: Record<string, unknown> = {}): Promise<string> {
  const created = await h.client.decisions.create({
    question: 'Refund EUR 48 on order o-1?',
    externalId: 'customer_1',
    ...REFUND,
    ...extra,
  })
  await h.client.decisions.answer(created.decisionId, answer)
  return created.decisionId
}

const consume = (h: Harness, authorizationId: string, overrides: Record<string, unknown> = {}) =>
  h.client.consumeAuthorization({ authorizationId, externalId: 'customer_1', ...REFUND, ...overrides })

describe('permits', () => {
  it('issues one permit for an approved decision; a second consume is already_consumed with the execution state', async () => {
    const h = await service.start()
    const id = await approved(h)
    const first = await consume(h, id)
    expect(first).toMatchObject({
      status: 'permitted',
      permitId: expect.stringMatching(/^pmt_/),
      authority: { kind: 'human', answeredAt: expect.any(String), approverExternalId: 'customer_1' },
      expiresAt: expect.any(String),
    })
    expect(await consume(h, id)).toMatchObject({
      status: 'refused',
      refusal: 'already_consumed',
      executionState: 'running',
    })
    if (first.status !== 'permitted') throw new Error('expected a permit')
    await h.client.recordReceipt(first.permitId, { outcome: 'succeeded' })
    expect(await consume(h, id)).toMatchObject({ refusal: 'already_consumed', executionState: 'succeeded' })
  })

  it('lets exactly one of several racing consumes through', async () => {
    const h = await service.start()
    const id = await approved(h)
    const results = await Promise.all(Array.from({ length: 6 }, () => consume(h, id)))
    expect(results.filter((result) => result.status === 'permitted')).toHaveLength(1)
    expect(
      results.filter((result) => result.status === 'refused' && result.refusal === 'already_consumed'),
    ).toHaveLength(5)
  })

  it.each([
    ['a changed amount', { parameters: { amountMinor: 48000, currency: 'EUR' } }, 'parameters'],
    ['an amount sent as text', { parameters: { amountMinor: '4800', currency: 'EUR' } }, 'parameters'],
    ['an extra parameter', { parameters: { amountMinor: 4800, currency: 'EUR', to: 'x' } }, 'parameters'],
    ['another tool', { toolName: 'refund.force' }, 'toolName'],
    ['another target', { toolTarget: 'order o-2' }, 'toolTarget'],
    ['another actor', { actor: 'intruder' }, 'actor'],
    ['another environment', { environment: 'staging' }, 'environment'],
    ['another customer', { externalId: 'customer_2' }, 'externalId'],
    ['no customer', { externalId: undefined }, 'externalId'],
  ])('refuses %s as action_mismatch and leaves the approval unspent', async (_name, overrides, field) => {
    const h = await service.start()
    const id = await approved(h)
    const refused = await consume(h, id, overrides)
    expect(refused).toMatchObject({ status: 'refused', refusal: 'action_mismatch' })
    if (refused.status === 'refused') expect(refused.reason).toContain(field)
    expect(await consume(h, id)).toMatchObject({ status: 'permitted' })
  })

  it('matches parameters whatever their key order', async () => {
    const h = await service.start()
    const id = await approved(h)
    expect(await consume(h, id, { parameters: { currency: 'EUR', amountMinor: 4800 } })).toMatchObject({
      status: 'permitted',
    })
  })

  it('refuses what is not an approval as not_authorized, and an expired decision as expired', async () => {
    const h = await service.start()
    const denied = await approved(h, 'no')
    const pending = (
      await h.client.decisions.create({ question: 'Refund?', externalId: 'customer_1', ...REFUND })
    ).decisionId
    const select = (
      await h.client.decisions.create({
        question: 'Which?',
        type: 'select',
        options: ['yes', 'no'],
        ...REFUND,
      })
    ).decisionId
    await h.client.decisions.answer(select, 'yes')
    const cancelled = (await h.client.decisions.create({ question: 'Refund?', ...REFUND })).decisionId
    await h.client.decisions.cancel(cancelled)
    for (const id of [denied, pending, select, cancelled, 'dec_unknown']) {
      expect(await consume(h, id), id).toMatchObject({ status: 'refused', refusal: 'not_authorized' })
    }
    const short = await h.client.decisions.create({
      question: 'Refund?',
      externalId: 'customer_1',
      ...REFUND,
      expiresInSeconds: 1,
    })
    await new Promise((resolve) => setTimeout(resolve, 1_200))
    expect(await consume(h, short.decisionId)).toMatchObject({ status: 'refused', refusal: 'expired' })
  })

  it('spends a policy allow once, refuses a deny verdict, and refuses an allow past its lifetime as expired', async () => {
    let now = Date.now()
    const policyPath = join(tempDir('permit-policy'), 'policy.json')
    writeFileSync(
      policyPath,
      JSON.stringify({
        rules: [
          { toolName: 'refund.create', effect: 'allow' },
          { toolName: 'account.delete', effect: 'deny' },
        ],
      }),
    )
    const h = await service.start({ policyPath, now: () => now })
    const allow = await h.client.authorize({ toolName: 'refund.create', parameters: { amountMinor: 100 } })
    expect(allow.verdict).toBe('allow')
    const spend = () =>
      h.client.consumeAuthorization({
        authorizationId: allow.authorizationId ?? '',
        toolName: 'refund.create',
        parameters: { amountMinor: 100 },
      })
    expect(await spend()).toMatchObject({ status: 'permitted', authority: { kind: 'policy' } })
    expect(await spend()).toMatchObject({ refusal: 'already_consumed' })

    const deny = await h.client.authorize({ toolName: 'account.delete' })
    expect(deny.verdict).toBe('deny')
    expect(
      await h.client.consumeAuthorization({
        authorizationId: deny.authorizationId ?? 'x',
        toolName: 'account.delete',
      }),
    ).toMatchObject({ refusal: 'not_authorized' })

    const later = await h.client.authorize({ toolName: 'refund.create' })
    now += 6 * 60_000
    expect(
      await h.client.consumeAuthorization({
        authorizationId: later.authorizationId ?? '',
        toolName: 'refund.create',
      }),
    ).toMatchObject({ refusal: 'expired' })
  })

  it('keeps the first receipt: a later report reads back the first outcome', async () => {
    const h = await service.start()
    const permit = await consume(h, await approved(h))
    if (permit.status !== 'permitted') throw new Error('expected a permit')
    expect(
      await h.client.recordReceipt(permit.permitId, { outcome: 'failed', summary: 'card declined' }),
    ).toEqual({
      executionState: 'failed',
    })
    expect(await h.client.recordReceipt(permit.permitId, { outcome: 'succeeded' })).toEqual({
      executionState: 'failed',
    })
    await expect(h.client.recordReceipt('pmt_unknown', { outcome: 'succeeded' })).rejects.toSatisfy(
      (error) => error instanceof PusharyApiError && error.status === 404,
    )
  })
})
