import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createPusharyClient } from '../../src/pushary/client.js'
import { isPusharyApiError } from '../../src/pushary/errors.js'
import { isApproved } from '../../src/pushary/question.js'
import { createPusharyDevServer } from '../../src/server/dev-server.js'
import { PusharyDevServerError } from '../../src/server/dev-server-error.js'
import { rejection } from '../helpers/errors.js'
import { serviceFixture, tempDir } from './service-harness.js'

const { start } = serviceFixture('api')

/**
 * Opens an enrolment link the way a phone does (the page, then the
 * "Link this phone" form post) and returns the device cookie, if any.
 */
async function openEnrollmentLink(link: string): Promise<string | null> {
  const shown = await fetch(link, { redirect: 'manual' })
  await shown.body?.cancel()
  const response = await fetch(link, { method: 'POST', redirect: 'manual' })
  await response.body?.cancel()
  return response.headers.get('set-cookie')
}

describe('API key', () => {
  it('refuses every API route with 401 when the bearer key is missing or wrong', async () => {
    const h = await start()
    const routes: Array<[string, string]> = [
      ['POST', '/decisions'],
      ['GET', '/decisions'],
      ['GET', '/decisions/dec_x'],
      ['POST', '/decisions/dec_x'],
      ['DELETE', '/decisions/dec_x'],
      ['POST', '/enroll'],
      ['GET', '/reachability?externalId=a'],
      ['GET', '/webhook-secret'],
      ['POST', '/webhook-secret'],
      ['POST', '/authorize'],
    ]
    for (const [method, path] of routes) {
      const missing = await h.api(method, path, { question: 'x' }, { key: null })
      expect(missing.status, `${method} ${path} without key`).toBe(401)
      const wrong = await h.api(method, path, { question: 'x' }, { key: `${h.server.apiKey}x` })
      expect(wrong.status, `${method} ${path} with a wrong key`).toBe(401)
    }
    const wrongClient = createPusharyClient({ apiKey: 'pk_other.sk_other', baseUrl: h.server.baseUrl })
    const refused = await rejection(wrongClient.decisions.list())
    expect(isPusharyApiError(refused) && refused.isAuthError).toBe(true)
    expect((await h.client.decisions.list()).decisions).toEqual([])
  })

  it('uses the apiKey option instead of the stored key when one is given', async () => {
    const h = await start({ apiKey: 'pk_custom.sk_secret' })
    expect(h.server.apiKey).toBe('pk_custom.sk_secret')
    expect((await h.api('GET', '/decisions')).status).toBe(200)
  })
})

