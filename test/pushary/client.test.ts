import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createPusharyClient, type PusharyClient } from '../../src/pushary/client.js'
import {
  isPusharyApiError,
  isPusharyValidationError,
  PusharyAbortError,
  PusharyApiError,
  PusharyTimeoutError,
  PusharyValidationError,
} from '../../src/pushary/errors.js'
import { deterministicKey, fingerprintPusharyAction } from '../../src/pushary/identity.js'
import { rejection } from '../helpers/errors.js'
import { type FakeDecisionService, startFakeDecisionService } from './helpers/fake-decision-service.js'

let service: FakeDecisionService
let client: PusharyClient

beforeEach(async () => {
  service = await startFakeDecisionService()
  client = createPusharyClient({ apiKey: service.apiKey, baseUrl: service.baseUrl })
})

afterEach(async () => {
  await service.close()
})

describe('createPusharyClient configuration', () => {
  it('names the apiKey option when no key is passed and PUSHARY_API_KEY is unset', () => {
    const saved = process.env.PUSHARY_API_KEY
    delete process.env.PUSHARY_API_KEY
    try {
      const error = (() => {
        try {
          createPusharyClient({ baseUrl: service.baseUrl })
        } catch (caught) {
          return caught
        }
      })()
      expect(error).toBeInstanceOf(PusharyValidationError)
      expect(error).toMatchObject({ code: 'invalid_api_key', field: 'apiKey' })
      expect((error as Error).message).toContain('PUSHARY_API_KEY')
      expect((error as Error).message).toContain('apiKey')
    } finally {
      if (saved !== undefined) process.env.PUSHARY_API_KEY = saved
    }
  })

  it('reads the key from PUSHARY_API_KEY when none is passed', async () => {
    const saved = process.env.PUSHARY_API_KEY
    process.env.PUSHARY_API_KEY = service.apiKey
    try {
      const fromEnv = createPusharyClient({ baseUrl: service.baseUrl })
      await expect(fromEnv.webhookSecret.get()).resolves.toHaveProperty('webhookSecret')
    } finally {
      if (saved === undefined) delete process.env.PUSHARY_API_KEY
      else process.env.PUSHARY_API_KEY = saved
    }
  })

  it('rejects a key without a dot or with whitespace, and a base URL that cannot carry paths', () => {
    for (const apiKey of ['pk_only', 'pk_x .sk_y', '', '   ']) {
      expect(() => createPusharyClient({ apiKey, baseUrl: service.baseUrl })).toThrow(
        expect.objectContaining({ code: 'invalid_api_key', field: 'apiKey' }),
      )
    }
    for (const baseUrl of [
      'ftp://127.0.0.1/api',
      'http://127.0.0.1:1/api?x=1',
      'not a url',
      'http://u:p@127.0.0.1/',
    ]) {
      expect(() => createPusharyClient({ apiKey: service.apiKey, baseUrl })).toThrow(
        expect.objectContaining({ code: 'invalid_base_url', field: 'baseUrl' }),
      )
    }
  })

  it('accepts any http(s) base URL and a key with a dot in its prefix, as the official SDK does', async () => {
    const proxied = createPusharyClient({
      apiKey: 'pk.live.sk_1',
      baseUrl: 'http://127.0.0.1:1/gateway/pushary',
    })
    expect(proxied.baseUrl).toBe('http://127.0.0.1:1/gateway/pushary')
  })

  it('strips a trailing slash from the base URL', async () => {
    const slashed = createPusharyClient({ apiKey: service.apiKey, baseUrl: `${service.baseUrl}/` })
    expect(slashed.baseUrl).toBe(service.baseUrl)
    await slashed.webhookSecret.get()
    expect(service.requests.at(-1)?.path).toBe('/webhook-secret')
  })
})

