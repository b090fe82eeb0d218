import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Harness, startHarness } from './service-harness.js'

let h: Harness

beforeAll(async () => {
  h = await startHarness('limits')
})

afterAll(async () => {
  await h.close()
})

const manyKeys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]))

describe('POST /decisions limits', () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['a missing question', {}, 'question'],
    ['a blank question', { question: '   ' }, 'question'],
    ['a question over 500 characters', { question: 'q'.repeat(501) }, 'question'],
    ['more than 20 options', { question: 'Pick', type: 'select', options: manyOptions(21) }, 'options'],
    [
      'an option over 200 characters',
      { question: 'Pick', type: 'select', options: ['a', 'b'.repeat(201)] },
      'options.1',
    ],
    ['an empty option', { question: 'Pick', type: 'select', options: ['a', ''] }, 'options.1'],
    ['a select with one option', { question: 'Pick', type: 'select', options: ['only'] }, 'options'],
    ['options on a confirm', { question: 'Ok?', options: ['a', 'b'] }, 'options'],
    ['context over 2,000 characters', { question: 'Ok?', context: 'c'.repeat(2001) }, 'context'],
    ['more than 32 parameters', { question: 'Ok?', parameters: manyKeys(33) }, 'parameters'],
    ['a non-scalar parameter', { question: 'Ok?', parameters: { nested: { a: 1 } } }, 'parameters.nested'],
    [
      'a parameter string over 200',
      { question: 'Ok?', parameters: { note: 'n'.repeat(201) } },
      'parameters.note',
    ],
    ['an actor over 120 characters', { question: 'Ok?', actor: 'a'.repeat(121) }, 'actor'],
    ['an environment over 40 characters', { question: 'Ok?', environment: 'e'.repeat(41) }, 'environment'],
    ['a blank customer ID', { question: 'Ok?', externalId: ' \t ' }, 'externalId'],
    ['a customer ID over 256 UTF-16 units', { question: 'Ok?', externalId: 'x'.repeat(257) }, 'externalId'],
    ['an unknown type', { question: 'Ok?', type: 'vote' }, 'type'],
    ['a non-http callback URL', { question: 'Ok?', callbackUrl: 'ftp://example.com/cb' }, 'callbackUrl'],
    ['a zero expiry', { question: 'Ok?', expiresInSeconds: 0 }, 'expiresInSeconds'],
    ['an unknown sandbox outcome', { question: 'Ok?', sandboxOutcome: 'maybe' }, 'sandboxOutcome'],
    ['an idempotency key over 200', { question: 'Ok?', idempotencyKey: 'k'.repeat(201) }, 'idempotencyKey'],
  ]

  function manyOptions(n: number): string[] {
    return Array.from({ length: n }, (_, i) => `option ${i}`)
  }

  for (const [what, body, field] of cases) {
    it(`refuses ${what} with 400 naming ${field}`, async () => {
      const response = await h.api('POST', '/decisions', body)
      expect(response.status).toBe(400)
      expect(response.json.field).toBe(field)
      expect(String(response.json.error)).toContain(field)
    })
  }

  it('accepts every field exactly at its limit', async () => {
    const response = await h.api('POST', '/decisions', {
      question: 'q'.repeat(500),
      type: 'select',
      options: Array.from({ length: 20 }, (_, i) => `${i}`.padEnd(200, 'o')),
      context: 'c'.repeat(2000),
      parameters: manyKeys(32),
      actor: 'a'.repeat(120),
      environment: 'e'.repeat(40),
      externalId: 'x'.repeat(256),
    })
    expect(response.status).toBe(201)
    const read = await h.client.decisions.get(String(response.json.decisionId))
    expect(read.options).toHaveLength(20)
    expect(read.context).toHaveLength(2000)
  })

  it('writes nothing when a request is refused', async () => {
    const before = (await h.client.decisions.list({ limit: 100 })).decisions.length
    await h.api('POST', '/decisions', {
      question: 'Ok?',
      actor: 'a'.repeat(121),
      idempotencyKey: 'refused-key',
    })
    expect((await h.client.decisions.list({ limit: 100 })).decisions.length).toBe(before)
    const later = await h.client.decisions.create({ question: 'Ok?', idempotencyKey: 'refused-key' })
    expect(later.idempotent).toBeUndefined()
  })
})

