import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createPusharyClient, type PusharyClient } from '../../src/pushary/client.js'
import { PusharyReplayMismatchError } from '../../src/pushary/replay-check.js'
import { rejection } from '../helpers/errors.js'
import { type FakeDecisionService, startFakeDecisionService } from './helpers/fake-decision-service.js'

// The fake service replays whatever decision a key first created, as a
// service that never compares the request would: the client must notice.
let service: FakeDecisionService
let client: PusharyClient

beforeEach(async () => {
  service = await startFakeDecisionService()
  client = createPusharyClient({ apiKey: service.apiKey, baseUrl: service.baseUrl })
})

afterEach(async () => {
  await service.close()
})

describe('a reused idempotency key never approves another question', () => {
  it("refuses an ask whose key hands back another customer's approved EUR 5 decision", async () => {
    const first = await client.decisions.create({
      question: 'Refund EUR 5?',
      externalId: 'customer_a',
      idempotencyKey: 'shared-key',
    })
    service.answer(first.decisionId, 'yes')
    const error = await rejection(
      client.decisions.ask({
        question: 'Refund EUR 50,000?',
        externalId: 'customer_b',
        idempotencyKey: 'shared-key',
        timeoutMs: 0,
      }),
    )
    expect(error).toBeInstanceOf(PusharyReplayMismatchError)
    expect(error).toMatchObject({ code: 'idempotency_key_reused', field: 'question' })
  })

  it('reads a replayed decision back and refuses it when the customer differs', async () => {
    const first = await client.decisions.create({
      question: 'Delete the account?',
      externalId: 'customer_a',
      idempotencyKey: 'k-customer',
    })
    service.answer(first.decisionId, 'yes')
    const error = await rejection(
      client.decisions.ask({
        question: 'Delete the account?',
        externalId: 'customer_b',
        idempotencyKey: 'k-customer',
        timeoutMs: 0,
      }),
    )
    expect(error).toBeInstanceOf(PusharyReplayMismatchError)
    expect(error).toMatchObject({ code: 'idempotency_key_reused', field: 'externalId' })
  })

  it('refuses a replayed select whose options differ, and a replay of another type', async () => {
    await client.decisions.create({
      question: 'Which account?',
      type: 'select',
      options: ['savings', 'checking'],
      idempotencyKey: 'k-options',
    })
    const options = await rejection(
      client.decisions.create({
        question: 'Which account?',
        type: 'select',
        options: ['savings', 'offshore'],
        idempotencyKey: 'k-options',
      }),
    )
    expect(options).toMatchObject({ code: 'idempotency_key_reused', field: 'options' })
    const type = await rejection(
      client.decisions.create({ question: 'Which account?', idempotencyKey: 'k-options' }),
    )
    expect(type).toMatchObject({ code: 'idempotency_key_reused', field: 'type' })
  })

  it('returns the same decision for a genuine retry, and treats a null customer as unknown', async () => {
    const first = await client.decisions.create({
      question: 'Ship build 7?',
      externalId: 'ops_1',
      idempotencyKey: 'k-retry',
    })
    const again = await client.decisions.create({
      question: 'Ship build 7?',
      externalId: 'ops_1',
      idempotencyKey: 'k-retry',
    })
    expect(again).toMatchObject({ decisionId: first.decisionId, idempotent: true })
    const stored = service.decisions.get(first.decisionId)
    if (stored) stored.externalId = null
    service.answer(first.decisionId, 'yes')
    const asked = await client.decisions.ask({
      question: 'Ship build 7?',
      externalId: 'ops_1',
      idempotencyKey: 'k-retry',
      timeoutMs: 0,
    })
    expect(asked).toMatchObject({ decisionId: first.decisionId, approved: true })
  })
})
