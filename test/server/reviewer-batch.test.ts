/**
 * The card in words and the batch answer route: pure rendering checks, and
 * `POST /review/batch/answer` on the real dev server over loopback with an
 * enrolled device's cookie.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SIGNATURE_HEADER, verifyWebhookSignature } from '../../src/pushary/callbacks.js'
import { createPusharyClient, type PusharyClient } from '../../src/pushary/client.js'
import { parameterLabel, readableParameters } from '../../src/pushary/readable-input.js'
import { createPusharyDevServer, type PusharyDevServer } from '../../src/server/dev-server.js'
import { renderDecisionCard, renderDecisionList } from '../../src/server/reviewer/render.js'
import type { StoredDecision } from '../../src/server/service-types.js'
import { batchGroupKey } from '../../src/steps/workflow-binding.js'

function decision(overrides: Partial<StoredDecision>): StoredDecision {
  return {
    decisionId: 'd_1',
    type: 'confirm',
    question: 'Ship it?',
    options: null,
    placeholder: null,
    context: null,
    externalId: 'cust_1',
    agentName: null,
    toolName: null,
    toolTarget: null,
    actor: null,
    environment: null,
    presentation: null,
    parameters: null,
    callbackUrl: null,
    status: 'pending',
    createdAt: '2030-01-01T00:00:00.000Z',
    answeredAt: null,
    expiresAt: null,
    value: null,
    answerSource: null,
    ...overrides,
  }
}

const GROUP = batchGroupKey({ workflowId: 'wf', runId: 'run-1', stepId: 'approve' })
const batchContext = (item: number, group = GROUP) =>
  JSON.stringify({ pushary: 'workflow-step', workflowId: 'item', batch: group, batchItem: item })

describe('the card in words', () => {
  it('labels the source from the binding context instead of calling every card "Agent"', () => {
    const label = (overrides: Partial<StoredDecision>) =>
      /<p class="meta"><span class="agent">([^<]+)<\/span>/.exec(
        renderDecisionCard(decision(overrides), { csrf: 't', index: 1 }).value,
      )?.[1]
    expect(label({ context: JSON.stringify({ pushary: 'workflow-step', workflowId: 'refund' }) })).toBe(
      'Workflow',
    )
    expect(
      label({ context: JSON.stringify({ pushary: 'workflow-step', workflowId: 'pushary-agent-review' }) }),
    ).toBe('Agent')
    expect(label({ context: batchContext(4) })).toBe('Batch item 5')
    expect(label({ context: 'order 7, free text' })).toBe('Application')
    expect(label({ agentName: 'Support agent' })).toBe('Agent')
  })

  it('lists every parameter the presentation does not show, in words, and folds a long value without cutting it', () => {
    const long = 'x'.repeat(150)
    const card = renderDecisionCard(
      decision({
        toolName: 'refund.create',
        parameters: { amountMinor: 4800, 'order.lines[0].sku': 'MUG-1', note: long },
        presentation: {
          label: 'Refund',
          effect: 'Money goes back',
          changes: [
            { parameter: 'amountMinor', label: 'Amount', format: { kind: 'currency', currency: 'EUR' } },
          ],
        },
      }),
      { csrf: 't', index: 1 },
    ).value
    expect(card).toContain('Input of refund.create')
    expect(card).toContain('<dt>Order › Lines › 1 › Sku</dt><dd>MUG-1</dd>')
    expect(card).not.toContain('<dt>Amount minor</dt>')
    expect(card).toContain('<details class="fold">')
    expect(card).toContain(`<p class="full">${long}</p>`)
  })

  it('turns nested tool input into path-keyed parameters, all or nothing', () => {
    expect(readableParameters({ order: { id: 'o1', lines: [{ qty: 2 }] }, rush: false, memo: null })).toEqual(
      {
        'order.id': 'o1',
        'order.lines[0].qty': 2,
        rush: false,
        memo: 'null',
      },
    )
    expect(readableParameters({ body: 'y'.repeat(201) })).toBeUndefined()
    expect(readableParameters({ rows: Array.from({ length: 33 }, (_, index) => index) })).toBeUndefined()
    expect(readableParameters({})).toEqual({ input: '{}' })
    expect(readableParameters(undefined)).toBeUndefined()
    expect(parameterLabel('invoice.lines[0].unitPrice')).toBe('Invoice › Lines › 1 › Unit price')
    expect(parameterLabel('amount_minor')).toBe('Amount minor')
  })

  it('draws two or more pending items of one batch as one card and a lone item as its own card', () => {
    const items = [0, 1, 2].map((item) =>
      decision({ decisionId: `d_${item}`, question: `Pay invoice ${item}?`, context: batchContext(item) }),
    )
    const list = renderDecisionList([...items].reverse(), 't').value
    expect(list.match(/<article class="decision batch"/g)).toHaveLength(1)
    expect(list).toContain('Approve all 3')
    expect(list.indexOf('Pay invoice 0?')).toBeLessThan(list.indexOf('Pay invoice 2?'))
    for (const item of items) expect(list).toContain(`name="decisionId" value="${item.decisionId}"`)
    const lone = renderDecisionList([items[0] as StoredDecision], 't').value
    expect(lone).not.toContain('Approve all')
  })
})

describe('POST /review/batch/answer on the real dev server', () => {
  let dir: string
  let server: PusharyDevServer
  let client: PusharyClient
  let receiver: Server
  let callbackUrl: string
  const callbacks: Array<{ correlationId: string; answer: string }> = []

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'pushary-reviewer-batch-'))
    server = await createPusharyDevServer({
      dbPath: join(dir, 'dev.db'),
      port: 0,
      callbackAddresses: { allowLoopback: true },
    })
    client = createPusharyClient({ baseUrl: server.baseUrl, apiKey: server.apiKey })
    receiver = createServer((request, response) => {
      const chunks: Buffer[] = []
      request.on('data', (chunk: Buffer) => chunks.push(chunk))
      request.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8')
        const signature = request.headers[SIGNATURE_HEADER]
        if (
          verifyWebhookSignature(raw, typeof signature === 'string' ? signature : null, server.webhookSecret)
        ) {
          callbacks.push(JSON.parse(raw) as { correlationId: string; answer: string })
        }
        response.writeHead(200).end('ok')
      })
    })
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
    callbackUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/callback`
  })

  afterAll(async () => {
    receiver?.closeAllConnections()
    await new Promise((resolve) => receiver?.close(resolve))
    await server?.close()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  /** Enrols a device; call after its customer has a pending decision (the page's forms carry the CSRF token). */
  async function enroll(externalId: string): Promise<{ cookie: string; csrf: string }> {
    const { universalLink } = await client.enroll(externalId)
    const linked = await fetch(universalLink, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: '',
    })
    const cookie = (linked.headers.get('set-cookie') ?? '').split(';')[0] ?? ''
    const page = await (await fetch(`${server.url}/review`, { headers: { cookie } })).text()
    const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1]
    if (csrf === undefined) throw new Error('no answer form on the review page')
    return { cookie, csrf }
  }

  async function ask(externalId: string, context: string, question = 'Pay it?'): Promise<string> {
    return (await client.decisions.create({ externalId, question, context, callbackUrl })).decisionId
  }

  function post(
    device: { cookie: string; csrf: string },
    body: { answer: string; group: string; ids: string[] },
    headers: Record<string, string> = {},
  ): Promise<Response> {
    const form = new URLSearchParams({ csrf: device.csrf, answer: body.answer, group: body.group })
    for (const id of body.ids) form.append('decisionId', id)
    return fetch(`${server.url}/review/batch/answer`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        cookie: device.cookie,
        accept: 'application/json',
        'content-type': 'application/x-www-form-urlencoded',
        ...headers,
      },
      body: form.toString(),
    })
  }

  it('refuses the whole post before writing anything when one listed item is not an item of that batch', async () => {
    const ids = [await ask('cust_batch_a', batchContext(0)), await ask('cust_batch_a', batchContext(1))]
    const plain = await ask('cust_batch_a', 'free text')
    const foreign = await ask('cust_batch_b', batchContext(2))
    const device = await enroll('cust_batch_a')
    const other = await enroll('cust_batch_b')
    const otherGroup = await ask(
      'cust_batch_a',
      batchContext(0, batchGroupKey({ workflowId: 'wf', runId: 'run-2', stepId: 'approve' })),
    )
    const cases: Array<[string, Promise<Response>, number]> = [
      ['plain decision', post(device, { answer: 'yes', group: GROUP, ids: [...ids, plain] }), 400],
      ['another batch', post(device, { answer: 'yes', group: GROUP, ids: [...ids, otherGroup] }), 400],
      ['another customer', post(device, { answer: 'yes', group: GROUP, ids: [...ids, foreign] }), 403],
      ['unknown id', post(device, { answer: 'yes', group: GROUP, ids: [...ids, 'dec_nope'] }), 404],
      ['duplicate id', post(device, { answer: 'yes', group: GROUP, ids: [ids[0] as string, ...ids] }), 400],
      ['not yes/no', post(device, { answer: 'maybe', group: GROUP, ids }), 400],
      ['no ids', post(device, { answer: 'yes', group: GROUP, ids: [] }), 400],
      [
        'cross-site',
        post(device, { answer: 'yes', group: GROUP, ids }, { 'sec-fetch-site': 'cross-site' }),
        403,
      ],
      ['wrong csrf', post({ ...device, csrf: `${other.csrf}x` }, { answer: 'yes', group: GROUP, ids }), 403],
    ]
    for (const [name, response, status] of cases) {
      expect([name, (await response).status]).toEqual([name, status])
    }
    for (const id of [...ids, plain, foreign, otherGroup]) {
      expect(await client.decisions.get(id)).toMatchObject({ status: 'pending' })
    }
  })

  it('answers exactly the listed items once; a second post records nothing more', async () => {
    const ids = [await ask('cust_batch_c', batchContext(0)), await ask('cust_batch_c', batchContext(1))]
    const device = await enroll('cust_batch_c')
    const unlisted = await ask('cust_batch_c', batchContext(2))
    const first = await post(device, { answer: 'no', group: GROUP, ids })
    expect(first.status).toBe(200)
    expect(await first.json()).toMatchObject({ status: 'answered', message: 'Denied all 2 items.' })
    for (const id of ids)
      expect(await client.decisions.get(id)).toMatchObject({ status: 'answered', value: 'no' })
    expect(await client.decisions.get(unlisted)).toMatchObject({ status: 'pending' })
    const again = await post(device, { answer: 'yes', group: GROUP, ids })
    expect(again.status).toBe(409)
    expect(await again.json()).toMatchObject({
      status: 'partly_answered',
      message: expect.stringContaining('0 of 2'),
    })
    for (const id of ids) expect(await client.decisions.get(id)).toMatchObject({ value: 'no' })
    // Each listed item got its own signed callback, exactly once; the unlisted one none.
    const deadline = Date.now() + 15_000
    const mine = () => callbacks.filter((callback) => [...ids, unlisted].includes(callback.correlationId))
    while (mine().length < ids.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    expect(
      mine()
        .map((callback) => [callback.correlationId, callback.answer])
        .sort(),
    ).toEqual(ids.map((id) => [id, 'no']).sort())
  })
})
