/**
 * The local decision service speaks the hosted wire: every endpoint's
 * response validates against the contract schemas (`contract-schemas.ts`,
 * written from the contract, not from the client's parsers), so passing
 * locally means passing on the hosted API. Local extras (the delivery list,
 * the list `status` filter, `deliveries` on GET) may appear only as extra
 * fields.
 */
import { describe, expect, it } from 'vitest'
import type { z } from 'zod/v4'
import { verifyWebhookSignature } from '../../src/pushary/callbacks.js'
import { type Harness, serviceFixture } from '../server/service-harness.js'
import {
  contractAnswerResultSchema,
  contractAuthorizeSchema,
  contractCallbackSchema,
  contractCancelResultSchema,
  contractDecisionListSchema,
  contractDecisionResultSchema,
  contractDecisionSchema,
  contractEnrollSchema,
  contractErrorBodySchema,
  contractReachabilitySchema,
  contractWebhookSecretSchema,
} from './contract-schemas.js'

const service = serviceFixture('contract')

/** Parses with a contract schema, failing with the issues (and the body) when it does not fit. */
function fits<T extends z.ZodType>(schema: T, body: unknown, what: string): z.infer<T> {
  const parsed = schema.safeParse(body)
  if (!parsed.success) {
    throw new Error(
      `${what} does not fit the contract: ${parsed.error.message}\nbody: ${JSON.stringify(body)}`,
    )
  }
  return parsed.data
}

/** A hosted error body: a sentence in `error`, a machine code in `code`. */
function expectHostedError(json: Record<string, unknown>, code: string): void {
  fits(contractErrorBodySchema, json, `error body ${code}`)
  expect(json.code).toBe(code)
  expect(typeof json.error).toBe('string')
  expect(json.error).not.toBe(code)
  expect(json.error).toMatch(/\s/)
}

async function create(h: Harness, body: Record<string, unknown>) {
  const response = await h.api('POST', '/decisions', body)
  expect(response.status).toBeLessThan(300)
  return fits(contractDecisionResultSchema, response.json, 'POST /decisions')
}

