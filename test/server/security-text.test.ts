/**
 * Issue 9, items 1, 2, 3 and 9 (callback URL): strings that a store would
 * read back different from what was written never get in, through the
 * client or straight over HTTP; values written by an older version are read
 * as their stored bytes; only a confirm answered yes approves.
 */
import { createHash } from 'node:crypto'
import { createClient } from '@libsql/client'
import { describe, expect, it } from 'vitest'
import { createPusharyClient } from '../../src/pushary/client.js'
import { isPusharyValidationError } from '../../src/pushary/errors.js'
import { rejection } from '../helpers/errors.js'
import { serviceFixture } from './service-harness.js'
import { countingFetch, enrollDevice, reviewGet } from './support/devices.js'

const fixture = serviceFixture('security-text')

const BAD_TEXT = [
  ['a NUL', 'victim\u0000anything'],
  ['a lone high surrogate', 'victim\ud800'],
  ['a lone low surrogate', 'victim\udc00'],
] as const

async function rowCount(dbPath: string, table: string): Promise<number> {
  const db = createClient({ url: `file:${dbPath}` })
  try {
    return Number((await db.execute(`SELECT count(*) AS n FROM ${table}`)).rows[0]?.n ?? 0)
  } finally {
    db.close()
  }
}

describe('customer IDs that would not survive storage (item 1)', () => {
  it.each(BAD_TEXT)(
    'refuses a customer ID with %s at enroll, create and reachability, and writes nothing',
    async (_what, bad) => {
      const h = await fixture.start()
      for (const [path, body] of [
        ['/enroll', { externalId: bad }],
        ['/decisions', { question: 'Refund?', externalId: bad }],
      ] as const) {
        const response = await h.api('POST', path, body)
        expect(response.status, path).toBe(400)
        expect(response.json.field, path).toBe('externalId')
      }
      // A lone surrogate cannot even be percent-encoded into a query; a NUL can.
      if (bad.includes('\u0000')) {
        const reach = await h.api('GET', `/reachability?externalId=${encodeURIComponent(bad)}`)
        expect(reach.status).toBe(400)
        expect(reach.json.field).toBe('externalId')
      }
      expect(await rowCount(h.dbPath, 'enrollments')).toBe(0)
      expect(await rowCount(h.dbPath, 'decisions')).toBe(0)
    },
  )

  it('refuses it in the client before any request, naming the field', async () => {
    const h = await fixture.start()
    const counter = countingFetch()
    const client = createPusharyClient({
      baseUrl: h.server.baseUrl,
      apiKey: h.server.apiKey,
      fetch: counter.fetch,
    })
    for (const [_what, bad] of BAD_TEXT) {
      for (const call of [
        () => client.enroll(bad),
        () => client.reachability(bad),
        () => client.decisions.create({ question: 'Refund?', externalId: bad }),
        () => client.decisions.ask({ question: 'Refund?', externalId: bad }),
        () => client.decisions.list({ externalId: bad }),
      ]) {
        const error = await rejection(call())
        expect(isPusharyValidationError(error) && [error.code, error.field]).toEqual([
          'invalid_external_id',
          'externalId',
        ])
      }
    }
    expect(counter.count()).toBe(0)
  })

  it('keeps the victim isolated from a device enrolled for "victim\\u0000anything"', async () => {
    const h = await fixture.start()
    const victim = await enrollDevice(h.client, 'victim')
    const { decisionId } = await h.client.decisions.create({
      question: 'Refund EUR 5 to victim?',
      externalId: 'victim',
    })
    const attempt = await h.api('POST', '/enroll', { externalId: 'victim\u0000anything' })
    expect(attempt.status).toBe(400)
    expect((await h.client.reachability('victim')).deviceCount).toBe(1)
    expect((await reviewGet(`${h.server.url}/review`, victim.cookie)).text).toContain(decisionId)
  })

  it('never lets a row written with a NUL by an older version pass for the shorter customer', async () => {
    const h = await fixture.start()
    const victim = await enrollDevice(h.client, 'victim')
    // What an older version stored: an enrolment link and a decision for "victim\0anything".
    const db = createClient({ url: `file:${h.dbPath}` })
    const token = 'legacyLegacyLegacyLegacy01'
    try {
      await db.execute({
        sql: `INSERT INTO enrollments (token_hash, external_id, created_at, expires_at) VALUES (?, ?, ?, ?)`,
        args: [
          createHash('sha256').update(token).digest('hex'),
          'victim\u0000anything',
          new Date().toISOString(),
          new Date(Date.now() + 600_000).toISOString(),
        ],
      })
      await db.execute({
        sql: `INSERT INTO decisions (decision_id, status, type, question, external_id, created_at, created_ms, expires_at, expires_ms)
              VALUES ('dec_legacy', 'pending', 'confirm', 'Wire EUR 50,000?', ?, ?, ?, ?, ?)`,
        args: [
          'victim\u0000anything',
          new Date().toISOString(),
          Date.now(),
          new Date(Date.now() + 600_000).toISOString(),
          Date.now() + 600_000,
        ],
      })
    } finally {
      db.close()
    }
    // The link cannot bind a device: its customer did not survive storage.
    expect((await fetch(`${h.server.url}/e/${token}`)).status).toBe(410)
    const tap = await fetch(`${h.server.url}/e/${token}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    expect(tap.status).toBe(410)
    expect((await h.client.reachability('victim')).deviceCount).toBe(1)
    // The decision reads back whole, so the victim neither sees nor answers it.
    expect((await h.client.decisions.get('dec_legacy')).externalId).toBe('victim\u0000anything')
    expect((await reviewGet(`${h.server.url}/review`, victim.cookie)).text).not.toContain('dec_legacy')
    expect((await reviewGet(`${h.server.url}/review/dec_legacy`, victim.cookie)).status).toBe(403)
  })
})

describe('what the reviewer sees is exactly what was asked (item 2)', () => {
  it.each([
    [
      'question',
      { question: 'Refund EUR 5 to customer 42?\u0000 Also wire EUR 50,000 to account 7.' },
      'question',
    ],
    [
      'an option',
      { question: 'Pick', type: 'select', options: ['card', 'wire\u0000 EUR 50,000'] },
      'options.1',
    ],
    ['context', { question: 'Ok?', context: 'a\ud800' }, 'context'],
    ['placeholder', { question: 'Why?', type: 'input', placeholder: 'x\u0000y' }, 'placeholder'],
    ['toolName', { question: 'Ok?', toolName: 'refund\u0000.wire' }, 'toolName'],
    ['a parameter', { question: 'Ok?', parameters: { amount: '5\u000050000' } }, 'parameters.amount'],
    [
      'a presentation label',
      { question: 'Ok?', presentation: { label: 'Refund\u0000', effect: 'Money leaves' } },
      'presentation.label',
    ],
    [
      'callbackUrl',
      { question: 'Ok?', callbackUrl: 'http://127.0.0.1:9/cb\u0000/../elsewhere' },
      'callbackUrl',
    ],
  ] as const)(
    'refuses %s with a NUL or lone surrogate, over HTTP and in the client',
    async (_what, body, field) => {
      const h = await fixture.start()
      const response = await h.api('POST', '/decisions', body)
      expect(response.status).toBe(400)
      expect(response.json.field).toBe(field)
      const counter = countingFetch()
      const client = createPusharyClient({
        baseUrl: h.server.baseUrl,
        apiKey: h.server.apiKey,
        fetch: counter.fetch,
      })
      const error = await rejection(client.decisions.create(body as never))
      expect(isPusharyValidationError(error) && error.field).toBe(field)
      expect(counter.count()).toBe(0)
      expect(await rowCount(h.dbPath, 'decisions')).toBe(0)
    },
  )

  it('refuses an answer that would be stored cut while its callback carried it whole', async () => {
    const h = await fixture.start()
    const { decisionId } = await h.client.decisions.create({ question: 'Why?', type: 'input' })
    for (const answer of ['ok\u0000 and wire EUR 50,000', 'ok\udfff']) {
      const response = await h.api('POST', `/decisions/${decisionId}`, { answer })
      expect(response.status).toBe(400)
      expect(response.json.field).toBe('answer')
      const error = await rejection(h.client.decisions.answer(decisionId, answer))
      expect(isPusharyValidationError(error) && [error.code, error.field]).toEqual([
        'invalid_answer',
        'answer',
      ])
    }
    expect((await h.client.decisions.get(decisionId)).status).toBe('pending')
  })
})

describe('callback URLs with credentials (item 9)', () => {
  it('refuses user:password in callbackUrl without echoing the password', async () => {
    const h = await fixture.start()
    const response = await h.api('POST', '/decisions', {
      question: 'Ok?',
      callbackUrl: 'https://hook-user:s3cr3t-pa55@127.0.0.1:9/cb',
    })
    expect(response.status).toBe(400)
    expect(response.json.field).toBe('callbackUrl')
    expect(JSON.stringify(response.json)).not.toContain('s3cr3t-pa55')
    const error = await rejection(
      h.client.decisions.create({ question: 'Ok?', callbackUrl: 'http://u:s3cr3t-pa55@127.0.0.1:9/cb' }),
    )
    expect(isPusharyValidationError(error) && error.field).toBe('callbackUrl')
    expect(String(error)).not.toContain('s3cr3t-pa55')
  })
})

describe('only a confirm answered yes approves (item 3)', () => {
  it('reports approved: false from decisions.ask() for a select or input answered "yes", true only for confirm', async () => {
    const h = await fixture.start({ sandbox: true })
    // The sandbox answers "yes" on behalf of the person.
    const select = await h.client.decisions.ask({
      question: 'Which refund?',
      type: 'select',
      options: ['yes', 'no'],
      sandboxOutcome: 'approve',
      timeoutMs: 10_000,
    })
    expect(select).toMatchObject({ status: 'answered', value: 'yes', approved: false })
    const input = await h.client.decisions.ask({
      question: 'Type anything',
      type: 'input',
      sandboxOutcome: 'approve',
      timeoutMs: 10_000,
    })
    expect(input).toMatchObject({ status: 'answered', value: 'yes', approved: false })
    const confirm = await h.client.decisions.ask({
      question: 'Refund?',
      sandboxOutcome: 'approve',
      timeoutMs: 10_000,
    })
    expect(confirm).toMatchObject({ status: 'answered', value: 'yes', approved: true })
  })

  it('reports approved: false when the reviewer taps the option "Deny refund"', async () => {
    const h = await fixture.start()
    const asked = h.client.decisions.ask({
      question: 'What now?',
      type: 'select',
      options: ['Approve refund', 'Deny refund'],
      idempotencyKey: 'ask-deny-refund',
      timeoutMs: 15_000,
    })
    const created = await h.client.decisions.create({
      question: 'What now?',
      type: 'select',
      options: ['Approve refund', 'Deny refund'],
      idempotencyKey: 'ask-deny-refund',
    })
    await h.client.decisions.answer(created.decisionId, 'Deny refund')
    expect(await asked).toMatchObject({ status: 'answered', value: 'Deny refund', approved: false })
  })
})
