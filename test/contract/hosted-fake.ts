/**
 * A stand-in for the hosted Pushary decision API on a real loopback HTTP
 * server (node:http), speaking only the shapes of the wire contract
 * (`contract-schemas.ts`): every body it sends is checked against those
 * schemas, strictly, before it leaves, so a test passing here cannot lean on
 * a field the hosted API does not send. Unlike the local service it answers
 * errors with a sentence in `error`, counts channels as numbers, sends
 * callbacks only for answers with the hosted body, and honours `wait` on
 * create.
 *
 * Test controls: `answer`, `expire`, `forget`, `requests`, and `oddNext` to
 * make the next responses of one route odd (a 500, an unknown status...).
 */
import { createHmac, randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { z } from 'zod/v4'
import {
  contractAnswerResultSchema,
  contractAuthorizeSchema,
  contractCallbackSchema,
  contractCancelResultSchema,
  contractDecisionListSchema,
  contractDecisionResultSchema,
  contractDecisionSchema,
  contractEnrollSchema,
  contractErrorBodySchema,
  contractReachabilitySchema,
  contractWebhookSecretSchema,
  strictContract,
} from './contract-schemas.js'
import { createHostedPlatform } from './hosted-platform.js'
import {
  decisionBody,
  type HostedCallback,
  type HostedDecision,
  type HostedFake,
  type HostedFakeOptions,
  type HostedRequest,
  type HostedRoute,
  listedBody,
  type OddReplier,
  type OddReply,
  routeOf,
} from './hosted-shapes.js'

export type { HostedDecision, HostedFake, HostedRequest, HostedRoute, OddReply } from './hosted-shapes.js'

import enrollFixtures from './fixtures/e7-enroll.json' with { type: 'json' }
import reachFixtures from './fixtures/e8-reachability.json' with { type: 'json' }
import authorizeFixtures from './fixtures/e9-authorize.json' with { type: 'json' }
import errorFixtures from './fixtures/errors.json' with { type: 'json' }

const HOSTED_404 = errorFixtures['404'].body
const HOSTED_401 = errorFixtures['401'].body
const WAIT_CLAMP_SECONDS = 55

export async function startHostedFake(options: HostedFakeOptions = {}): Promise<HostedFake> {
  const mount = options.mount ?? '/api/v1/server'
  const apiKey =
    options.apiKey ?? `pk_hosted${randomBytes(4).toString('hex')}.sk_${randomBytes(12).toString('hex')}`
  let webhookSecret = `whsec_${randomBytes(16).toString('hex')}`
  const requests: HostedRequest[] = []
  const decisions = new Map<string, HostedDecision>()
  const forgotten = new Set<string>()
  const byKey = new Map<string, string>()
  const callbacks: HostedCallback[] = []
  const odd = new Map<HostedRoute, Array<{ reply: OddReplier; afterHandling: boolean }>>()
  /** Per response: replaces what `send` would write (the after-handling odd replies). */
  const replacements = new WeakMap<ServerResponse, (handled: OddReply) => OddReply>()
  const waiters = new Map<string, Set<() => void>>()
  let pages = 0
  let origin = ''

  const wake = (decisionId: string) => {
    for (const resolve of waiters.get(decisionId) ?? []) resolve()
    waiters.delete(decisionId)
  }

  /** Holds until the decision leaves `pending` or `seconds` passed. */
  const hold = (decision: HostedDecision, seconds: number, res: ServerResponse) =>
    new Promise<void>((resolve) => {
      if (decision.status !== 'pending' || seconds <= 0) return resolve()
      const done = () => {
        clearTimeout(timer)
        waiters.get(decision.decisionId)?.delete(done)
        resolve()
      }
      const timer = setTimeout(done, Math.min(seconds, WAIT_CLAMP_SECONDS) * 1000)
      // The response's close, not the request's: a request closes once its body was read.
      res.once('close', done)
      const set = waiters.get(decision.decisionId) ?? new Set()
      set.add(done)
      waiters.set(decision.decisionId, set)
    })

  const send = (res: ServerResponse, status: number, body: unknown, schema?: z.ZodType) => {
    const replace = replacements.get(res)
    if (replace) {
      replacements.delete(res)
      const reply = replace({ status, body })
      res.writeHead(reply.status, { 'content-type': 'application/json' }).end(JSON.stringify(reply.body))
      return
    }
    if (schema) {
      const checked = schema.safeParse(body)
      if (!checked.success) {
        // The fake must never speak outside the contract: fail the request loudly.
        status = 599
        body = { error: `hosted fake left the contract: ${checked.error.message}` }
      }
    }
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
  }
  const fail = (res: ServerResponse, status: number, body: Record<string, unknown>) =>
    send(res, status, body, contractErrorBodySchema)

  const createBody = (d: HostedDecision, extra: Record<string, unknown>) => ({
    decisionId: d.decisionId,
    status: d.status,
    answered: d.answered,
    value: d.value,
    type: d.type,
    question: d.question,
    pollUrl: `${origin}${mount}/decisions/${d.decisionId}`,
    decisionPageUrl: `${origin}/d/${d.decisionId}`,
    expiresInSeconds: Math.max(0, Math.round((Date.parse(d.expiresAt) - Date.now()) / 1000)),
    ...(d.externalId === null ? {} : { reachable: true, reachableChannels: 2, deviceCount: 1 }),
    ...extra,
  })

  const deliver = async (d: HostedDecision) => {
    if (d.callbackUrl === null || d.value === null) return
    const payload: Record<string, unknown> = {
      correlationId: d.decisionId,
      answer: d.value,
      value: d.value,
      answeredAt: d.answeredAt,
    }
    if (d.context !== null) payload.context = d.context
    contractCallbackSchema.parse(payload)
    const rawBody = JSON.stringify(payload)
    const signature = createHmac('sha256', webhookSecret).update(rawBody).digest('hex')
    for (let attempt = 0; attempt < (options.callbackAttempts ?? 6); attempt++) {
      let respondedWith: number | 'network_error'
      try {
        const response = await fetch(d.callbackUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-pushary-signature': signature },
          body: rawBody,
        })
        await response.arrayBuffer()
        respondedWith = response.status
      } catch {
        respondedWith = 'network_error'
      }
      callbacks.push({ decisionId: d.decisionId, rawBody, signature, respondedWith })
      if (typeof respondedWith === 'number' && respondedWith < 500) return
      await new Promise((resolve) => setTimeout(resolve, 150 * (attempt + 1)))
    }
  }

  const settleAnswer = (d: HostedDecision, value: string) => {
    d.status = 'answered'
    d.answered = true
    d.value = value
    d.answeredAt = new Date().toISOString()
    wake(d.decisionId)
  }

  const lookup = (id: string): HostedDecision | undefined =>
    forgotten.has(id) ? undefined : decisions.get(id)
  const platform = createHostedPlatform(lookup)

  const handle = async (req: IncomingMessage, res: ServerResponse, raw: string) => {
    const url = new URL(req.url ?? '/', 'http://fake')
    if (!url.pathname.startsWith(`${mount}/`)) return fail(res, 404, { error: 'Not found' })
    const path = url.pathname.slice(mount.length)
    const method = req.method ?? 'GET'
    let body: unknown
    try {
      body = raw === '' ? undefined : JSON.parse(raw)
    } catch {
      return fail(res, 400, { error: 'Request body is not valid JSON' })
    }
    const request: HostedRequest = {
      method,
      path,
      route: routeOf(method, path),
      query: Object.fromEntries(url.searchParams),
      authorization: req.headers.authorization,
      body,
    }
    requests.push(request)
    if (req.headers.authorization !== `Bearer ${apiKey}`) return fail(res, 401, HOSTED_401)
    if (request.route === 'unknown') return fail(res, 404, { error: 'Not found' })
    const queued = odd.get(request.route)
    const next = queued?.shift()
    if (next) {
      const make = (handled: OddReply | null) =>
        typeof next.reply === 'function' ? next.reply(request, handled) : next.reply
      if (next.afterHandling) replacements.set(res, make)
      else {
        const reply = make(null)
        return send(res, reply.status, reply.body)
      }
    }
    const input = (body ?? {}) as Record<string, unknown>
    const id = decodeURIComponent(path.split('/')[2] ?? '')
    switch (request.route) {
      case 'create': {
        if (typeof input.question !== 'string' || input.question.trim() === '') {
          return fail(res, 400, { error: 'A question is required.', code: 'invalid_request' })
        }
        const key = typeof input.idempotencyKey === 'string' ? input.idempotencyKey : null
        const existing = key === null ? undefined : lookup(byKey.get(key) ?? '')
        if (existing) return send(res, 200, createBody(existing, { idempotent: true }), strictCreate)
        const lifetime = typeof input.expiresInSeconds === 'number' ? input.expiresInSeconds : 3600
        const decision: HostedDecision = {
          decisionId: `dec_${randomBytes(10).toString('hex')}`,
          status: 'pending',
          answered: false,
          value: null,
          type: input.type === 'select' || input.type === 'input' ? input.type : 'confirm',
          question: input.question,
          options: Array.isArray(input.options) ? (input.options as string[]) : null,
          externalId: typeof input.externalId === 'string' ? input.externalId : null,
          context: typeof input.context === 'string' ? input.context : null,
          createdAt: new Date().toISOString(),
          answeredAt: null,
          expiresAt: new Date(Date.now() + lifetime * 1000).toISOString(),
          callbackUrl: typeof input.callbackUrl === 'string' ? input.callbackUrl : null,
          idempotencyKey: key,
        }
        decisions.set(decision.decisionId, decision)
        if (key !== null) byKey.set(key, decision.decisionId)
        pages++
        if (input.wait === true) {
          const seconds = typeof input.timeoutSeconds === 'number' ? input.timeoutSeconds : WAIT_CLAMP_SECONDS
          await hold(decision, seconds, res)
          const extra = decision.status === 'pending' ? { hint: 'No answer yet: poll pollUrl.' } : {}
          return send(res, 200, createBody(decision, extra), strictCreate)
        }
        return send(res, 200, createBody(decision, {}), strictCreate)
      }
      case 'get': {
        const decision = lookup(id)
        if (!decision) return fail(res, 404, HOSTED_404)
        const wait = Number(request.query.wait ?? 0)
        if (Number.isFinite(wait) && wait > 0) await hold(decision, wait, res)
        // Forgotten while the request was held: the hosted answer is the 404.
        if (!lookup(id)) return fail(res, 404, HOSTED_404)
        return send(res, 200, decisionBody(decision), strictDecision)
      }
      case 'answer': {
        const decision = lookup(id)
        if (!decision) return fail(res, 404, HOSTED_404)
        if (typeof input.answer !== 'string') return fail(res, 400, { error: 'An answer is required.' })
        if (decision.status !== 'pending') {
          return fail(res, 409, { error: `The decision is already ${decision.status}.` })
        }
        settleAnswer(decision, input.answer)
        void deliver(decision)
        return send(
          res,
          200,
          { decisionId: decision.decisionId, status: decision.status, answered: true, value: decision.value },
          strictContract(contractAnswerResultSchema),
        )
      }
      case 'cancel': {
        const decision = lookup(id)
        if (!decision) return fail(res, 404, HOSTED_404)
        const cancelled = decision.status === 'pending'
        if (cancelled) {
          decision.status = 'cancelled'
          wake(decision.decisionId)
        }
        return send(
          res,
          200,
          { decisionId: decision.decisionId, cancelled, status: decision.status },
          strictContract(contractCancelResultSchema),
        )
      }
      case 'list': {
        const limit = Math.max(1, Math.min(100, Number(request.query.limit ?? 50) || 50))
        const offset = request.query.cursor === undefined ? 0 : Number(request.query.cursor.slice(2))
        if (!Number.isInteger(offset) || offset < 0) return fail(res, 400, errorFixtures['400-cursor'].body)
        const all = [...decisions.values()]
          .filter((d) => !forgotten.has(d.decisionId))
          .filter((d) => request.query.externalId === undefined || d.externalId === request.query.externalId)
          .reverse()
        const page = all.slice(offset, offset + limit).map(listedBody)
        const nextCursor = offset + limit < all.length ? `c_${offset + limit}` : null
        return send(res, 200, { decisions: page, nextCursor }, contractDecisionListSchema)
      }
      case 'reachability': {
        const externalId = request.query.externalId ?? ''
        const fixture = externalId === '' ? reachFixtures.unreachable : reachFixtures.push
        return send(res, 200, { ...fixture, externalId }, strictContract(contractReachabilitySchema))
      }
      case 'enroll': {
        if (typeof input.externalId !== 'string')
          return fail(res, 400, { error: 'An externalId is required.' })
        return send(
          res,
          200,
          { ...enrollFixtures.link, externalId: input.externalId },
          strictContract(contractEnrollSchema),
        )
      }
      case 'authorize':
        return send(res, 200, authorizeFixtures['requires-human'], strictContract(contractAuthorizeSchema))
      case 'consume':
        return platform.consume(input, (status, reply, schema) =>
          send(res, status, reply, schema as z.ZodType),
        )
      case 'receipt':
        return platform.receipt(id, input, (status, reply, schema) =>
          send(res, status, reply, schema as z.ZodType),
        )
      case 'keys': {
        const reply = (status: number, body: unknown, schema: unknown) =>
          send(res, status, body, schema as z.ZodType)
        if (method === 'POST') return platform.issueKey(input, reply)
        if (method === 'GET') return platform.listKeys(reply)
        return platform.revokeKey(id, reply)
      }
      case 'webhook-secret':
        if (method === 'POST') webhookSecret = `whsec_${randomBytes(16).toString('hex')}`
        return send(res, 200, { webhookSecret }, strictContract(contractWebhookSecretSchema))
    }
  }

  const strictCreate = strictContract(contractDecisionResultSchema)
  const strictDecision = strictContract(contractDecisionSchema)

  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      handle(req, res, Buffer.concat(chunks).toString('utf8')).catch((error: unknown) => {
        if (!res.headersSent) send(res, 500, { error: `hosted fake failed: ${String(error)}` })
      })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

  return {
    baseUrl: `${origin}${mount}`,
    apiKey,
    get webhookSecret() {
      return webhookSecret
    },
    requests,
    decisions,
    callbacks,
    get pages() {
      return pages
    },
    async answer(decisionId, value) {
      const decision = decisions.get(decisionId)
      if (!decision) throw new Error(`hosted fake: no decision ${decisionId}`)
      if (decision.status !== 'pending') throw new Error(`hosted fake: ${decisionId} is ${decision.status}`)
      settleAnswer(decision, value)
      await deliver(decision)
    },
    expire(decisionId) {
      const decision = decisions.get(decisionId)
      if (!decision) throw new Error(`hosted fake: no decision ${decisionId}`)
      decision.status = 'expired'
      decision.expiresAt = new Date(Date.now() - 1000).toISOString()
      wake(decisionId)
    },
    forget(decisionId) {
      forgotten.add(decisionId)
      wake(decisionId)
    },
    oddNext(route, reply, { count = 1, afterHandling = false } = {}) {
      const queue = odd.get(route) ?? []
      for (let i = 0; i < count; i++) queue.push({ reply, afterHandling })
      odd.set(route, queue)
    },
    count(route) {
      return requests.filter((request) => request.route === route).length
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const id of waiters.keys()) wake(id)
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