describe('malformed requests', () => {
  it('answers 413 for a body over 64 KiB', async () => {
    const response = await h.api('POST', '/decisions', undefined, {
      rawBody: JSON.stringify({ question: 'Ok?', context: 'x'.repeat(70 * 1024) }),
    })
    expect(response.status).toBe(413)
    expect(response.json.code).toBe('payload_too_large')
  })

  it('answers 413 for an oversized body sent without a content length', async () => {
    const big = new TextEncoder().encode(`{"question":"${'x'.repeat(80 * 1024)}"}`)
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < big.length; i += 8192) controller.enqueue(big.slice(i, i + 8192))
        controller.close()
      },
    })
    const response = await fetch(`${h.server.baseUrl}/decisions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.server.apiKey}`, 'content-type': 'application/json' },
      body: stream,
      duplex: 'half',
    } as RequestInit)
    expect(response.status).toBe(413)
  })

  it('answers 400 invalid_json for malformed JSON on every JSON route', async () => {
    const { decisionId } = await h.client.decisions.create({ question: 'Ok?' })
    for (const path of ['/decisions', `/decisions/${decisionId}`, '/enroll', '/authorize']) {
      const response = await h.api('POST', path, undefined, { rawBody: '{"question": "unterminated' })
      expect(response.status, path).toBe(400)
      expect(response.json.code, path).toBe('invalid_json')
    }
  })

  it('never answers 500 and keeps serving whatever odd input arrives', async () => {
    const { decisionId } = await h.client.decisions.create({ question: 'Fuzz target?' })
    const bodies = [
      'null',
      '[]',
      '"string"',
      '42',
      'true',
      '{"question": null}',
      '{"question": ["a"]}',
      '{"question": {"toString": 1}}',
      '{"__proto__": {"question": "x"}}',
      '{"constructor": {"prototype": {"polluted": true}}, "question": "x"}',
      '{"question": "x", "parameters": []}',
      '{"question": "x", "parameters": {"": 1}}',
      '{"question": "x", "parameters": {"a": 1e400}}',
      '{"question": "x", "expiresInSeconds": 1.5}',
      '{"question": "x", "expiresInSeconds": "60"}',
      '{"question": "x", "presentation": {"label": "L", "effect": "E", "changes": [{"parameter": "p", "label": "P", "format": {"kind": "currency"}}]}}',
      '{"question": "x", "presentation": "bold"}',
      '{"question": "\\ud800"}',
      '{"question": "x\\u0000y"}',
      '{"answer": null}',
      '{"answer": {"$ne": 1}}',
      '{"answer": "yes", "extra": [1, 2, 3]}',
      '{"externalId": 17}',
      '{"toolName": "refund.create", "parameters": {"amountMinor": "lots"}}',
      '\u0000\u0001\u0002',
      '{'.repeat(5000),
      `{"a":${'['.repeat(3000)}${']'.repeat(3000)}}`,
    ]
    const paths = ['/decisions', `/decisions/${decisionId}`, '/decisions/%00', '/enroll', '/authorize']
    for (const path of paths) {
      for (const rawBody of bodies) {
        const response = await h.api('POST', path, undefined, { rawBody })
        expect(response.status, `${path} ${rawBody.slice(0, 40)}`).toBeLessThan(500)
      }
    }
    const getPaths = [
      `/decisions/${decisionId}?wait=abc`,
      `/decisions/${decisionId}?wait=-5`,
      `/decisions/${decisionId}?wait=Infinity`,
      `/decisions/${decisionId}?wait=1e309`,
      `/decisions/${decisionId}?wait=0x10`,
      `/decisions/${encodeURIComponent('../../etc/passwd')}`,
      '/decisions/%E0%A4%A',
      '/decisions/%',
      `/decisions/${'d'.repeat(5000)}`,
      '/decisions?limit=1e9',
      '/decisions?limit=-1&cursor=c_0',
      '/decisions?cursor=c_99999999999999999999',
      '/decisions?status=pending&status=answered',
      '/decisions?from=2024-13-45T99:99:99Z',
      '/reachability?externalId=%FF',
      '/reachability?externalId=a&externalId=b',
    ]
    for (const path of getPaths) {
      const response = await h.api('GET', path)
      expect(response.status, path).toBeLessThan(500)
    }
    for (const method of ['PUT', 'PATCH', 'OPTIONS']) {
      const response = await h.api(method, `/decisions/${decisionId}`, undefined, { rawBody: '{}' })
      expect(response.status, method).toBeLessThan(500)
    }
    const headers = await h.api('POST', '/decisions', undefined, {
      rawBody: '{"question":"ok?"}',
      headers: { 'content-type': 'text/plain; charset=utf-16' },
    })
    expect(headers.status).toBeLessThan(500)
    // The only well-formed answer in the list ({"answer": "yes", ...}) settled it; nothing else did.
    expect(await h.client.decisions.get(decisionId)).toMatchObject({ status: 'answered', value: 'yes' })
    expect(Object.hasOwn(Object.prototype, 'polluted')).toBe(false)
  })
})