describe('decisions', () => {
  it('returns the same decision for a repeated idempotency key', async () => {
    const input = { question: 'Refund EUR 48?', externalId: 'customer_1', idempotencyKey: 'run_1:step_1' }
    const first = await client.decisions.create(input)
    const second = await client.decisions.create(input)
    expect(second.decisionId).toBe(first.decisionId)
    expect(second.idempotent).toBe(true)
    expect(service.decisions.size).toBe(1)
    expect(service.requests[0]?.body).not.toHaveProperty('wait')
    expect(service.requests[0]?.headers.authorization).toBe(`Bearer ${service.apiKey}`)
  })

  it('sends a customer ID with surrounding whitespace unchanged', async () => {
    await client.decisions.create({ question: 'Ship it?', externalId: ' customer_1 ' })
    expect(service.requests[0]?.body).toMatchObject({ externalId: ' customer_1 ' })
  })

  it('refuses a blank customer ID before any request, and sends a long one as given (the API publishes no limit)', async () => {
    for (const call of [
      client.decisions.create({ question: 'Ship it?', externalId: '   ' }),
      client.enroll(' '),
      client.reachability(''),
    ]) {
      await expect(call).rejects.toMatchObject({ code: 'invalid_external_id', field: 'externalId' })
    }
    expect(service.requests).toHaveLength(0)
    await client.decisions.create({ question: 'Ship it?', externalId: 'c'.repeat(257) })
    expect(service.requests[0]?.body).toMatchObject({ externalId: 'c'.repeat(257) })
  })

  it('rejects bad decision input with the zod issues attached and no request sent', async () => {
    const error = await rejection(
      client.decisions.create({ question: 'Pick', type: 'select', options: ['a'] }),
    )
    expect(isPusharyValidationError(error)).toBe(true)
    expect(error).toMatchObject({ code: 'invalid_options', field: 'options' })
    expect((error as PusharyValidationError).issues.length).toBeGreaterThan(0)
    await expect(
      client.decisions.create({ question: 'Refund?', parameters: { amount: Number.NaN } }),
    ).rejects.toMatchObject({ code: 'invalid_decision_input', field: 'parameters.amount' })
    await expect(client.decisions.get('  ')).rejects.toMatchObject({ code: 'invalid_identifier' })
    expect(service.requests).toHaveLength(0)
  })

  it('throws before any request when the action fingerprint holds NaN, a cycle, a Date or a class instance', async () => {
    class Money {
      amount = 4800
    }
    const cycle: Record<string, unknown> = { name: 'loop' }
    cycle.self = cycle
    for (const bad of [{ amount: Number.NaN }, cycle, { at: new Date(0) }, { money: new Money() }]) {
      const error = await rejection(
        (async () =>
          client.decisions.create({
            question: 'Refund?',
            idempotencyKey: deterministicKey(['run_1', fingerprintPusharyAction(bad)]),
          }))(),
      )
      expect(error).toMatchObject({ code: 'invalid_fingerprint_value' })
    }
    expect(service.requests).toHaveLength(0)
  })

  it('skips undefined query parameters and sends wait only when asked', async () => {
    const created = await client.decisions.create({ question: 'Ship it?', externalId: 'customer_1' })
    await client.decisions.get(created.decisionId)
    expect(service.requests.at(-1)?.query).toEqual({})
    const page = await client.decisions.list({ externalId: 'customer_1', cursor: undefined })
    expect(service.requests.at(-1)?.query).toEqual({ externalId: 'customer_1' })
    expect(page.decisions.map((d) => d.decisionId)).toEqual([created.decisionId])
    expect(page.nextCursor).toBeNull()
  })

  it('clamps a long-poll wait to 55 seconds', async () => {
    const created = await client.decisions.create({ question: 'Ship it?' })
    service.answer(created.decisionId, 'yes')
    await client.decisions.get(created.decisionId, { wait: 600 })
    expect(service.requests.at(-1)?.query).toEqual({ wait: '55' })
  })

  it('relays an answer, cancels, and manages the webhook secret', async () => {
    const created = await client.decisions.create({ question: 'Ship it?' })
    const answered = await client.decisions.answer(created.decisionId, 'no')
    expect(answered).toMatchObject({ status: 'answered', answered: true, value: 'no' })
    const other = await client.decisions.create({ question: 'Delete it?' })
    await expect(client.decisions.cancel(other.decisionId)).resolves.toMatchObject({
      cancelled: true,
      status: 'cancelled',
    })
    const first = await client.webhookSecret.get()
    const rotated = await client.webhookSecret.rotate()
    expect(rotated.webhookSecret).not.toBe(first.webhookSecret)
    await expect(client.enroll('customer_1')).resolves.toMatchObject({ externalId: 'customer_1' })
    await expect(client.reachability('customer_1')).resolves.toMatchObject({ deliverability: 'fallback' })
    await expect(client.authorize({ toolName: 'refund.create' })).resolves.toMatchObject({
      verdict: 'requires_human',
    })
  })
})

