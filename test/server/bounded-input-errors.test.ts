/**
 * Input errors over loopback HTTP: a 400 lists the first few issues and
 * counts the rest instead of echoing every one, and a key JavaScript treats
 * specially (`__proto__`, `constructor`, `prototype`) is refused by name,
 * by the client before any request and by the service, never dropped.
 */
import { describe, expect, it } from 'vitest'
import { PusharyValidationError } from '../../src/pushary/errors.js'
import { serviceFixture } from './service-harness.js'

const service = serviceFixture('bounded-input-errors')

describe('bounded error bodies', () => {
  it('answers 32,000 wrongly typed options with a short 400 that counts the issues it does not list', async () => {
    const h = await service.start()
    const rawBody = `{"question":"Pick one","type":"select","options":[${Array(32_000).fill('1').join(',')}]}`
    expect(rawBody.length).toBeLessThan(64 * 1024)
    const response = await fetch(`${h.server.baseUrl}/decisions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.server.apiKey}`, 'content-type': 'application/json' },
      body: rawBody,
    })
    const text = await response.text()
    expect(response.status).toBe(400)
    expect(text.length).toBeLessThan(4_096)
    const body = JSON.parse(text) as { field: string; issues: unknown[]; moreIssues: number }
    expect(body.field).toBe('options.0')
    expect(body.issues.length + body.moreIssues).toBe(32_000)
  })
})

describe('reserved key names', () => {
  it.each(['__proto__', 'constructor', 'prototype'])(
    'refuses a parameter named %s with a 400 naming it, and stores nothing',
    async (name) => {
      const h = await service.start()
      const response = await h.api('POST', '/decisions', undefined, {
        rawBody: `{"question":"Refund EUR 48?","toolName":"refund.create","parameters":{"${name}":"acct-evil","amountMinor":4800}}`,
      })
      expect(response.status).toBe(400)
      expect(response.json).toMatchObject({ code: 'invalid_request', field: `parameters.${name}` })
      expect(String(response.json.error)).toContain(name)
      expect((await h.client.decisions.list()).decisions).toEqual([])
    },
  )

  it("refuses __proto__ in a consume's parameters instead of comparing without it", async () => {
    const h = await service.start()
    const created = await h.client.decisions.create({
      question: 'Refund EUR 48?',
      toolName: 'refund.create',
      parameters: { amountMinor: 4800 },
    })
    await h.client.decisions.answer(created.decisionId, 'yes')
    const response = await h.api('POST', '/authorizations/consume', undefined, {
      rawBody: `{"authorizationId":"${created.decisionId}","toolName":"refund.create","parameters":{"amountMinor":4800,"__proto__":{"account":"evil"}}}`,
    })
    expect(response.status).toBe(400)
    expect(response.json).toMatchObject({ field: 'parameters.__proto__' })
    // The approval is still unspent.
    await expect(
      h.client.consumeAuthorization({
        authorizationId: created.decisionId,
        toolName: 'refund.create',
        parameters: { amountMinor: 4800 },
      }),
    ).resolves.toMatchObject({ status: 'permitted' })
  })

  it('has the client refuse __proto__ and constructor by name before any request', async () => {
    const h = await service.start()
    const fromJson = JSON.parse('{"__proto__": "acct-evil", "amountMinor": 4800}') as Record<string, number>
    const attempt = h.client.decisions.create({ question: 'Refund EUR 48?', parameters: fromJson })
    await expect(attempt).rejects.toBeInstanceOf(PusharyValidationError)
    await expect(attempt).rejects.toMatchObject({
      code: 'invalid_decision_input',
      field: 'parameters.__proto__',
    })
    await expect(
      h.client.consumeAuthorization({
        authorizationId: 'dec_x',
        toolName: 'refund.create',
        parameters: { ['constructor']: 'x' },
      }),
    ).rejects.toMatchObject({ code: 'invalid_permit_input', field: 'parameters.constructor' })
    expect((await h.client.decisions.list()).decisions).toEqual([])
  })
})