describe('decisions', () => {
  it('creates a decision and reads it back with every field echoed', async () => {
    const h = await start()
    const created = await h.client.decisions.create({
      question: 'Refund EUR 48 to order 1042?',
      externalId: ' customer 42 ',
      context: 'order 1042',
      agentName: 'support',
      toolName: 'refund.create',
      toolTarget: 'order_1042',
      actor: 'agent:support',
      environment: 'test',
      parameters: { amountMinor: 4800, currency: 'EUR', partial: false },
      presentation: {
        label: 'Refund',
        effect: 'Money goes back to the customer',
        changes: [
          { parameter: 'amountMinor', label: 'Amount', format: { kind: 'currency', currency: 'EUR' } },
        ],
        risk: 'medium',
      },
    })
    expect(created).toMatchObject({ status: 'pending', answered: false, type: 'confirm', reachable: false })
    expect(created.decisionPageUrl).toBe(`${h.server.publicUrl}/review/${created.decisionId}`)
    expect(created.pollUrl).toBe(`${h.server.baseUrl}/decisions/${created.decisionId}`)
    expect(created.expiresInSeconds).toBe(3600)

    const read = await h.client.decisions.get(created.decisionId)
    expect(read).toMatchObject({
      decisionId: created.decisionId,
      status: 'pending',
      answered: false,
      value: null,
      question: 'Refund EUR 48 to order 1042?',
      externalId: ' customer 42 ',
      context: 'order 1042',
      toolName: 'refund.create',
      agentName: 'support',
      parameters: { amountMinor: 4800, currency: 'EUR', partial: false },
      presentation: { label: 'Refund', risk: 'medium' },
      answeredAt: null,
    })
    expect(Date.parse(read.expiresAt ?? '') - Date.parse(read.createdAt ?? '')).toBe(3_600_000)
  })

  it('returns the existing decision for a repeated idempotency key, marked idempotent', async () => {
    const h = await start()
    const first = await h.client.decisions.create({
      question: 'Deploy?',
      idempotencyKey: 'run-1:step-deploy',
    })
    const second = await h.client.decisions.create({
      question: 'Deploy?',
      idempotencyKey: 'run-1:step-deploy',
    })
    const other = await h.client.decisions.create({
      question: 'Deploy?',
      idempotencyKey: 'run-2:step-deploy',
    })
    expect(first.idempotent).toBeUndefined()
    expect(second).toMatchObject({ decisionId: first.decisionId, idempotent: true })
    expect(other.decisionId).not.toBe(first.decisionId)
    const raw = await h.api('POST', '/decisions', {
      question: 'Deploy?',
      idempotencyKey: 'run-1:step-deploy',
    })
    expect(raw.status).toBe(200)
    expect((await h.client.decisions.list()).decisions).toHaveLength(2)
  })

  it('stores every create of a burst once, repeated keys collapsing onto one decision, committed before it is answered', async () => {
    const h = await start()
    const keyed = Array.from({ length: 48 }, (_, index) => `burst-${index % 24}`)
    const results = await Promise.all([
      ...keyed.map((idempotencyKey) => h.client.decisions.create({ question: 'Deploy?', idempotencyKey })),
      ...Array.from({ length: 8 }, () => h.client.decisions.create({ question: 'Ship?' })),
    ])
    const byKey = new Map<string, typeof results>()
    for (const [index, key] of keyed.entries()) byKey.set(key, [...(byKey.get(key) ?? []), results[index]!])
    for (const [, pair] of byKey) {
      expect(pair[0]?.decisionId).toBe(pair[1]?.decisionId)
      expect(pair.filter((result) => result.idempotent === true)).toHaveLength(1)
    }
    const ids = new Set(results.map((result) => result.decisionId))
    expect(ids.size).toBe(24 + 8)
    // Every answered create is committed: a second service on the same file reads them all.
    const other = await createPusharyDevServer({ dbPath: h.dbPath, port: 0, onError: () => {} })
    try {
      const client = createPusharyClient({ apiKey: other.apiKey, baseUrl: other.baseUrl })
      const stored = await client.decisions.list({ limit: 100 })
      expect(new Set(stored.decisions.map((decision) => decision.decisionId))).toEqual(ids)
    } finally {
      await other.close()
    }
  })

  it('relays an answer and refuses a second one with 409', async () => {
    const h = await start()
    const { decisionId } = await h.client.decisions.create({ question: 'Ship it?' })
    expect(await h.client.decisions.answer(decisionId, 'yes')).toEqual({
      decisionId,
      status: 'answered',
      answered: true,
      value: 'yes',
    })
    const again = await rejection(h.client.decisions.answer(decisionId, 'no'))
    expect(isPusharyApiError(again) && again.status).toBe(409)
    expect(isPusharyApiError(again) && again.code).toBe('already_answered')
    const read = await h.client.decisions.get(decisionId)
    expect(read).toMatchObject({ status: 'answered', value: 'yes', answered: true })
    expect(read.answeredAt).not.toBeNull()
  })

  it('validates an answer against the decision type and options', async () => {
    const h = await start()
    const confirm = await h.client.decisions.create({ question: 'Ship it?' })
    const select = await h.client.decisions.create({
      question: 'Which plan?',
      type: 'select',
      options: ['basic', 'pro'],
    })
    const input = await h.client.decisions.create({ question: 'Why?', type: 'input' })
    for (const [id, answer] of [
      [confirm.decisionId, '  '],
      [confirm.decisionId, 'y'.repeat(2001)],
      [select.decisionId, 'enterprise'],
      [input.decisionId, '   '],
    ] as const) {
      const refused = await h.api('POST', `/decisions/${id}`, { answer })
      expect(refused.status, answer).toBe(400)
      expect(refused.json.field).toBe('answer')
    }
    expect((await h.api('POST', `/decisions/${confirm.decisionId}`, {})).json.field).toBe('answer')
    expect((await h.api('POST', `/decisions/${confirm.decisionId}`, { answer: 1 })).json.field).toBe('answer')
    expect((await h.client.decisions.answer(select.decisionId, 'pro')).value).toBe('pro')
    expect((await h.client.decisions.answer(input.decisionId, 'Because the customer asked')).value).toBe(
      'Because the customer asked',
    )
    expect((await h.client.decisions.get(confirm.decisionId)).status).toBe('pending')
    // A relayed confirm answer is recorded exactly as given; reading it is the client's rule.
    const relayed = await h.client.decisions.answer(confirm.decisionId, 'Maybe later')
    expect(relayed).toMatchObject({ status: 'answered', value: 'Maybe later' })
    expect(isApproved(await h.client.decisions.get(confirm.decisionId))).toBe(false)
  })

  it('cancels a pending decision, and an answer after cancelling gets 409', async () => {
    const h = await start()
    const { decisionId } = await h.client.decisions.create({ question: 'Delete the workspace?' })
    expect(await h.client.decisions.cancel(decisionId)).toEqual({
      decisionId,
      cancelled: true,
      status: 'cancelled',
    })
    expect(await h.client.decisions.cancel(decisionId)).toEqual({
      decisionId,
      cancelled: false,
      status: 'cancelled',
    })
    const late = await rejection(h.client.decisions.answer(decisionId, 'yes'))
    expect(isPusharyApiError(late) && [late.status, late.code]).toEqual([409, 'cancelled'])
    expect(await h.client.decisions.get(decisionId)).toMatchObject({ status: 'cancelled', value: null })
  })

  it('answers 404 not_found for an unknown decision on every decision route', async () => {
    const h = await start()
    for (const method of ['GET', 'POST', 'DELETE']) {
      const response = await h.api(
        method,
        '/decisions/dec_missing',
        method === 'POST' ? { answer: 'yes' } : undefined,
      )
      expect(response.status, method).toBe(404)
      expect(response.json.code).toBe('not_found')
    }
    expect((await h.api('GET', '/decisions/dec_missing/deliveries')).status).toBe(404)
    expect((await h.api('GET', '/no/such/route')).json.code).toBe('not_found')
  })

  it('lists decisions newest first with externalId and status filters and a cursor', async () => {
    const h = await start()
    const ids: string[] = []
    for (let i = 0; i < 5; i++) {
      const created = await h.client.decisions.create({
        question: `Q${i}`,
        externalId: i % 2 === 0 ? 'even' : 'odd',
      })
      ids.push(created.decisionId)
    }
    await h.client.decisions.answer(ids[0] ?? '', 'yes')

    const page1 = await h.client.decisions.list({ limit: 2 })
    expect(page1.decisions.map((d) => d.decisionId)).toEqual([ids[4], ids[3]])
    expect(page1.nextCursor).not.toBeNull()
    const page2 = await h.client.decisions.list({ limit: 2, cursor: page1.nextCursor ?? '' })
    expect(page2.decisions.map((d) => d.decisionId)).toEqual([ids[2], ids[1]])
    const page3 = await h.client.decisions.list({ limit: 2, cursor: page2.nextCursor ?? '' })
    expect(page3.decisions.map((d) => d.decisionId)).toEqual([ids[0]])
    expect(page3.nextCursor).toBeNull()

    const even = await h.client.decisions.list({ externalId: 'even' })
    expect(even.decisions.map((d) => d.decisionId)).toEqual([ids[4], ids[2], ids[0]])
    const evenPending = await h.client.decisions.list({ externalId: 'even', status: 'pending' })
    expect(evenPending.decisions.map((d) => d.decisionId)).toEqual([ids[4], ids[2]])
    const future = await h.client.decisions.list({ from: new Date(Date.now() + 60_000).toISOString() })
    expect(future.decisions).toEqual([])
    const past = await h.client.decisions.list({ to: new Date(Date.now() - 60_000).toISOString() })
    expect(past.decisions).toEqual([])

    for (const query of [
      'limit=0',
      'limit=abc',
      'cursor=nope',
      'status=done',
      'from=yesterday',
      'externalId=',
    ]) {
      const refused = await h.api('GET', `/decisions?${query}`)
      expect(refused.status, query).toBe(400)
      expect(refused.json.field, query).toBe(query.split('=')[0])
    }
  })
})

