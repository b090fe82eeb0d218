/**
 * The client's platform calls (permits, receipts, bound keys, the lenient
 * reachability and verdict readers, `sandboxOutcome` on create) against the
 * hosted fake, which answers only in the contract's shapes, and against the
 * contract's fixtures replayed through it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  createPusharyClient,
  PusharyApiError,
  type PusharyClient,
  PusharyValidationError,
} from '../../src/index.js'
import reachFixtures from './fixtures/e8-reachability.json' with { type: 'json' }
import authorizeFixtures from './fixtures/e9-authorize.json' with { type: 'json' }
import consumeFixtures from './fixtures/e10-consume.json' with { type: 'json' }
import refusalFixtures from './fixtures/e10-refusals.json' with { type: 'json' }
import receiptFixtures from './fixtures/e11-receipt.json' with { type: 'json' }
import errorFixtures from './fixtures/errors.json' with { type: 'json' }
import { type HostedFake, startHostedFake } from './hosted-fake.js'

let fake: HostedFake
let client: PusharyClient

beforeAll(async () => {
  fake = await startHostedFake()
  client = createPusharyClient({ apiKey: fake.apiKey, baseUrl: fake.baseUrl })
})
afterAll(async () => {
  await fake?.close()
})

async function approvedDecision(question: string): Promise<string> {
  const created = await client.decisions.create({ question, externalId: 'customer_1' })
  await fake.answer(created.decisionId, 'yes')
  return created.decisionId
}

describe('permits on the hosted wire', () => {
  it('spends an approved decision once: a permit, then already_consumed with the recorded state', async () => {
    const decisionId = await approvedDecision('Refund EUR 48?')
    const action = {
      authorizationId: decisionId,
      toolName: 'refund.create',
      parameters: { amountMinor: 4800 },
    }
    const first = await client.consumeAuthorization(action)
    expect(first).toMatchObject({ status: 'permitted', authority: { kind: 'human' } })
    if (first.status !== 'permitted') throw new Error('expected a permit')
    expect(fake.requests.at(-1)?.body).toEqual(action)

    expect(await client.recordReceipt(first.permitId, { outcome: 'succeeded', summary: 'r-1' })).toEqual({
      executionState: 'succeeded',
    })
    // First report wins.
    expect(await client.recordReceipt(first.permitId, { outcome: 'failed' })).toEqual({
      executionState: 'succeeded',
    })
    expect(await client.consumeAuthorization(action)).toEqual({
      status: 'refused',
      refusal: 'already_consumed',
      executionState: 'succeeded',
      reason: 'This authorization was already used.',
    })
  })

  it('returns a refusal as data for a decision that was denied, never a permit', async () => {
    const created = await client.decisions.create({ question: 'Delete account?', externalId: 'customer_1' })
    await fake.answer(created.decisionId, 'no')
    const result = await client.consumeAuthorization({
      authorizationId: created.decisionId,
      toolName: 'delete',
    })
    expect(result).toMatchObject({ status: 'refused', refusal: 'not_authorized' })
  })

  it.each(Object.entries(refusalFixtures))(
    'reads the %s refusal fixture as a typed refusal',
    async (key, fixture) => {
      fake.oddNext('consume', { status: fixture.status, body: fixture.body })
      const result = await client.consumeAuthorization({ authorizationId: 'dec_x', toolName: 't' })
      if (result.status !== 'refused') throw new Error('expected a refusal')
      const body = fixture.body as {
        refusal: string
        error?: string
        message?: string
        executionState?: string
      }
      expect(result.refusal).toBe(key.startsWith('odd-') ? 'unknown' : body.refusal)
      if (key.startsWith('odd-')) expect(result.rawRefusal).toBe(body.refusal)
      expect(result.reason).toBe(body.error ?? body.message)
      expect(result.executionState).toBe(body.executionState)
    },
  )

  it('keeps an auth failure or a 5xx a typed error, not a refusal', async () => {
    fake.oddNext('consume', errorFixtures['403'])
    await expect(client.consumeAuthorization({ authorizationId: 'dec_x', toolName: 't' })).rejects.toSatisfy(
      (error) => error instanceof PusharyApiError && error.isAuthError,
    )
    fake.oddNext('consume', errorFixtures['500-legacy'])
    await expect(client.consumeAuthorization({ authorizationId: 'dec_x', toolName: 't' })).rejects.toSatisfy(
      (error) => error instanceof PusharyApiError && error.isServerError,
    )
  })

  it('reads both permit fixtures, and an authority of an unknown kind as unknown', async () => {
    for (const [key, body] of Object.entries(consumeFixtures)) {
      fake.oddNext('consume', { status: 200, body })
      const result = await client.consumeAuthorization({ authorizationId: 'dec_x', toolName: 't' })
      expect(result, key).toMatchObject({
        status: 'permitted',
        permitId: body.permitId,
        expiresAt: body.expiresAt,
      })
      if (result.status !== 'permitted') continue
      expect(result.authority.kind).toBe(key.startsWith('odd-') ? 'unknown' : body.authority.kind)
    }
  })

  it('reads a receipt state it does not know as unknown, with the raw value', async () => {
    fake.oddNext('receipt', { status: 200, body: receiptFixtures['odd-state'] })
    expect(await client.recordReceipt('pmt_1', { outcome: 'failed' })).toEqual({
      executionState: 'unknown',
      rawExecutionState: 'rolled_back',
    })
  })

  it('fails a 200 without a permitId as an invalid response, so nothing runs on it', async () => {
    fake.oddNext('consume', { status: 200, body: { authority: { kind: 'human' } } })
    await expect(
      client.consumeAuthorization({ authorizationId: 'dec_x', toolName: 't' }),
    ).rejects.toMatchObject({
      code: 'invalid_response',
    })
  })

  it('percent-encodes permit ids and key prefixes in the path', async () => {
    await expect(client.recordReceipt('pmt/1 ?x', { outcome: 'succeeded' })).rejects.toBeInstanceOf(
      PusharyApiError,
    )
    expect(fake.requests.at(-1)?.path).toBe('/authorizations/pmt%2F1%20%3Fx/receipt')
    await client.keys.revoke('pk_a/b')
    expect(fake.requests.at(-1)?.path).toBe('/keys/pk_a%2Fb')
  })

  it('refuses bad input before any request, naming the field', async () => {
    const before = fake.requests.length
    const cases: [() => Promise<unknown>, string][] = [
      [() => client.consumeAuthorization({ authorizationId: ' ', toolName: 't' }), 'authorizationId'],
      [
        () => client.consumeAuthorization({ authorizationId: 'd', toolName: 't', actor: 'a'.repeat(121) }),
        'actor',
      ],
      [
        () =>
          client.consumeAuthorization({ authorizationId: 'd', toolName: 't', environment: 'e'.repeat(41) }),
        'environment',
      ],
      [
        () =>
          client.consumeAuthorization({
            authorizationId: 'd',
            toolName: 't',
            parameters: { nested: { a: 1 } as unknown as string },
          }),
        'parameters.nested',
      ],
      [() => client.recordReceipt('pmt_1', { outcome: 'done' as 'succeeded' }), 'outcome'],
      [() => client.recordReceipt('', { outcome: 'succeeded' }), 'permitId'],
      [() => client.keys.issue({ externalId: 'x'.repeat(257) }), 'externalId'],
      [() => client.keys.issue({ externalId: 'c', expiresInSeconds: -5 }), 'expiresInSeconds'],
      [() => client.keys.revoke(' '), 'keyPrefix'],
    ]
    for (const [call, field] of cases) {
      await expect(call(), field).rejects.toSatisfy(
        (error) => error instanceof PusharyValidationError && error.field === field,
      )
    }
    expect(fake.requests.length).toBe(before)
  })
})

describe('bound keys on the hosted wire', () => {
  it('issues, lists and revokes with the contract field names', async () => {
    const issued = await client.keys.issue({
      externalId: 'customer_9',
      name: 'support bot',
      expiresInSeconds: 3600,
    })
    expect(fake.requests.at(-1)?.body).toEqual({
      externalId: 'customer_9',
      name: 'support bot',
      expiresInSeconds: 3600,
    })
    expect(issued).toMatchObject({
      scope: 'bound',
      boundExternalId: 'customer_9',
      expiresAt: expect.any(String),
    })
    expect(issued.apiKey.startsWith(`${issued.keyPrefix}.`)).toBe(true)
    const listed = await client.keys.list()
    expect(listed.keys.find((key) => key.keyPrefix === issued.keyPrefix)).toMatchObject({
      name: 'support bot',
      boundExternalId: 'customer_9',
      isActive: true,
    })
    expect(await client.keys.revoke(issued.keyPrefix)).toEqual({ keyPrefix: issued.keyPrefix, revoked: true })
    expect(await client.keys.revoke(issued.keyPrefix)).toEqual({
      keyPrefix: issued.keyPrefix,
      revoked: false,
    })
  })
})

describe('lenient readers on the hosted wire', () => {
  it('reads every reachability fixture, an unknown deliverability as unknown with the raw value', async () => {
    for (const [key, body] of Object.entries(reachFixtures)) {
      fake.oddNext('reachability', { status: 200, body })
      const reach = await client.reachability('customer_1')
      if (key.startsWith('odd-')) {
        expect(reach).toMatchObject({ deliverability: 'unknown', rawDeliverability: body.deliverability })
      } else {
        expect(reach.deliverability, key).toBe(body.deliverability)
      }
    }
  })

  it('reads every verdict fixture; an unknown verdict is unknown, never allow', async () => {
    for (const [key, body] of Object.entries(authorizeFixtures)) {
      fake.oddNext('authorize', { status: 200, body })
      const verdict = await client.authorize({ toolName: 'refund.create' })
      if (key.startsWith('odd-')) {
        expect(verdict).toMatchObject({ verdict: 'unknown', rawVerdict: body.verdict })
      } else {
        expect(verdict).toEqual({ ...body })
      }
    }
  })

  it('sends sandboxOutcome and approvalUrl on create exactly as given', async () => {
    await client.decisions.create({
      question: 'Ship?',
      externalId: 'c',
      sandboxOutcome: 'no_answer',
      approvalUrl: true,
    })
    expect(fake.requests.at(-1)?.body).toEqual({
      question: 'Ship?',
      externalId: 'c',
      sandboxOutcome: 'no_answer',
      approvalUrl: true,
    })
    await expect(
      client.decisions.create({ question: 'Ship?', sandboxOutcome: 'maybe' as 'deny' }),
    ).rejects.toMatchObject({ field: 'sandboxOutcome' })
  })
})
