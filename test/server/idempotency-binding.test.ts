import { join } from 'node:path'
import { createClient } from '@libsql/client'
import { describe, expect, it } from 'vitest'
import { createPusharyDevServer } from '../../src/server/dev-server.js'
import { serviceFixture, tempDir } from './service-harness.js'

const { start } = serviceFixture('idempotency')

describe('an idempotency key is bound to the request it was first used for', () => {
  it("answers 409 idempotency_key_reused instead of another customer's approved decision", async () => {
    const h = await start()
    const first = await h.api('POST', '/decisions', {
      question: 'Refund EUR 5?',
      externalId: 'customer_a',
      idempotencyKey: 'shared',
    })
    expect(first.status).toBe(201)
    const id = String(first.json.decisionId)
    expect((await h.api('POST', `/decisions/${id}`, { answer: 'yes' })).status).toBe(200)
    const reused = await h.api('POST', '/decisions', {
      question: 'Refund EUR 50,000?',
      externalId: 'customer_b',
      idempotencyKey: 'shared',
    })
    expect(reused.status).toBe(409)
    expect(reused.json.code).toBe('idempotency_key_reused')
    expect(typeof reused.json.error).toBe('string')
    expect(reused.json.decisionId).toBeUndefined()
    expect(reused.json.value).toBeUndefined()
    for (const changed of [
      { question: 'Refund EUR 5?', externalId: 'customer_b' },
      { question: 'Refund EUR 5?', externalId: 'customer_a', type: 'input' },
      { question: 'Refund EUR 5?', externalId: 'customer_a', parameters: { amountMinor: 500000 } },
      { question: 'Refund EUR 5?', externalId: 'customer_a', context: 'other order' },
    ]) {
      const response = await h.api('POST', '/decisions', { ...changed, idempotencyKey: 'shared' })
      expect(response.status, JSON.stringify(changed)).toBe(409)
      expect(response.json.code).toBe('idempotency_key_reused')
    }
  })

  it('still replays a genuine retry, also when only delivery options changed', async () => {
    const h = await start()
    const body = { question: 'Ship build 7?', externalId: 'ops_1', idempotencyKey: 'retry' }
    const first = await h.api('POST', '/decisions', body)
    const again = await h.api('POST', '/decisions', {
      idempotencyKey: 'retry',
      externalId: 'ops_1',
      question: 'Ship build 7?',
      callbackUrl: 'http://127.0.0.1:9/cb',
      expiresInSeconds: 60,
      wait: false,
    })
    expect(again.status).toBe(200)
    expect(again.json).toMatchObject({ decisionId: first.json.decisionId, idempotent: true })
  })

  it('refuses a reuse on the requireReachable path too', async () => {
    const h = await start()
    await h.api('POST', '/decisions', { question: 'Refund EUR 5?', externalId: 'a', idempotencyKey: 'rr' })
    const reused = await h.api('POST', '/decisions', {
      question: 'Refund EUR 9,000?',
      externalId: 'a',
      idempotencyKey: 'rr',
      requireReachable: true,
    })
    expect(reused.status).toBe(409)
    expect(reused.json.code).toBe('idempotency_key_reused')
  })

  it('upgrades a version-1 database and compares its older rows by their stored fields', async () => {
    const dir = tempDir('idem-migrate')
    const dbPath = join(dir, 'service.db')
    const first = await createPusharyDevServer({ dbPath })
    const response = await fetch(`${first.baseUrl}/decisions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${first.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ question: 'Refund EUR 5?', externalId: 'a', idempotencyKey: 'old' }),
    })
    const created = (await response.json()) as { decisionId: string }
    await first.close()
    // Make the file look like one written by version 1: no digest column.
    const db = createClient({ url: `file:${dbPath}` })
    await db.execute('ALTER TABLE decisions DROP COLUMN request_digest')
    await db.execute('PRAGMA user_version = 1')
    db.close()
    const h = await start({ dbPath })
    const retry = await h.api('POST', '/decisions', {
      question: 'Refund EUR 5?',
      externalId: 'a',
      idempotencyKey: 'old',
    })
    expect(retry.status).toBe(200)
    expect(retry.json.decisionId).toBe(created.decisionId)
    const reused = await h.api('POST', '/decisions', {
      question: 'Refund EUR 50,000?',
      externalId: 'a',
      idempotencyKey: 'old',
    })
    expect(reused.status).toBe(409)
  })
})
