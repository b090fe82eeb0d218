/**
 * Our client against a server that answers only with the hosted wire
 * contract's shapes (`hosted-fake.ts`, fixtures in `fixtures/`): what a
 * real customer's first call would meet.
 */
import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  answerPusharyQuestion,
  createPusharyClient,
  isApproved,
  PusharyApiError,
  type PusharyClient,
  resolvePusharyCallback,
} from '../../src/index.js'
import { signWebhookBody } from '../../src/pushary/callbacks.js'
import { deterministicKey } from '../../src/pushary/identity.js'
import { startCallbackReceiver } from '../server/service-harness.js'
import { contractCallbackSchema, SDK_AFFIRMATIVE, sdkApproves } from './contract-schemas.js'
import callbackFixtures from './fixtures/callback.json' with { type: 'json' }
import createFixtures from './fixtures/e1-create-decision.json' with { type: 'json' }
import getFixtures from './fixtures/e2-get-decision.json' with { type: 'json' }
import listFixtures from './fixtures/e5-list.json' with { type: 'json' }
import errorFixtures from './fixtures/errors.json' with { type: 'json' }
import { type HostedFake, startHostedFake } from './hosted-fake.js'

let fake: HostedFake
let client: PusharyClient
let n = 0

beforeAll(async () => {
  fake = await startHostedFake()
  client = createPusharyClient({ apiKey: fake.apiKey, baseUrl: fake.baseUrl })
})
afterAll(async () => {
  await fake?.close()
})

