/**
 * Issue 19, item 5: one slow receiver never delays another's callbacks (a
 * per-host cap, rows in flight never block due rows), and internal addresses
 * are refused as callbackUrl unless the service allows them by name.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createCallbackAddressCheck } from '../../src/server/callback-address.js'
import { serviceFixture, startHarness, tempDir } from './service-harness.js'

const fixture = serviceFixture('callback-policy')

const INTERNAL_URLS = [
  'http://127.0.0.1:1/cb',
  'http://0x7f000001:1/cb',
  'http://2130706433:1/cb',
  'http://127.1:1/cb',
  'http://[::1]:1/cb',
  'http://[::ffff:127.0.0.1]:1/cb',
  'http://localhost:1/cb',
  'http://169.254.169.254/latest/meta-data',
  'http://10.0.0.1/cb',
  'http://192.168.1.1/cb',
  'http://[fe80::1]/cb',
  'http://0.0.0.0:1/cb',
]

/** A receiver that takes requests and never answers; counts them. */
async function startSilentReceiver(): Promise<{ url: string; open: () => number; close(): Promise<void> }> {
  let open = 0
  const server: Server = createServer((req) => {
    open += 1
    req.on('close', () => {
      open -= 1
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/slow`,
    open: () => open,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

describe('callbackUrl address policy', () => {
  it('refuses loopback, link-local and private addresses in every spelling by default', async () => {
    const h = await fixture.start({ callbackAddresses: {} })
    for (const callbackUrl of INTERNAL_URLS) {
      const response = await h.api('POST', '/decisions', { question: 'Ship?', callbackUrl })
      expect(response.status, callbackUrl).toBe(400)
      expect(response.json.field, callbackUrl).toBe('callbackUrl')
    }
    const list = await h.api('GET', '/decisions')
    expect(list.json.decisions).toEqual([])
  })

  it('allows loopback only under the named flag, and other addresses only by allow-list', async () => {
    const h = await fixture.start({ callbackAddresses: { allowLoopback: true, allow: ['10.1.0.0/16'] } })
    expect(
      (await h.api('POST', '/decisions', { question: 'a', callbackUrl: 'http://127.0.0.1:1/cb' })).status,
    ).toBe(201)
    expect(
      (await h.api('POST', '/decisions', { question: 'b', callbackUrl: 'http://10.1.2.3/cb' })).status,
    ).toBe(201)
    for (const callbackUrl of ['http://169.254.169.254/latest', 'http://10.2.0.1/cb']) {
      const refused = await h.api('POST', '/decisions', { question: 'c', callbackUrl })
      expect(refused.status, callbackUrl).toBe(400)
    }
  })

  it('refuses a host name that resolves to an internal address', async () => {
    const check = createCallbackAddressCheck({}, async () => ['169.254.169.254'])
    expect(await check('https://metadata.attacker.example/x')).toMatch(/internal address/)
    const publicName = createCallbackAddressCheck({}, async () => ['93.184.216.34'])
    expect(await publicName('https://app.example.com/cb')).toBeNull()
  })

  it('checks again before delivery: a loopback row stops being called once loopback is no longer allowed', async () => {
    const dir = tempDir('callback-recheck')
    const dbPath = join(dir, 'service.db')
    const receiver = await fixture.receive()
    const first = await startHarness('recheck-1', { dbPath, callbackAddresses: { allowLoopback: true } })
    const created = await first.api('POST', '/decisions', { question: 'Ship?', callbackUrl: receiver.url })
    await first.close()
    const h = await fixture.start({ dbPath, callbackAddresses: {}, callbackRetry: { maxAttempts: 1 } })
    const id = String(created.json.decisionId)
    expect((await h.api('POST', `/decisions/${id}`, { answer: 'yes' })).status).toBe(200)
    const deadline = Date.now() + 5_000
    let delivery: Record<string, unknown> | undefined
    while (Date.now() < deadline) {
      const listed = await h.api('GET', `/decisions/${id}/deliveries`)
      delivery = (listed.json.deliveries as Record<string, unknown>[])[0]
      if (delivery?.state === 'failed') break
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(delivery?.state).toBe('failed')
    expect(String(delivery?.lastError)).toMatch(/loopback/)
    expect(receiver.received).toHaveLength(0)
  })
})

describe('callback delivery per receiver', () => {
  it('delivers to a fast receiver at once while 60 callbacks wait on one that never answers', async () => {
    const slow = await startSilentReceiver()
    const fast = await fixture.receive()
    try {
      const h = await fixture.start({ callbackRetry: { timeoutMs: 8_000, scanIntervalMs: 200 } })
      const ids: string[] = []
      for (let index = 0; index < 60; index += 1) {
        const created = await h.api('POST', '/decisions', {
          question: `Slow ${index}?`,
          callbackUrl: slow.url,
        })
        ids.push(String(created.json.decisionId))
      }
      for (const id of ids) await h.api('POST', `/decisions/${id}`, { answer: 'yes' })
      await new Promise((resolve) => setTimeout(resolve, 300))
      const created = await h.api('POST', '/decisions', { question: 'Fast?', callbackUrl: fast.url })
      const answeredAt = Date.now()
      await h.api('POST', `/decisions/${String(created.json.decisionId)}`, { answer: 'yes' })
      await fast.waitFor(1, 5_000)
      expect(Date.now() - answeredAt).toBeLessThan(1_000)
      // The slow host never holds more than its per-host cap (default 4).
      expect(slow.open()).toBeLessThanOrEqual(4)
      expect(slow.open()).toBeGreaterThan(0)
    } finally {
      await slow.close()
    }
  })
})