describe('decisions.ask', () => {
  it('returns as soon as the decision is answered during the long-poll', async () => {
    const asking = client.decisions.ask({
      question: 'Refund EUR 48?',
      externalId: 'customer_1',
      timeoutMs: 40_000,
    })
    const poll = await service.waitForRequest((r) => r.method === 'GET' && r.query.wait !== undefined)
    expect(poll.query.wait).toBe('40')
    const decisionId = [...service.decisions.keys()][0]!
    service.answer(decisionId, 'yes')
    const result = await asking
    expect(result).toMatchObject({
      decisionId,
      status: 'answered',
      value: 'yes',
      approved: true,
      reachable: true,
    })
    // One held GET was enough: the answer released it instead of a new poll.
    expect(service.requests.filter((r) => r.method === 'GET')).toHaveLength(1)
  })

  it('returns the pending decision, not approved, when the local deadline passes', async () => {
    const result = await client.decisions.ask({
      question: 'Ship it?',
      externalId: 'customer_1',
      timeoutMs: 1_200,
    })
    expect(result).toMatchObject({ status: 'pending', answered: false, value: null, approved: false })
    expect(service.requests.some((r) => r.method === 'DELETE')).toBe(false)
  })

  it('returns the pending decision when a poll times out locally', async () => {
    const impatient = createPusharyClient({
      apiKey: service.apiKey,
      baseUrl: service.baseUrl,
      requestTimeoutMs: 200,
    })
    service.override = (r) => (r.method === 'GET' ? { kind: 'hang' } : undefined)
    const result = await impatient.decisions.ask({ question: 'Ship it?', timeoutMs: 1_000 })
    expect(result).toMatchObject({ status: 'pending', approved: false })
  })

  it('creates one fresh decision per ask without a key and reuses one with a key', async () => {
    await client.decisions.ask({ question: 'A?', timeoutMs: 0 })
    await client.decisions.ask({ question: 'A?', timeoutMs: 0 })
    expect(service.decisions.size).toBe(2)
    const keyed = { question: 'B?', idempotencyKey: 'same', timeoutMs: 0 }
    const one = await client.decisions.ask(keyed)
    const two = await client.decisions.ask(keyed)
    expect(two.decisionId).toBe(one.decisionId)
    // No long-poll with timeoutMs 0; the one GET is the read-back of the replay.
    expect(service.requests.filter((r) => r.method === 'GET')).toHaveLength(1)
  })

  it('never approves a select or input answer that reads as no, nor a declined confirm', async () => {
    const asking = client.decisions.ask({ question: 'Refund?', timeoutMs: 20_000 })
    await service.waitForRequest((r) => r.method === 'GET')
    service.answer([...service.decisions.keys()][0]!, 'no')
    await expect(asking).resolves.toMatchObject({ status: 'answered', approved: false, type: 'confirm' })
  })

  it('rejects locally on caller abort and leaves the remote decision pending', async () => {
    const controller = new AbortController()
    const asking = client.decisions.ask({
      question: 'Ship it?',
      timeoutMs: 30_000,
      signal: controller.signal,
    })
    await service.waitForRequest((r) => r.method === 'GET')
    controller.abort(new Error('user left'))
    const error = await rejection(asking)
    expect(error).toBeInstanceOf(PusharyAbortError)
    expect((error as PusharyAbortError).reason).toEqual(new Error('user left'))
    expect(service.requests.some((r) => r.method === 'DELETE')).toBe(false)
    expect([...service.decisions.values()][0]?.status).toBe('pending')
  })

  it('sends nothing when the signal is already aborted', async () => {
    const controller = new AbortController()
    controller.abort()
    await expect(
      client.decisions.ask({ question: 'Ship?', signal: controller.signal }),
    ).rejects.toBeInstanceOf(PusharyAbortError)
    expect(service.requests).toHaveLength(0)
  })
})

