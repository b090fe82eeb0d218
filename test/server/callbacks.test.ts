import { describe, expect, it } from 'vitest'
import { resolvePusharyCallback, verifyWebhookSignature } from '../../src/pushary/callbacks.js'
import { type CallbackReceiver, eventually, type Harness, serviceFixture } from './service-harness.js'

const { start, receive } = serviceFixture('callbacks')

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

interface DeliveryView {
  state: string
  attempts: number
  event: string
  history: Array<{ attempt: number; statusCode: number | null; ok: boolean }>
}

async function deliveriesOf(h: Harness, decisionId: string): Promise<DeliveryView[]> {
  const response = await h.api('GET', `/decisions/${decisionId}/deliveries`)
  return response.json.deliveries as DeliveryView[]
}

function assertSigned(r: CallbackReceiver, secret: string): void {
  expect(r.received.length).toBeGreaterThan(0)
  for (const delivery of r.received) {
    expect(verifyWebhookSignature(delivery.rawBody, delivery.signature, secret)).toBe(true)
  }
}

describe('callbacks', () => {
  it('posts one signed decision.answered callback whose correlationId is the decision ID', async () => {
    const receiver = await receive()
    // A one-minute scan interval proves delivery is woken by the answer itself.
    const h = await start({ callbackRetry: { scanIntervalMs: 60_000 } })
    const { decisionId } = await h.client.decisions.create({
      question: 'Refund?',
      callbackUrl: receiver.url,
      context: '{"order":1042}',
    })
    await sleep(200)
    expect(receiver.received).toHaveLength(0)
    await h.client.decisions.answer(decisionId, 'yes')
    await receiver.waitFor(1)
    assertSigned(receiver, h.server.webhookSecret)
    const [delivery] = receiver.received
    expect(delivery?.headers['content-type']).toContain('application/json')
    const resolved = resolvePusharyCallback(
      delivery?.rawBody ?? '',
      delivery?.signature,
      h.server.webhookSecret,
    )
    expect(resolved).toMatchObject({
      event: 'decision.answered',
      correlationId: decisionId,
      decisionId,
      status: 'answered',
      answer: 'yes',
      value: 'yes',
      context: '{"order":1042}',
      approved: true,
    })
    expect(resolvePusharyCallback(delivery?.rawBody ?? '', delivery?.signature, 'whsec_wrong')).toBeNull()

    const read = await h.client.decisions.get(decisionId)
    expect(read.deliveries).toEqual([
      expect.objectContaining({ state: 'delivered', attempts: 1, event: 'decision.answered' }),
    ])
    await sleep(300)
    expect(receiver.received).toHaveLength(1)
  })

  it('retries a receiver that fails twice and records exactly one accepted delivery', async () => {
    const receiver = await receive([500, 503])
    const h = await start({ callbackRetry: { baseDelayMs: 50, maxAttempts: 5, scanIntervalMs: 20 } })
    const { decisionId } = await h.client.decisions.create({ question: 'Refund?', callbackUrl: receiver.url })
    await h.client.decisions.answer(decisionId, 'no')
    await receiver.waitFor(3)
    const [delivery] = await eventually(async () => {
      const views = await deliveriesOf(h, decisionId)
      return views[0]?.state === 'delivered' ? views : undefined
    })
    await sleep(400)
    assertSigned(receiver, h.server.webhookSecret)
    expect(receiver.received.map((r) => r.respondedWith)).toEqual([500, 503, 200])
    expect(receiver.received.filter((r) => r.respondedWith < 300)).toHaveLength(1)
    expect(new Set(receiver.received.map((r) => r.rawBody)).size).toBe(1)
    expect(delivery).toMatchObject({ state: 'delivered', attempts: 3 })
    expect(delivery?.history.map((a) => [a.attempt, a.statusCode, a.ok])).toEqual([
      [1, 500, false],
      [2, 503, false],
      [3, 200, true],
    ])
  })

  it('gives up after the bounded number of attempts and shows the delivery as failed', async () => {
    const receiver = await receive([500, 500, 500, 500, 500, 500])
    const h = await start({ callbackRetry: { baseDelayMs: 30, maxAttempts: 3, scanIntervalMs: 20 } })
    const { decisionId } = await h.client.decisions.create({ question: 'Refund?', callbackUrl: receiver.url })
    await h.client.decisions.answer(decisionId, 'no')
    const [delivery] = await eventually(async () => {
      const views = await deliveriesOf(h, decisionId)
      return views[0]?.state === 'failed' ? views : undefined
    })
    await sleep(300)
    expect(receiver.received).toHaveLength(3)
    expect(delivery).toMatchObject({ state: 'failed', attempts: 3, event: 'decision.answered' })
    // Every attempt carries the same hosted body.
    expect(new Set(receiver.received.map((r) => r.rawBody)).size).toBe(1)
    expect(Object.keys(JSON.parse(receiver.received[0]?.rawBody ?? '{}')).sort()).toEqual([
      'answer',
      'answeredAt',
      'correlationId',
      'value',
    ])
  })

  it('calls back nothing for a cancelled or expired decision, as the hosted API', async () => {
    const receiver = await receive([200, 200, 200])
    const h = await start({ callbackRetry: { baseDelayMs: 30, scanIntervalMs: 20 } })
    const cancelled = await h.client.decisions.create({ question: 'Refund?', callbackUrl: receiver.url })
    await h.client.decisions.cancel(cancelled.decisionId)
    const expiring = await h.client.decisions.create({
      question: 'Refund?',
      callbackUrl: receiver.url,
      expiresInSeconds: 1,
    })
    await eventually(async () =>
      (await h.client.decisions.get(expiring.decisionId)).status === 'expired' ? true : undefined,
    )
    await sleep(300)
    expect(receiver.received).toHaveLength(0)
    expect(await deliveriesOf(h, cancelled.decisionId)).toEqual([])
    expect(await deliveriesOf(h, expiring.decisionId)).toEqual([])
  })

  it('records an unreachable receiver as a failed attempt and keeps serving', async () => {
    const h = await start({
      callbackRetry: { baseDelayMs: 30, maxAttempts: 2, scanIntervalMs: 20, timeoutMs: 2_000 },
    })
    const { decisionId } = await h.client.decisions.create({
      question: 'Refund?',
      callbackUrl: 'http://127.0.0.1:9/unreachable',
    })
    await h.client.decisions.answer(decisionId, 'yes')
    const [delivery] = await eventually(async () => {
      const views = await deliveriesOf(h, decisionId)
      return views[0]?.state === 'failed' ? views : undefined
    })
    expect(delivery?.history).toHaveLength(2)
    expect(delivery?.history.every((a) => a.statusCode === null && !a.ok)).toBe(true)
    expect((await h.client.decisions.get(decisionId)).status).toBe('answered')
  })

  it('signs deliveries with the rotated secret once the secret is rotated', async () => {
    const receiver = await receive()
    const h = await start()
    const { webhookSecret } = await h.client.webhookSecret.rotate()
    const { decisionId } = await h.client.decisions.create({ question: 'Refund?', callbackUrl: receiver.url })
    await h.client.decisions.answer(decisionId, 'yes')
    await receiver.waitFor(1)
    assertSigned(receiver, webhookSecret)
  })

  it('sends nothing for a decision without a callback URL', async () => {
    const h = await start()
    const { decisionId } = await h.client.decisions.create({ question: 'Refund?' })
    await h.client.decisions.answer(decisionId, 'yes')
    expect(await deliveriesOf(h, decisionId)).toEqual([])
  })

  it('settles racing answers and a cancel exactly once, with one callback only if an answer won', async () => {
    const receiver = await receive()
    const h = await start()
    const { decisionId } = await h.client.decisions.create({ question: 'Refund?', callbackUrl: receiver.url })
    const answers = ['yes', 'no', 'yes', 'no', 'yes', 'no', 'yes', 'no'].map((answer) =>
      h.api('POST', `/decisions/${decisionId}`, { answer }),
    )
    const cancel = h.api('DELETE', `/decisions/${decisionId}`)
    const results = await Promise.all(answers)
    const cancelled = await cancel
    const answeredWins = results.filter((r) => r.status === 200).length
    expect(answeredWins + (cancelled.json.cancelled === true ? 1 : 0)).toBe(1)
    expect(results.every((r) => r.status === 200 || r.status === 409)).toBe(true)
    if (answeredWins === 1) await receiver.waitFor(1)
    await sleep(300)
    expect(receiver.received).toHaveLength(answeredWins)
    const final = await h.client.decisions.get(decisionId)
    if (answeredWins === 1) {
      expect(JSON.parse(receiver.received[0]?.rawBody ?? '{}')).toMatchObject({
        correlationId: decisionId,
        answer: final.value,
        value: final.value,
      })
    }
  })
})