describe('enrolment and reachability', () => {
  it('binds a device through a single-use link and reports push reachability', async () => {
    const h = await start({ publicUrl: 'http://127.0.0.1:1/' })
    const before = await h.client.reachability('customer-7')
    expect(before).toMatchObject({ deliverability: 'fallback', reachable: false, deviceCount: 0 })

    const enrolment = await h.client.enroll('customer-7')
    expect(enrolment.universalLink).toBe(`http://127.0.0.1:1/e/${enrolment.token}`)
    expect(enrolment.deepLink).toContain(enrolment.token)
    expect(enrolment.expiresInSeconds).toBeGreaterThan(0)

    const local = `${h.server.url}/e/${enrolment.token}`
    const cookie = await openEnrollmentLink(local)
    expect(cookie).toMatch(/HttpOnly/i)
    expect(await openEnrollmentLink(local)).toBeNull()

    const after = await h.client.reachability('customer-7')
    expect(after).toMatchObject({ deliverability: 'push', reachable: true, deviceCount: 1 })
    expect((await h.client.reachability('customer-8')).deviceCount).toBe(0)

    const created = await h.client.decisions.create({ question: 'Approve?', externalId: 'customer-7' })
    expect(created).toMatchObject({ reachable: true, deviceCount: 1 })
  })

  it('refuses an enrolment link opened after it expired', async () => {
    let clock = Date.parse('2030-01-01T00:00:00Z')
    const h = await start({ now: () => clock })
    const enrolment = await h.client.enroll('late-customer')
    clock += 16 * 60 * 1000
    expect(await openEnrollmentLink(`${h.server.url}/e/${enrolment.token}`)).toBeNull()
    expect((await h.client.reachability('late-customer')).deviceCount).toBe(0)
  })

  it('reports unreachable when no end-user is named and 400 for a blank or oversized one', async () => {
    const h = await start()
    const none = await h.api('GET', '/reachability')
    expect(none).toMatchObject({ status: 200, json: { deliverability: 'unreachable', reachable: false } })
    for (const externalId of ['   ', 'x'.repeat(257)]) {
      const refused = await h.api('GET', `/reachability?externalId=${encodeURIComponent(externalId)}`)
      expect(refused.status).toBe(400)
      expect(refused.json.field).toBe('externalId')
      const enroll = await h.api('POST', '/enroll', { externalId })
      expect([enroll.status, enroll.json.field]).toEqual([400, 'externalId'])
    }
  })

  it('refuses requireReachable with 409 while nobody is enrolled, and creates once someone is', async () => {
    const h = await start()
    const refused = await rejection(
      h.client.decisions.create({ question: 'Pay?', externalId: 'payer', requireReachable: true }),
    )
    expect(isPusharyApiError(refused) && [refused.status, refused.code]).toEqual([409, 'unreachable'])
    expect((await h.client.decisions.list()).decisions).toHaveLength(0)
    const noTarget = await h.api('POST', '/decisions', { question: 'Pay?', requireReachable: true })
    expect(noTarget.status).toBe(409)

    const { token } = await h.client.enroll('payer')
    await openEnrollmentLink(`${h.server.url}/e/${token}`)
    const created = await h.client.decisions.create({
      question: 'Pay?',
      externalId: 'payer',
      requireReachable: true,
    })
    expect(created).toMatchObject({ status: 'pending', reachable: true, deviceCount: 1 })
  })
})

