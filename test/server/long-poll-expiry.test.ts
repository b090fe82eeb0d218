import { describe, expect, it } from 'vitest'
import { verifyWebhookSignature } from '../../src/pushary/callbacks.js'
import { isPusharyApiError } from '../../src/pushary/errors.js'
import { rejection } from '../helpers/errors.js'
import { serviceFixture } from './service-harness.js'

const { start, receive } = serviceFixture('long-poll')

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('long-poll', () => {
  it('returns within 1 s of an answer arriving while it waits', async () => {
    const h = await start()
    const { decisionId } = await h.client.decisions.create({ question: 'Ship?' })
    const waiting = h.client.decisions
      .get(decisionId, { wait: 30 })
      .then((decision) => ({ decision, at: Date.now() }))
    await sleep(400)
    const answeredAt = Date.now()
    await h.client.decisions.answer(decisionId, 'yes')
    const { decision, at } = await waiting
    expect(decision).toMatchObject({ status: 'answered', value: 'yes' })
    expect(at - answeredAt).toBeLessThan(1_000)
  })

  it('returns the pending decision when the wait runs out', async () => {
    const h = await start()
    const { decisionId } = await h.client.decisions.create({ question: 'Ship?' })
    expect(await h.client.decisions.get(decisionId, { wait: 1 })).toMatchObject({ status: 'pending' })
  })

  it('returns at once for a decision that has already settled, however long the wait', async () => {
    const h = await start()
    const { decisionId } = await h.client.decisions.create({ question: 'Ship?' })
    await h.client.decisions.cancel(decisionId)
    const response = await h.api('GET', `/decisions/${decisionId}?wait=999`)
    expect(response).toMatchObject({ status: 200, json: { status: 'cancelled' } })
  })

  it('wakes a waiting poll when the decision is cancelled or expires', async () => {
    const h = await start()
    const cancelled = await h.client.decisions.create({ question: 'Cancel me?' })
    const expiring = await h.client.decisions.create({ question: 'Let me lapse?', expiresInSeconds: 1 })
    const cancelledPoll = h.client.decisions.get(cancelled.decisionId, { wait: 30 })
    const expiringPoll = h.client.decisions.get(expiring.decisionId, { wait: 30 })
    await sleep(200)
    await h.client.decisions.cancel(cancelled.decisionId)
    expect(await cancelledPoll).toMatchObject({ status: 'cancelled', answered: false })
    expect(await expiringPoll).toMatchObject({ status: 'expired', answered: false, value: null })
  })

  it('lets a caller abort its wait without disturbing the decision or the service', async () => {
    const h = await start()
    const { decisionId } = await h.client.decisions.create({ question: 'Ship?' })
    const controller = new AbortController()
    const poll = h.client.decisions.get(decisionId, { wait: 30, signal: controller.signal })
    await sleep(200)
    controller.abort(new Error('caller gave up'))
    await expect(poll).rejects.toThrow()
    await h.client.decisions.answer(decisionId, 'no')
    expect(await h.client.decisions.get(decisionId)).toMatchObject({ status: 'answered', value: 'no' })
  })

  it('refuses a wait that is not a number with 400 naming wait', async () => {
    const h = await start()
    const { decisionId } = await h.client.decisions.create({ question: 'Ship?' })
    const response = await h.api('GET', `/decisions/${decisionId}?wait=soon`)
    expect([response.status, response.json.field]).toEqual([400, 'wait'])
  })
})

describe('expiry', () => {
  it('expires an unanswered decision through the sweeper, calls nobody back and refuses a late answer with 409', async () => {
    const receiver = await receive()
    const h = await start({ sweepIntervalMs: 200 })
    const { decisionId } = await h.client.decisions.create({
      question: 'Approve within a second?',
      expiresInSeconds: 1,
      callbackUrl: receiver.url,
      context: 'ctx-1',
    })
    const expired = await h.client.decisions.get(decisionId, { wait: 5 })
    expect(expired).toMatchObject({ status: 'expired', answered: false, value: null, context: 'ctx-1' })
    // The hosted API calls back answers only; an expiry is learnt by reading.
    await new Promise((resolve) => setTimeout(resolve, 400))
    expect(receiver.received).toHaveLength(0)
    const late = await rejection(h.client.decisions.answer(decisionId, 'yes'))
    expect(isPusharyApiError(late) && [late.status, late.code]).toEqual([409, 'expired'])
  })

  it('refuses an answer that arrives after the deadline even before the sweeper has run', async () => {
    let clock = Date.parse('2030-01-01T00:00:00Z')
    const h = await start({ now: () => clock, sweepIntervalMs: 3_600_000 })
    const { decisionId } = await h.client.decisions.create({ question: 'Ship?' })
    clock += 3_600_000
    const late = await rejection(h.client.decisions.answer(decisionId, 'yes'))
    expect(isPusharyApiError(late) && [late.status, late.code]).toEqual([409, 'expired'])
    expect(await h.client.decisions.get(decisionId)).toMatchObject({ status: 'expired', value: null })
  })

  it('keeps a decision answerable until its default one-hour deadline', async () => {
    let clock = Date.parse('2030-01-01T00:00:00Z')
    const h = await start({ now: () => clock, sweepIntervalMs: 3_600_000 })
    const { decisionId, expiresInSeconds } = await h.client.decisions.create({ question: 'Ship?' })
    expect(expiresInSeconds).toBe(3_600)
    clock += 3_599_000
    expect((await h.client.decisions.answer(decisionId, 'yes')).status).toBe('answered')
  })
})

describe('sandbox', () => {
  it('answers approve and deny outcomes itself, after reporting the decision as pending', async () => {
    const h = await start({ sandbox: true })
    const approve = await h.client.decisions.create({ question: 'Refund?', sandboxOutcome: 'approve' })
    const deny = await h.client.decisions.create({ question: 'Refund?', sandboxOutcome: 'deny' })
    expect(approve.status).toBe('pending')
    expect(deny.status).toBe('pending')
    expect(await h.client.decisions.get(approve.decisionId, { wait: 10 })).toMatchObject({
      status: 'answered',
      value: 'yes',
      autoResolved: true,
    })
    expect(await h.client.decisions.get(deny.decisionId, { wait: 10 })).toMatchObject({
      status: 'answered',
      value: 'no',
    })
  })

  it('leaves a no_answer outcome to expire', async () => {
    const h = await start({ sandbox: true, sweepIntervalMs: 200 })
    const { decisionId } = await h.client.decisions.create({
      question: 'Refund?',
      sandboxOutcome: 'no_answer',
      expiresInSeconds: 1,
    })
    expect(await h.client.decisions.get(decisionId, { wait: 10 })).toMatchObject({
      status: 'expired',
      value: null,
    })
  })

  it('ignores sandboxOutcome when the service is not in sandbox mode', async () => {
    const h = await start()
    const { decisionId } = await h.client.decisions.create({ question: 'Refund?', sandboxOutcome: 'approve' })
    expect(await h.client.decisions.get(decisionId, { wait: 1 })).toMatchObject({ status: 'pending' })
  })

  it('lets an automated ask complete with no person involved', async () => {
    const h = await start({ sandbox: true })
    const approved = await h.client.decisions.ask({
      question: 'Refund?',
      sandboxOutcome: 'approve',
      timeoutMs: 10_000,
    })
    expect(approved).toMatchObject({ status: 'answered', approved: true })
    const denied = await h.client.decisions.ask({
      question: 'Refund?',
      sandboxOutcome: 'deny',
      timeoutMs: 10_000,
    })
    expect(denied).toMatchObject({ status: 'answered', approved: false })
  })
})