describe('transport errors', () => {
  it.each([
    [401, { isAuthError: true, isRateLimited: false, isServerError: false }],
    [403, { isAuthError: true, isRateLimited: false, isServerError: false }],
    [429, { isAuthError: false, isRateLimited: true, isServerError: false }],
    [500, { isAuthError: false, isRateLimited: false, isServerError: true }],
    [503, { isAuthError: false, isRateLimited: false, isServerError: true }],
    [400, { isAuthError: false, isRateLimited: false, isServerError: false }],
  ])('classifies HTTP %i', async (status, flags) => {
    service.override = () => ({ kind: 'reply', status, body: JSON.stringify({ error: `nope ${status}` }) })
    const error = await rejection(client.decisions.create({ question: 'Ship?' }))
    expect(error).toBeInstanceOf(PusharyApiError)
    expect(error).toMatchObject({ status, body: { error: `nope ${status}` }, ...flags })
    expect((error as Error).message).toContain(`nope ${status}`)
  })

  it('answers 401 for a wrong key as an auth error', async () => {
    const wrong = createPusharyClient({ apiKey: 'pk_test.sk_wrong', baseUrl: service.baseUrl })
    const error = await rejection(wrong.webhookSecret.get())
    expect(isPusharyApiError(error) && error.isAuthError).toBe(true)
  })

  it('keeps the body code and falls back to {} for a malformed JSON error body', async () => {
    service.override = () => ({
      kind: 'reply',
      status: 422,
      body: '{"code":"subscriber_not_found","message":"no one"}',
    })
    await expect(client.decisions.create({ question: 'Ship?' })).rejects.toMatchObject({
      status: 422,
      code: 'subscriber_not_found',
      apiCode: 'subscriber_not_found',
    })
    service.override = () => ({
      kind: 'reply',
      status: 502,
      body: '<html>bad gateway',
      contentType: 'text/html',
    })
    const error = await rejection(client.decisions.create({ question: 'Ship?' }))
    expect(error).toMatchObject({ status: 502, body: {}, isServerError: true, code: 'api_error' })
    expect((error as Error).message).toContain('HTTP 502')
  })

  it('rejects a 2xx body that is not JSON or not a decision as invalid_response', async () => {
    service.override = () => ({ kind: 'reply', status: 200, body: 'not json' })
    await expect(client.decisions.create({ question: 'Ship?' })).rejects.toMatchObject({
      code: 'invalid_response',
    })
    service.override = () => ({ kind: 'reply', status: 200, body: '{"status":"maybe"}' })
    await expect(client.decisions.create({ question: 'Ship?' })).rejects.toMatchObject({
      code: 'invalid_response',
    })
  })

  it('times out a request that never answers, and one whose body stalls', async () => {
    const impatient = createPusharyClient({
      apiKey: service.apiKey,
      baseUrl: service.baseUrl,
      requestTimeoutMs: 200,
    })
    service.override = () => ({ kind: 'hang' })
    const hung = await rejection(impatient.decisions.create({ question: 'Ship?' }))
    expect(hung).toBeInstanceOf(PusharyTimeoutError)
    expect(hung).toMatchObject({ code: 'timeout', timeoutMs: 200 })
    service.override = () => ({ kind: 'stall-body', status: 200 })
    await expect(impatient.decisions.create({ question: 'Ship?' })).rejects.toBeInstanceOf(
      PusharyTimeoutError,
    )
  })

  it('throws a timeout from ask when the create itself times out', async () => {
    const impatient = createPusharyClient({
      apiKey: service.apiKey,
      baseUrl: service.baseUrl,
      requestTimeoutMs: 200,
    })
    service.override = () => ({ kind: 'hang' })
    await expect(impatient.decisions.ask({ question: 'Ship?', timeoutMs: 5_000 })).rejects.toBeInstanceOf(
      PusharyTimeoutError,
    )
  })

  it('reports an unreachable service as a network error', async () => {
    const baseUrl = service.baseUrl
    await service.close()
    const offline = createPusharyClient({ apiKey: service.apiKey, baseUrl })
    await expect(offline.webhookSecret.get()).rejects.toMatchObject({ code: 'network_error' })
    service = await startFakeDecisionService()
  })
})