describe('webhook secret', () => {
  it('returns the printed secret and rotates it on POST', async () => {
    const h = await start()
    const initial = await h.client.webhookSecret.get()
    expect(initial.webhookSecret).toBe(h.server.webhookSecret)
    const rotated = await h.client.webhookSecret.rotate()
    expect(rotated.webhookSecret).not.toBe(initial.webhookSecret)
    expect((await h.client.webhookSecret.get()).webhookSecret).toBe(rotated.webhookSecret)
    expect(h.server.webhookSecret).toBe(rotated.webhookSecret)
  })
})

describe('authorize', () => {
  it('applies allow and deny rules from the policy file and escalates anything no rule names', async () => {
    const dir = tempDir('policy')
    const policyPath = join(dir, 'policy.json')
    writeFileSync(
      policyPath,
      JSON.stringify({
        rules: [
          {
            name: 'small-refunds',
            toolName: 'refund.create',
            effect: 'allow',
            conditions: [{ parameter: 'amountMinor', operator: 'lte', value: 5000 }],
          },
          {
            name: 'no-refunds-in-prod',
            toolName: 'refund.create',
            effect: 'deny',
            conditions: [{ parameter: 'env', operator: 'eq', value: 'prod' }],
          },
          { toolName: 'db.drop', effect: 'deny' },
        ],
      }),
    )
    const h = await start({ policyPath })
    expect(
      await h.client.authorize({ toolName: 'refund.create', parameters: { amountMinor: 4800 } }),
    ).toMatchObject({
      verdict: 'allow',
      policy: 'small-refunds',
      reason: 'Allowed by policy rule small-refunds.',
    })
    const denied = await h.client.authorize({
      toolName: 'refund.create',
      parameters: { amountMinor: 4800, env: 'prod' },
    })
    expect(denied).toMatchObject({ verdict: 'deny', policy: 'no-refunds-in-prod' })
    expect(denied.authorizationId).toMatch(/^auth_/)
    expect((await h.client.authorize({ toolName: 'db.drop' })).verdict).toBe('deny')
    const big = await h.client.authorize({ toolName: 'refund.create', parameters: { amountMinor: 9000 } })
    expect(big).toMatchObject({ verdict: 'requires_human', policy: null, authorizationId: null })
    expect((await h.client.authorize({ toolName: 'refund.create' })).verdict).toBe('requires_human')
    expect((await h.client.authorize({ toolName: 'deploy' })).verdict).toBe('requires_human')
    const refused = await h.api('POST', '/authorize', { parameters: {} })
    expect([refused.status, refused.json.field]).toEqual([400, 'toolName'])
  })

  it('escalates every action when no policy file is given', async () => {
    const h = await start()
    expect((await h.client.authorize({ toolName: 'refund.create' })).verdict).toBe('requires_human')
  })

  it('refuses to start with a policy file that is not valid, naming the bad entry', async () => {
    const dir = tempDir('bad-policy')
    const policyPath = join(dir, 'policy.json')
    writeFileSync(policyPath, JSON.stringify({ rules: [{ toolName: 'x', effect: 'maybe' }] }))
    const error = await rejection(
      createPusharyDevServer({ dbPath: join(dir, 'db.sqlite'), port: 0, policyPath }),
    )
    expect(error).toBeInstanceOf(PusharyDevServerError)
    expect(error).toMatchObject({ code: 'invalid_policy', field: 'policyPath:rules.0.effect' })
    writeFileSync(policyPath, '{ nope')
    const notJson = await rejection(createPusharyDevServer({ dbPath: join(dir, 'db.sqlite'), policyPath }))
    expect(notJson).toMatchObject({ code: 'invalid_policy', field: 'policyPath' })
  })
})

describe('options', () => {
  it('refuses bad options with a typed error naming the option', async () => {
    const dir = tempDir('options')
    for (const [options, field] of [
      [{ port: -1 }, 'port'],
      [{ port: 70_000 }, 'port'],
      [{ publicUrl: 'ftp://x' }, 'publicUrl'],
      [{ apiKey: 'no-dot' }, 'apiKey'],
      [{ host: '' }, 'host'],
    ] as const) {
      const error = await rejection(createPusharyDevServer({ ...options, dbPath: join(dir, 'db.sqlite') }))
      expect(error, field).toBeInstanceOf(PusharyDevServerError)
      expect(error).toMatchObject({ code: 'invalid_option', field })
    }
  })
})
