/**
 * The client's permit and key calls against the local decision service over
 * loopback HTTP: bad input is a typed error naming the field before any
 * request, and a failure that is not a refusal (network, abort) stays a
 * typed error, so no caller can read it as a permit.
 */
import { describe, expect, it } from 'vitest'
import { createPusharyClient } from '../../src/pushary/client.js'
import { PusharyAbortError, PusharyNetworkError, PusharyValidationError } from '../../src/pushary/errors.js'
import { serviceFixture } from '../server/service-harness.js'
import { countingFetch } from '../server/support/devices.js'

const service = serviceFixture('platform-client')

describe('platform calls of the client', () => {
  it('refuses bad permit, receipt and key input with a typed error naming the field, before any request', async () => {
    const h = await service.start()
    const counter = countingFetch()
    const client = createPusharyClient({
      apiKey: h.server.apiKey,
      baseUrl: h.server.baseUrl,
      fetch: counter.fetch,
    })
    const cases: [Promise<unknown>, string, string][] = [
      [
        client.consumeAuthorization({ authorizationId: 'dec_1', toolName: '' }),
        'toolName',
        'invalid_permit_input',
      ],
      [
        client.consumeAuthorization({ authorizationId: 'dec_1', toolName: 't', externalId: ' ' }),
        'externalId',
        'invalid_external_id',
      ],
      [
        client.consumeAuthorization({
          authorizationId: 'dec_1',
          toolName: 't',
          parameters: Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, i])),
        }),
        'parameters',
        'invalid_permit_input',
      ],
      [
        client.consumeAuthorization({ authorizationId: 'dec_1', toolName: 't', toolTarget: 'a\u0000b' }),
        'toolTarget',
        'invalid_permit_input',
      ],
      [
        client.recordReceipt('pmt_1', { outcome: 'succeeded', summary: '\ud800' }),
        'summary',
        'invalid_permit_input',
      ],
      [client.keys.issue({ externalId: 'c', name: '  ' }), 'name', 'invalid_key_input'],
      [
        client.keys.issue({ externalId: 'c', expiresInSeconds: 1.5 }),
        'expiresInSeconds',
        'invalid_key_input',
      ],
    ]
    for (const [call, field, code] of cases) {
      const error = await call.then(
        () => null,
        (caught: unknown) => caught,
      )
      expect(error, field).toBeInstanceOf(PusharyValidationError)
      expect(error, field).toMatchObject({ field, code })
    }
    expect(counter.count()).toBe(0)
  })

  it('keeps a service that cannot be reached a network error, and a caller abort an abort, never a refusal', async () => {
    const h = await service.start()
    const baseUrl = h.server.baseUrl
    const apiKey = h.server.apiKey
    await h.close()
    const offline = createPusharyClient({ apiKey, baseUrl })
    await expect(
      offline.consumeAuthorization({ authorizationId: 'dec_1', toolName: 't' }),
    ).rejects.toBeInstanceOf(PusharyNetworkError)
    const controller = new AbortController()
    controller.abort('stop')
    await expect(
      offline.consumeAuthorization(
        { authorizationId: 'dec_1', toolName: 't' },
        { signal: controller.signal },
      ),
    ).rejects.toBeInstanceOf(PusharyAbortError)
  })

  it('issues a bound key the client accepts as its apiKey', async () => {
    const h = await service.start()
    const issued = await h.client.keys.issue({ externalId: 'customer_1', expiresInSeconds: 120 })
    expect(issued).toMatchObject({
      scope: 'bound',
      boundExternalId: 'customer_1',
      keyPrefix: expect.any(String),
    })
    const bound = createPusharyClient({ apiKey: issued.apiKey, baseUrl: h.server.baseUrl })
    expect(await bound.decisions.create({ question: 'Ship?', externalId: 'customer_1' })).toMatchObject({
      status: 'pending',
    })
  })
})
