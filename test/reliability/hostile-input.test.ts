/**
 * Hostile input to the decision service, run as its own OS process
 * (`pushary-mastra dev`), so a crash is a dead process and not a caught
 * exception. Every hostile request gets a 4xx (a JSON error on the API and
 * on unknown routes), the process keeps serving, and the database is
 * byte-for-byte the same afterwards: no row of any table changed.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createClient } from '@libsql/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPusharyClient, type PusharyClient } from '../../src/pushary/client.js'
import { nodeScript } from '../helpers/node-script.js'

interface Dev {
  child: ChildProcessWithoutNullStreams
  url: string
  apiKey: string
  output: () => string
}

let dev: Dev
let dbPath: string
let client: PusharyClient
let decisionId: string
let answeredId: string
let usedToken: string
let freshToken: string

async function startDev(db: string): Promise<Dev> {
  const child = spawn(
    process.execPath,
    [
      ...nodeScript('src/cli/main.ts'),
      'dev',
      '--port',
      '0',
      '--db',
      db,
      '--public-url',
      'http://127.0.0.1:1',
    ],
    { cwd: process.cwd(), env: { ...process.env, NO_COLOR: '1' } },
  )
  let out = ''
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString('utf8')
  })
  child.stderr.on('data', (chunk: Buffer) => {
    out += chunk.toString('utf8')
  })
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`dev did not start:\n${out}`)), 60_000)
    child.stdout.on('data', () => {
      if (out.includes('Press Ctrl-C to stop.')) {
        clearTimeout(timer)
        resolve()
      }
    })
    child.once('exit', () => reject(new Error(`dev exited early:\n${out}`)))
  })
  const pick = (pattern: RegExp) => pattern.exec(out)?.[1] ?? ''
  return {
    child,
    url: pick(/listening on (http:\/\/127\.0\.0\.1:\d+)/),
    apiKey: pick(/API key\s+(\S+)/),
    output: () => out,
  }
}

/** Every row of every table, in a stable order: the service's whole record. */
async function snapshot(): Promise<string> {
  const db = createClient({ url: `file:${dbPath}` })
  try {
    const tables = await db.execute(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
    )
    const dump: Record<string, unknown[]> = {}
    for (const row of tables.rows) {
      const name = String(row.name)
      const rows = await db.execute(`SELECT * FROM "${name}"`)
      dump[name] = rows.rows.map((r) => JSON.stringify(r)).sort()
    }
    return JSON.stringify(dump)
  } finally {
    db.close()
  }
}

interface Sent {
  status: number
  contentType: string
  body: string
}

async function send(
  method: string,
  path: string,
  options: { body?: BodyInit; key?: string | null; headers?: Record<string, string> } = {},
): Promise<Sent> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...options.headers }
  const key = options.key === undefined ? dev.apiKey : options.key
  if (key !== null) headers.authorization = `Bearer ${key}`
  const response = await fetch(`${dev.url}${path}`, {
    method,
    headers,
    redirect: 'manual',
    ...(options.body === undefined ? {} : { body: options.body }),
  })
  return {
    status: response.status,
    contentType: response.headers.get('content-type') ?? '',
    body: await response.text(),
  }
}

function expectJsonError(sent: Sent, label: string): void {
  expect(sent.status, `${label}: ${sent.body.slice(0, 200)}`).toBeGreaterThanOrEqual(400)
  expect(sent.status, `${label}: ${sent.body.slice(0, 200)}`).toBeLessThan(500)
  expect(sent.contentType, label).toMatch(/application\/json/)
  const parsed = JSON.parse(sent.body) as { error?: unknown }
  expect(typeof parsed.error, label).toBe('string')
}

const API = '/api/v1/server'

beforeAll(async () => {
  dbPath = join(mkdtempSync(join(tmpdir(), 'pushary-hostile-')), 'service.db')
  dev = await startDev(dbPath)
  client = createPusharyClient({ baseUrl: `${dev.url}${API}`, apiKey: dev.apiKey })
  decisionId = (await client.decisions.create({ question: 'Refund 48?', externalId: 'customer_1' }))
    .decisionId
  answeredId = (await client.decisions.create({ question: 'Delete?', externalId: 'customer_1' })).decisionId
  await client.decisions.answer(answeredId, 'no')
  const tokenOf = (link: string) => new URL(link).pathname.split('/').at(-1) as string
  usedToken = tokenOf((await client.enroll('customer_1')).universalLink)
  freshToken = tokenOf((await client.enroll('customer_2')).universalLink)
  expect((await send('POST', `/e/${usedToken}`, { key: null })).status).toBe(303)
}, 120_000)