describe('local service on the hosted wire', () => {
  it('answers every endpoint (E1-E7, E9) with contract shapes, numbers where the contract has numbers', async () => {
    const h = await service.start()
    const created = await create(h, {
      question: 'Refund EUR 48 on order o-1?',
      externalId: 'customer_1',
      idempotencyKey: 'contract-1',
      context: 'order o-1',
    })
    expect(typeof created.reachableChannels).toBe('number')
    expect(created.hint === undefined || typeof created.hint === 'string').toBe(true)
    const replay = await create(h, {
      question: 'Refund EUR 48 on order o-1?',
      externalId: 'customer_1',
      idempotencyKey: 'contract-1',
      context: 'order o-1',
    })
    expect(replay).toMatchObject({ decisionId: created.decisionId, idempotent: true })

    const read = await h.api('GET', `/decisions/${created.decisionId}`)
    expect(fits(contractDecisionSchema, read.json, 'GET /decisions/{id}')).toMatchObject({
      status: 'pending',
      externalId: 'customer_1',
      context: 'order o-1',
    })
    const listed = await h.api('GET', '/decisions?limit=10')
    const page = fits(contractDecisionListSchema, listed.json, 'GET /decisions')
    expect(page.decisions.map((item) => item.decisionId)).toContain(created.decisionId)

    const answered = await h.api('POST', `/decisions/${created.decisionId}`, { answer: 'yes' })
    expect(fits(contractAnswerResultSchema, answered.json, 'POST /decisions/{id}')).toMatchObject({
      status: 'answered',
      answered: true,
    })
    const other = await create(h, { question: 'Refund order o-2?', externalId: 'customer_1' })
    const cancelled = await h.api('DELETE', `/decisions/${other.decisionId}`)
    expect(fits(contractCancelResultSchema, cancelled.json, 'DELETE /decisions/{id}')).toMatchObject({
      cancelled: true,
    })
    // E6, E7, E9
    fits(
      contractEnrollSchema,
      (await h.api('POST', '/enroll', { externalId: 'customer_1' })).json,
      'POST /enroll',
    )
    fits(
      contractAuthorizeSchema,
      (await h.api('POST', '/authorize', { toolName: 'refund' })).json,
      'POST /authorize',
    )
    const secret = fits(
      contractWebhookSecretSchema,
      (await h.api('GET', '/webhook-secret')).json,
      'GET secret',
    )
    const rotated = fits(
      contractWebhookSecretSchema,
      (await h.api('POST', '/webhook-secret')).json,
      'POST secret',
    )
    expect(rotated.webhookSecret).not.toBe(secret.webhookSecret)
  })

  it('answers reachability with a number of channels and a hint sentence, for push, fallback and no customer', async () => {
    const h = await service.start()
    for (const query of ['?externalId=customer_1', '?externalId=nobody_enrolled', '']) {
      const response = await h.api('GET', `/reachability${query}`)
      expect(response.status, query).toBe(200)
      const reach = fits(contractReachabilitySchema, response.json, `GET /reachability${query}`)
      expect(typeof reach.reachableChannels).toBe('number')
      expect(reach.hint.length).toBeGreaterThan(0)
    }
  })

  it('answers errors with a sentence in error and the machine code in code', async () => {
    const h = await service.start()
    const missing = await h.api('GET', '/decisions/dec_000000000000000000000000')
    expect(missing.status).toBe(404)
    expectHostedError(missing.json, 'not_found')
    const unauthorized = await h.api('GET', '/decisions', undefined, { key: 'pk_wrong.sk_wrong' })
    expect(unauthorized.status).toBe(401)
    expectHostedError(unauthorized.json, 'unauthorized')
    const noKey = await h.api('GET', '/decisions', undefined, { key: null })
    expect(noKey.status).toBe(401)
    expectHostedError(noKey.json, 'unauthorized')
    const badJson = await h.api('POST', '/decisions', undefined, { rawBody: '{"question":' })
    expect(badJson.status).toBe(400)
    expectHostedError(badJson.json, 'invalid_json')
    const invalid = await h.api('POST', '/decisions', { question: '' })
    expect(invalid.status).toBe(400)
    fits(contractErrorBodySchema, invalid.json, 'POST /decisions 400')
    expect(invalid.json.error).toMatch(/\s/)
    expect(typeof invalid.json.code).toBe('string')
    const answered = await create(h, { question: 'Refund order e-1?' })
    await h.api('POST', `/decisions/${answered.decisionId}`, { answer: 'no' })
    const again = await h.api('POST', `/decisions/${answered.decisionId}`, { answer: 'yes' })
    expect(again.status).toBe(409)
    expectHostedError(again.json, 'already_answered')
  })

  it('sends callbacks only for answered decisions, with exactly the hosted body', async () => {
    const receiver = await service.receive()
    const h = await service.start({ sweepIntervalMs: 100 })
    const answered = await create(h, {
      question: 'Refund order cb-1?',
      externalId: 'customer_1',
      callbackUrl: receiver.url,
      context: 'order cb-1',
    })
    const cancelled = await create(h, { question: 'Refund order cb-2?', callbackUrl: receiver.url })
    const expiring = await create(h, {
      question: 'Refund order cb-3?',
      callbackUrl: receiver.url,
      expiresInSeconds: 1,
    })
    await h.api('DELETE', `/decisions/${cancelled.decisionId}`)
    await h.api('POST', `/decisions/${answered.decisionId}`, { answer: 'yes' })
    await receiver.waitFor(1)
    // Give expiry (1 s, swept every 100 ms) and any late delivery time to show up.
    await new Promise((resolve) => setTimeout(resolve, 2_000))
    const expired = await h.api('GET', `/decisions/${expiring.decisionId}`)
    expect(expired.json.status).toBe('expired')
    expect(receiver.received).toHaveLength(1)
    const [delivery] = receiver.received
    const body = fits(contractCallbackSchema, JSON.parse(delivery!.rawBody), 'callback body')
    expect(body).toEqual({
      correlationId: answered.decisionId,
      answer: 'yes',
      value: 'yes',
      answeredAt: expect.any(String),
      context: 'order cb-1',
    })
    expect(verifyWebhookSignature(delivery!.rawBody, delivery!.signature, h.server.webhookSecret)).toBe(true)
  })

  it('honours wait: true on create: holds until the answer, or until timeoutSeconds with a hint', async () => {
    const h = await service.start()
    const held = h.api('POST', '/decisions', {
      question: 'Deploy build 913?',
      wait: true,
      timeoutSeconds: 15,
      idempotencyKey: 'wait-1',
    })
    let decisionId: string | undefined
    const deadline = Date.now() + 10_000
    while (decisionId === undefined && Date.now() < deadline) {
      const listed = await h.api('GET', '/decisions?limit=5')
      const items = (listed.json.decisions ?? []) as { decisionId: string; question: string }[]
      decisionId = items.find((item) => item.question === 'Deploy build 913?')?.decisionId
      if (decisionId === undefined) await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(decisionId).toBeDefined()
    await h.api('POST', `/decisions/${decisionId}`, { answer: 'yes' })
    const response = await held
    expect(fits(contractDecisionResultSchema, response.json, 'POST /decisions wait')).toMatchObject({
      decisionId,
      status: 'answered',
      answered: true,
      value: 'yes',
    })

    const started = Date.now()
    const unanswered = await create(h, { question: 'Deploy build 914?', wait: true, timeoutSeconds: 1 })
    expect(Date.now() - started).toBeGreaterThanOrEqual(900)
    expect(unanswered).toMatchObject({ status: 'pending', answered: false })
  })

  it('keeps the local extras as extra fields only', async () => {
    const h = await service.start()
    const created = await create(h, { question: 'Refund order x-1?', externalId: 'customer_1' })
    const read = await h.api('GET', `/decisions/${created.decisionId}`)
    fits(contractDecisionSchema, read.json, 'GET with deliveries')
    expect(Array.isArray(read.json.deliveries)).toBe(true)
    const filtered = await h.api('GET', '/decisions?status=pending&limit=5')
    const page = fits(contractDecisionListSchema, filtered.json, 'GET /decisions?status=pending')
    expect(page.decisions.every((item) => item.status === 'pending')).toBe(true)
  })
})
