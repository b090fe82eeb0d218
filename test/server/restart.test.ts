import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { verifyWebhookSignature } from '../../src/pushary/callbacks.js'
import { createPusharyClient } from '../../src/pushary/client.js'
import { createPusharyDevServer, type PusharyDevServer } from '../../src/server/dev-server.js'
import { type CallbackReceiver, eventually, startCallbackReceiver, tempDir } from './service-harness.js'

const open: PusharyDevServer[] = []
let receiver: CallbackReceiver | null = null

afterEach(async () => {
  for (const server of open.splice(0)) await server.close()
  await receiver?.close()
  receiver = null
})

async function boot(dbPath: string, options: Parameters<typeof createPusharyDevServer>[0] = {}) {
  const server = await createPusharyDevServer({
    dbPath,
    sweepIntervalMs: 200,
    callbackAddresses: { allowLoopback: true },
    ...options,
  })
  open.push(server)
  return { server, client: createPusharyClient({ apiKey: server.apiKey, baseUrl: server.baseUrl }) }
}

describe('restart', () => {
  it('keeps the key, the secret, enrolments and a pending decision answerable across a restart', async () => {
    const dbPath = join(tempDir('restart'), 'nested', 'service.db')
    const first = await boot(dbPath)
    const { decisionId } = await first.client.decisions.create({
      question: 'Still answerable tomorrow?',
      externalId: 'customer-1',
      idempotencyKey: 'restart-key',
    })
    const { token } = await first.client.enroll('customer-1')
    const enrolled = await fetch(`${first.server.url}/e/${token}`, { method: 'POST', redirect: 'manual' })
    await enrolled.body?.cancel()
    expect(enrolled.status).toBe(303)
    await first.server.close()
    open.splice(open.indexOf(first.server), 1)

    const second = await boot(dbPath)
    expect(second.server.apiKey).toBe(first.server.apiKey)
    expect(second.server.webhookSecret).toBe(first.server.webhookSecret)
    const again = await second.client.decisions.create({
      question: 'Still answerable tomorrow?',
      externalId: 'customer-1',
      idempotencyKey: 'restart-key',
    })
    expect(again).toMatchObject({ decisionId, idempotent: true, status: 'pending' })
    expect((await second.client.reachability('customer-1')).deviceCount).toBe(1)
    expect(await second.client.decisions.answer(decisionId, 'yes')).toMatchObject({
      status: 'answered',
      value: 'yes',
    })
    expect(await second.client.decisions.get(decisionId)).toMatchObject({ status: 'answered', value: 'yes' })
  })

  it('resumes a callback delivery that was still being retried when the service stopped', async () => {
    receiver = await startCallbackReceiver([500])
    const dbPath = join(tempDir('restart-outbox'), 'service.db')
    const first = await boot(dbPath, { callbackRetry: { baseDelayMs: 60_000, scanIntervalMs: 20 } })
    const { decisionId } = await first.client.decisions.create({
      question: 'Refund?',
      callbackUrl: receiver.url,
    })
    await first.client.decisions.answer(decisionId, 'yes')
    await receiver.waitFor(1)
    await eventually(async () => {
      const d = await first.client.decisions.get(decisionId)
      return (d.deliveries?.[0] as { attempts?: number } | undefined)?.attempts === 1 ? true : undefined
    })
    await first.server.close()
    open.splice(open.indexOf(first.server), 1)

    // The restarted service is clocked past the stored backoff, so the row is due.
    const second = await boot(dbPath, {
      now: () => Date.now() + 120_000,
      callbackRetry: { baseDelayMs: 60_000, scanIntervalMs: 20 },
    })
    await receiver.waitFor(2)
    const delivered = await eventually(async () => {
      const d = await second.client.decisions.get(decisionId)
      const view = d.deliveries?.[0] as { state?: string; attempts?: number } | undefined
      return view?.state === 'delivered' ? view : undefined
    })
    expect(delivered).toMatchObject({ state: 'delivered', attempts: 2 })
    expect(receiver.received.map((r) => r.respondedWith)).toEqual([500, 200])
    for (const delivery of receiver.received) {
      expect(verifyWebhookSignature(delivery.rawBody, delivery.signature, second.server.webhookSecret)).toBe(
        true,
      )
    }
  })

  it('answers sandbox decisions that a previous run left pending once restarted in sandbox mode', async () => {
    const dbPath = join(tempDir('restart-sandbox'), 'service.db')
    const first = await boot(dbPath)
    const approve = await first.client.decisions.create({ question: 'Auto?', sandboxOutcome: 'approve' })
    const deny = await first.client.decisions.create({ question: 'Auto?', sandboxOutcome: 'deny' })
    await first.server.close()
    open.splice(open.indexOf(first.server), 1)

    const second = await boot(dbPath, { sandbox: true })
    expect(await second.client.decisions.get(approve.decisionId, { wait: 10 })).toMatchObject({
      value: 'yes',
    })
    expect(await second.client.decisions.get(deny.decisionId, { wait: 10 })).toMatchObject({ value: 'no' })
  })
})