/** The person answers the next decision the fake opens (after `pagesBefore`). */
async function answerNextOpened(pagesBefore: number, value: string): Promise<string> {
  const deadline = Date.now() + 10_000
  while (fake.pages <= pagesBefore) {
    if (Date.now() > deadline) throw new Error('no decision was opened')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  const opened = [...fake.decisions.values()].at(-1)!
  // Let the asker reach its long-poll, as a person's tap comes later.
  await new Promise((resolve) => setTimeout(resolve, 50))
  await fake.answer(opened.decisionId, value)
  return opened.decisionId
}

const creates = () => fake.requests.filter((request) => request.route === 'create')

describe('client against the hosted wire', () => {
  it('reads a customer-addressed create whose reachableChannels is a number', async () => {
    const before = fake.pages
    const created = await client.decisions.create({
      question: 'Refund EUR 48 on order o-1?',
      externalId: 'customer_1',
    })
    expect(created).toMatchObject({
      status: 'pending',
      answered: false,
      reachable: true,
      reachableChannels: 2,
    })
    expect(typeof created.decisionId).toBe('string')
    expect(fake.pages).toBe(before + 1)
    const replayed = await client.decisions.create({
      question: 'Refund EUR 48 on order o-1?',
      externalId: 'customer_1',
      idempotencyKey: `replay-${++n}`,
    })
    const again = await client.decisions.create({
      question: 'Refund EUR 48 on order o-1?',
      externalId: 'customer_1',
      idempotencyKey: `replay-${n}`,
    })
    expect(again).toMatchObject({ decisionId: replayed.decisionId, idempotent: true, reachableChannels: 2 })
  })

  it.each([
    ['Yes', true],
    [' approve ', true],
    ['OK', true],
    ['no', false],
    ['maybe', false],
  ])('ask() reads a confirm answered %j as approved: %s, without throwing', async (value, approved) => {
    const before = fake.pages
    const [result] = await Promise.all([
      client.decisions.ask({
        question: `Refund order a-${++n}?`,
        externalId: 'customer_1',
        timeoutMs: 15_000,
      }),
      answerNextOpened(before, value),
    ])
    expect(result).toMatchObject({
      status: 'answered',
      answered: true,
      value,
      approved,
      reachableChannels: 2,
    })
    expect(result.approved).toBe(sdkApproves({ status: 'answered', type: 'confirm', value }))
    expect(fake.pages).toBe(before + 1)
  })

  it('reads reachability with a number of channels and a hint sentence', async () => {
    const reach = await client.reachability('customer_1')
    expect(reach).toMatchObject({ externalId: 'customer_1', deliverability: 'push', reachableChannels: 2 })
    expect(typeof (reach as { hint?: unknown }).hint).toBe('string')
  })

  it('reads a list page whose items have a null id, a null type and an unknown type', async () => {
    fake.oddNext('list', { status: 200, body: listFixtures.page })
    const page = await client.decisions.list({ limit: 3 })
    expect(page.nextCursor).toBe(listFixtures.page.nextCursor)
    expect(page.decisions).toHaveLength(3)
    const [first, nullId, unknownType] = page.decisions as unknown as Record<string, unknown>[]
    expect(first).toMatchObject({ decisionId: 'dec_hosted_020', type: 'confirm', status: 'answered' })
    expect(nullId).toMatchObject({ decisionId: null, type: null, value: 'approve' })
    expect(unknownType).toMatchObject({ decisionId: 'dec_hosted_021', type: 'unknown', rawType: 'rating' })
    // And the fake's own list, without a `status` filter (the hosted API has none).
    const own = await client.decisions.list({ externalId: 'customer_1', limit: 2 })
    expect(own.decisions.length).toBeGreaterThan(0)
    expect(fake.requests.at(-1)?.query.status).toBeUndefined()
  })

  it('sends wait: true and timeoutSeconds on create and returns the answer the wait brought', async () => {
    const before = fake.pages
    const [created] = await Promise.all([
      client.decisions.create({
        question: 'Deploy build 913 to production?',
        externalId: 'customer_1',
        wait: true,
        timeoutSeconds: 20,
      } as never),
      answerNextOpened(before, 'yes'),
    ])
    expect(creates().at(-1)?.body).toMatchObject({ wait: true, timeoutSeconds: 20 })
    expect(created).toMatchObject({ status: 'answered', answered: true, value: 'yes' })
  })

  it('sends a free-text presentation risk as written', async () => {
    await client.decisions.create({
      question: 'Pay supplier invoice 77?',
      externalId: 'customer_1',
      parameters: { amount: 12_000 },
      presentation: {
        label: 'Pay an invoice',
        effect: 'Sends EUR 120.00 to the supplier',
        risk: 'Moves money',
      },
    } as never)
    expect(creates().at(-1)?.body).toMatchObject({ presentation: { risk: 'Moves money' } })
  })

  it('throws a typed 404 (code not_found) for a decision the service no longer knows, and reads hosted error sentences', async () => {
    const created = await client.decisions.create({ question: 'Refund order f-1?', externalId: 'customer_1' })
    fake.forget(created.decisionId)
    const error = await client.decisions.get(created.decisionId).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(PusharyApiError)
    expect(error).toMatchObject({ status: 404, code: 'not_found' })
    expect((error as Error).message).toContain(errorFixtures['404'].body.error)

    // The other hosted error bodies: a sentence in `error`, `code` only when sent.
    const wrong = createPusharyClient({ apiKey: 'pk_wrong.sk_wrong', baseUrl: fake.baseUrl })
    const unauthorized = await wrong.decisions.get('dec_x').catch((caught: unknown) => caught)
    expect(unauthorized).toMatchObject({ status: 401, isAuthError: true })
    expect((unauthorized as Error).message).toContain('Invalid or missing API key')
    fake.oddNext('create', errorFixtures['429'])
    const limited = await client.decisions
      .create({ question: 'Refund order r-1?' })
      .catch((caught: unknown) => caught)
    expect(limited).toMatchObject({ status: 429, code: 'rate_limited', isRateLimited: true })
  })

  it('reads an unknown status as not approved, carrying the raw value', async () => {
    const created = await client.decisions.create({ question: 'Refund order u-1?', externalId: 'customer_1' })
    fake.oddNext('get', {
      status: 200,
      body: { ...getFixtures['odd-unknown-status'], decisionId: created.decisionId },
    })
    const read = await client.decisions.get(created.decisionId)
    expect(read).toMatchObject({ status: 'unknown', rawStatus: 'escalated' })
    expect(isApproved(read as never)).toBe(false)

    const before = fake.pages
    fake.oddNext('get', (request) => ({
      status: 200,
      body: { ...getFixtures['odd-unknown-status'], decisionId: request.path.split('/')[2] },
    }))
    const asked = await client.decisions.ask({
      question: 'Refund order u-2?',
      externalId: 'customer_1',
      timeoutMs: 5_000,
    })
    expect(asked).toMatchObject({ status: 'unknown', rawStatus: 'escalated', approved: false })
    expect(fake.pages).toBe(before + 1)
  })

  it('reads an unknown type as not approved, and extra or null fields without failing', async () => {
    const reads: Record<string, unknown>[] = []
    for (const name of ['odd-unknown-type', 'extra-fields', 'external-id-null'] as const) {
      const created = await client.decisions.create({ question: `Read ${name}?` })
      fake.oddNext('get', { status: 200, body: { ...getFixtures[name], decisionId: created.decisionId } })
      reads.push((await client.decisions.get(created.decisionId)) as unknown as Record<string, unknown>)
    }
    expect(reads[0]).toMatchObject({ type: 'unknown', rawType: 'rating', value: '5' })
    expect(isApproved(reads[0] as never)).toBe(false)
    expect(reads[1]).toMatchObject({ status: 'answered', value: 'no' })
    expect(reads[2]).toMatchObject({ externalId: null, expiresAt: null, value: 'yes' })
  })

  it('opens one decision per logical ask when the first create response is lost and the caller retries with its key', async () => {
    const before = fake.pages
    const idempotencyKey = `lost-${++n}`
    fake.oddNext('create', { status: 500, body: errorFixtures['500-legacy'].body }, { afterHandling: true })
    const input = { question: 'Refund order l-1?', externalId: 'customer_1', idempotencyKey, timeoutMs: 0 }
    const first = await client.decisions.ask(input).catch((caught: unknown) => caught)
    const result = first instanceof Error ? await client.decisions.ask(input) : first
    expect(fake.pages).toBe(before + 1)
    expect((result as { decisionId: string }).decisionId).toBe(
      [...fake.decisions.values()].at(-1)?.decisionId,
    )
    const keys = creates()
      .slice(-2)
      .map((request) => (request.body as { idempotencyKey?: string }).idempotencyKey)
    expect(new Set(keys)).toEqual(new Set([idempotencyKey]))
  })

  it('sends one create for an ask without a caller key whose first response is odd, and keeps its decision id', async () => {
    const before = fake.pages
    const postsBefore = creates().length
    fake.oddNext(
      'create',
      (_request, handled) => ({
        status: 200,
        body: {
          ...createFixtures['odd-unknown-status'],
          decisionId: (handled?.body as { decisionId?: string } | undefined)?.decisionId,
          // The decision asked (a create response naming another question is
          // refused by the replay check, which has its own tests).
          question: 'Refund order l-2?',
        },
      }),
      { afterHandling: true },
    )
    const asked = await client.decisions.ask({
      question: 'Refund order l-2?',
      externalId: 'customer_1',
      timeoutMs: 2_000,
    })
    expect(asked).toMatchObject({
      status: 'unknown',
      rawStatus: 'escalated',
      approved: false,
      reachableChannels: 2,
    })
    expect(asked.decisionId).toBe([...fake.decisions.values()].at(-1)?.decisionId)
    expect(fake.pages).toBe(before + 1)
    expect(creates().length).toBe(postsBefore + 1)
  })

  it('never opens a second decision for an ask without a caller key whose create response is lost', async () => {
    const before = fake.pages
    const postsBefore = creates().length
    fake.oddNext('create', { status: 502, body: { error: 'Bad gateway' } }, { afterHandling: true })
    const outcome = await client.decisions
      .ask({ question: 'Refund order l-3?', externalId: 'customer_1', timeoutMs: 0 })
      .catch((caught: unknown) => caught)
    // Either ask retried with its own key and found the decision, or it failed loudly; never a new key.
    if (outcome instanceof Error) expect(outcome).toMatchObject({ status: 502 })
    else expect(outcome).toMatchObject({ decisionId: [...fake.decisions.values()].at(-1)?.decisionId })
    expect(fake.pages).toBe(before + 1)
    const keys = creates()
      .slice(postsBefore)
      .map((request) => (request.body as { idempotencyKey?: string }).idempotencyKey)
    expect(keys.length).toBeGreaterThan(0)
    expect(new Set(keys).size).toBe(1)
    expect(typeof keys[0]).toBe('string')
  })

  it('computes deterministicKey as the SDK does (parts joined by NUL, SHA-256 hex, first 40)', () => {
    const sdk = (parts: string[]) =>
      createHash('sha256').update(parts.join('\0'), 'utf8').digest('hex').slice(0, 40)
    expect(deterministicKey(['a', 'b'])).toBe(sdk(['a', 'b']))
    expect(deterministicKey(['run_1', 'approve', 'customer_1'])).toBe(sdk(['run_1', 'approve', 'customer_1']))
  })
})

describe('one approval rule, the SDK confirm rule', () => {
  const affirmative = SDK_AFFIRMATIVE.flatMap((word) => [word, word.toUpperCase(), ` ${word}\t`])
  const declining = ['no', 'maybe', 'nope', 'yes please', 'allow', '', 'y e s', '1']

  it('isApproved approves every trimmed, case-insensitive affirmative of a confirm or an untyped decision, nothing else', () => {
    for (const value of [...affirmative, ...declining]) {
      for (const type of ['confirm', undefined, null, 'select', 'input'] as const) {
        const decision = { status: 'answered', type, value }
        expect(isApproved(decision as never), `${type} ${JSON.stringify(value)}`).toBe(sdkApproves(decision))
      }
      expect(isApproved({ status: 'expired', type: 'confirm', value } as never)).toBe(false)
    }
  })

  it('answerPusharyQuestion settles any answered confirm value without throwing, recording it as given', () => {
    for (const value of [...affirmative, ...declining]) {
      const answer = answerPusharyQuestion({ question: 'Refund?', type: 'confirm' }, 'answered', value)
      expect(answer, JSON.stringify(value)).toEqual({
        status: 'answered',
        value,
        approved: sdkApproves({ status: 'answered', type: 'confirm', value }),
      })
    }
    const select = answerPusharyQuestion(
      { question: 'Which?', type: 'select', options: ['yes', 'credit'] },
      'answered',
      'yes',
    )
    expect(select.approved).toBe(false)
    expect(answerPusharyQuestion({ question: 'Note?', type: 'input' }, 'answered', 'approve').approved).toBe(
      false,
    )
  })
})

describe('hosted callbacks', () => {
  const secret = 'whsec_contract_test'

  it('resolves signed hosted bodies (no type, no status) with the SDK confirm rule', () => {
    const cases = [
      ['answered-yes', true],
      ['answered-with-context', true],
      ['answered-approve', true],
      ['answered-maybe', false],
      ['answered-no', false],
    ] as const
    for (const [name, approved] of cases) {
      const raw = JSON.stringify(callbackFixtures[name])
      const resolved = resolvePusharyCallback(raw, signWebhookBody(raw, secret), secret)
      expect(resolved, name).toMatchObject({
        correlationId: 'dec_hosted_001',
        answer: callbackFixtures[name].answer,
        approved,
      })
    }
  })

  it('reads the callback the hosted service sends for an answer as approved for Yes', async () => {
    const receiver = await startCallbackReceiver()
    try {
      const created = await client.decisions.create({
        question: 'Refund order c-1?',
        externalId: 'customer_1',
        callbackUrl: receiver.url,
        context: 'order c-1',
      })
      await fake.answer(created.decisionId, 'Yes')
      await receiver.waitFor(1)
      const [delivery] = receiver.received
      expect(contractCallbackSchema.safeParse(JSON.parse(delivery!.rawBody)).success).toBe(true)
      const resolved = resolvePusharyCallback(delivery!.rawBody, delivery!.signature, fake.webhookSecret)
      expect(resolved).toMatchObject({ correlationId: created.decisionId, answer: 'Yes', approved: true })
    } finally {
      await receiver.close()
    }
  })
})

describe('any http(s) base URL', () => {
  it('works with the API mounted under /proxy/pushary', async () => {
    const proxied = await startHostedFake({ mount: '/proxy/pushary' })
    try {
      const other = createPusharyClient({ apiKey: proxied.apiKey, baseUrl: proxied.baseUrl })
      const created = await other.decisions.create({
        question: 'Refund order p-1?',
        externalId: 'customer_1',
      })
      await proxied.answer(created.decisionId, 'yes')
      const read = await other.decisions.get(created.decisionId)
      expect(read).toMatchObject({ status: 'answered', value: 'yes' })
      expect(proxied.requests.map((request) => request.path)).toEqual([
        '/decisions',
        `/decisions/${created.decisionId}`,
      ])
    } finally {
      await proxied.close()
    }
  })
})