afterAll(() => {
  dev?.child.kill('SIGTERM')
})

describe('hostile input to the decision service process', () => {
  it('answers every hostile API request with a 4xx JSON error and changes no record', async () => {
    const before = await snapshot()
    const jsonRoutes = ['/decisions', `/decisions/${decisionId}`, '/enroll', '/authorize']
    const cases: [
      string,
      string,
      string,
      { body?: BodyInit; key?: string | null; headers?: Record<string, string> },
    ][] = []
    for (const path of jsonRoutes) {
      cases.push(
        ['malformed JSON', 'POST', path, { body: '{"question": "unterminated' }],
        ['a JSON array', 'POST', path, { body: '[1,2]' }],
        ['JSON null', 'POST', path, { body: 'null' }],
        ['invalid UTF-8 bytes', 'POST', path, { body: new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]) }],
        ['a body over 64 KiB', 'POST', path, { body: JSON.stringify({ question: 'x'.repeat(70 * 1024) }) }],
        ['deep nesting', 'POST', path, { body: `{"a":${'['.repeat(5000)}${']'.repeat(5000)}}` }],
      )
    }
    cases.push(
      ['a numeric question', 'POST', '/decisions', { body: '{"question": 5}' }],
      ['an array question', 'POST', '/decisions', { body: '{"question": ["a"]}' }],
      [
        'a question over 500 characters',
        'POST',
        '/decisions',
        { body: JSON.stringify({ question: 'q'.repeat(501) }) },
      ],
      [
        'a context over 2,000 characters',
        'POST',
        '/decisions',
        { body: JSON.stringify({ question: 'ok?', context: 'c'.repeat(2001) }) },
      ],
      ['a numeric customer ID', 'POST', '/decisions', { body: '{"question": "ok?", "externalId": 17}' }],
      ['a string expiry', 'POST', '/decisions', { body: '{"question": "ok?", "expiresInSeconds": "60"}' }],
      ['a numeric answer', 'POST', `/decisions/${decisionId}`, { body: '{"answer": 1}' }],
      ['an object answer', 'POST', `/decisions/${decisionId}`, { body: '{"answer": {"$ne": 1}}' }],
      [
        'a blank answer (a relayed confirm answer is otherwise kept as given)',
        'POST',
        `/decisions/${decisionId}`,
        { body: '{"answer": "  "}' },
      ],
      ['a replayed answer', 'POST', `/decisions/${answeredId}`, { body: '{"answer": "yes"}' }],
      [
        'an answer to an unknown decision',
        'POST',
        '/decisions/dec_does_not_exist',
        { body: '{"answer": "yes"}' },
      ],
      ['a cancel of an unknown decision', 'DELETE', '/decisions/dec_does_not_exist', {}],
      ['an enrollment for a blank customer', 'POST', '/enroll', { body: '{"externalId": "   "}' }],
      ['an enrollment for a numeric customer', 'POST', '/enroll', { body: '{"externalId": 7}' }],
      ['an authorize without a tool', 'POST', '/authorize', { body: '{"parameters": {}}' }],
      ['a wait that is not a number', 'GET', `/decisions/${decisionId}?wait=abc`, {}],
      ['a limit out of range', 'GET', '/decisions?limit=1e9', {}],
      ['an unknown route', 'GET', `${API}/nope`, {}],
      ['an unknown top-level route', 'GET', '/nope', { key: null }],
      ['PUT on a decision', 'PUT', `/decisions/${decisionId}`, { body: '{}' }],
      ['PATCH on a decision', 'PATCH', `/decisions/${decisionId}`, { body: '{}' }],
      ['DELETE on enroll', 'DELETE', '/enroll', {}],
    )
    const keyCases: [string, string | null, Record<string, string>][] = [
      ['no key', null, {}],
      ['a wrong key', 'pk_wrong.sk_wrong', {}],
      ['the key with a byte more', `${dev.apiKey}x`, {}],
      ['the key truncated', dev.apiKey.slice(0, -1), {}],
      [
        'a Basic header',
        null,
        { authorization: `Basic ${Buffer.from(`${dev.apiKey}:`).toString('base64')}` },
      ],
      ['an empty Bearer', null, { authorization: 'Bearer ' }],
    ]
    const guarded: [string, string, string | undefined][] = [
      ['POST', '/decisions', '{"question": "Forged?"}'],
      ['GET', '/decisions', undefined],
      ['GET', `/decisions/${decisionId}`, undefined],
      ['POST', `/decisions/${decisionId}`, '{"answer": "yes"}'],
      ['DELETE', `/decisions/${decisionId}`, undefined],
      ['POST', '/enroll', '{"externalId": "customer_1"}'],
      ['GET', '/reachability?externalId=customer_1', undefined],
      ['POST', '/authorize', '{"toolName": "refund"}'],
      ['GET', '/webhook-secret', undefined],
      ['POST', '/webhook-secret', undefined],
    ]
    for (const [what, key, headers] of keyCases) {
      for (const [method, path, body] of guarded) {
        cases.push([
          `${what} on ${method} ${path}`,
          method,
          path,
          { key, headers, ...(body ? { body } : {}) },
        ])
      }
    }
    const failures: string[] = []
    for (const [what, method, path, options] of cases) {
      const full = path.startsWith('/api/') || path === '/nope' ? path : `${API}${path}`
      try {
        expectJsonError(await send(method, full, options), `${what} (${method} ${path})`)
      } catch (error) {
        failures.push(error instanceof Error ? error.message.slice(0, 300) : String(error))
      }
    }
    expect(failures).toEqual([])
    // The contract answers a cancel of a settled decision 200 `cancelled: false`; nothing changes.
    const cancel = await send('DELETE', `${API}/decisions/${answeredId}`)
    expect(cancel.status).toBe(200)
    expect(JSON.parse(cancel.body)).toMatchObject({ cancelled: false, status: 'answered' })
    expect(await snapshot()).toBe(before)
    expect(dev.child.exitCode).toBeNull()
    expect((await client.decisions.get(decisionId)).status).toBe('pending')
    expect(dev.output()).not.toMatch(/internal error|Pushary dev server:/)
  }, 120_000)

  // Once a finding of this suite: the service stored "\ud800" as U+FFFD and
  // answered 201. The shared text rule now refuses unpaired surrogates.
  it('refuses a question made of a lone surrogate with a 4xx JSON error and changes nothing', async () => {
    const before = await snapshot()
    const sent = await send('POST', `${API}/decisions`, { body: '{"question": "\\ud800"}' })
    expect(sent.status).toBeGreaterThanOrEqual(400)
    expect(sent.status).toBeLessThan(500)
    expect(JSON.parse(sent.body)).toHaveProperty('error')
    expect(await snapshot()).toBe(before)
  })

  it('refuses replayed and guessed enrollment tokens and forged device cookies without binding a device', async () => {
    const before = await snapshot()
    const guesses = [
      usedToken,
      `${freshToken.slice(0, -1)}${freshToken.endsWith('A') ? 'B' : 'A'}`,
      freshToken.slice(0, -1),
      'A'.repeat(43),
      'x'.repeat(201),
      '..%2F..%2Fetc%2Fpasswd',
      '%00',
    ]
    for (const token of guesses) {
      for (const method of ['GET', 'POST']) {
        const sent = await send(method, `/e/${token}`, { key: null })
        expect(sent.status, `${method} /e/${token.slice(0, 20)}`).toBeGreaterThanOrEqual(400)
        expect(sent.status, `${method} /e/${token.slice(0, 20)}`).toBeLessThan(500)
      }
    }
    // A cross-site post of a valid token is refused before the token is consumed.
    const crossSite = await send('POST', `/e/${freshToken}`, {
      key: null,
      headers: { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' },
    })
    expect(crossSite.status).toBe(403)
    for (const [path, method] of [
      ['/review', 'GET'],
      ['/review/list', 'GET'],
      [`/review/${decisionId}`, 'GET'],
      [`/review/${decisionId}/answer`, 'POST'],
    ] as const) {
      for (const cookie of [undefined, 'pushary_device=forged', `pushary_device=${usedToken}`]) {
        const sent = await send(method, path, {
          key: null,
          headers: {
            ...(cookie ? { cookie } : {}),
            'content-type': 'application/x-www-form-urlencoded',
            'sec-fetch-site': 'same-origin',
          },
          ...(method === 'POST' ? { body: 'answer=yes' } : {}),
        })
        expect(sent.status, `${method} ${path} ${cookie}`).toBeGreaterThanOrEqual(300)
        expect(sent.status, `${method} ${path} ${cookie}`).toBeLessThan(500)
      }
    }
    expect(await snapshot()).toBe(before)
    expect(dev.child.exitCode).toBeNull()
    // The fresh link still works once: nothing above consumed it.
    expect((await send('POST', `/e/${freshToken}`, { key: null })).status).toBe(303)
    expect((await client.decisions.get(decisionId)).status).toBe('pending')
  }, 120_000)
})
