import { randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/** One request as the service received it. */
export interface ReceivedRequest {
  method: string
  path: string
  query: Record<string, string>
  headers: IncomingMessage['headers']
  body: unknown
}

/** What an override tells the service to do instead of its normal handling. */
export type OverrideReply =
  | { kind: 'reply'; status: number; body: string; contentType?: string }
  | { kind: 'hang' }
  | { kind: 'stall-body'; status: number }

interface StoredDecision {
  decisionId: string
  status: 'pending' | 'answered' | 'expired' | 'cancelled'
  answered: boolean
  value: string | null
  type: 'confirm' | 'select' | 'input'
  question: string
  options: string[] | null
  externalId: string | null
  context: string | null
  createdAt: string
  answeredAt: string | null
  expiresAt: string | null
}

/**
 * A tiny in-test decision service on 127.0.0.1 speaking the section-1 HTTP
 * contract: idempotent create, long-poll GET, answer, cancel, list, enroll,
 * reachability, authorize and webhook secrets. It is a collaborator for the
 * client tests, not a model of the real service's every rule.
 */
export interface FakeDecisionService {
  baseUrl: string
  apiKey: string
  requests: ReceivedRequest[]
  decisions: Map<string, StoredDecision>
  /** Called for each request before normal handling; return a reply to take over. */
  override: ((request: ReceivedRequest) => OverrideReply | undefined) | undefined
  /** Answers a decision as the person would, releasing any held long-poll. */
  answer(decisionId: string, value: string): void
  /** Resolves once the service has received a request matching the predicate. */
  waitForRequest(predicate: (request: ReceivedRequest) => boolean): Promise<ReceivedRequest>
  close(): Promise<void>
}

export async function startFakeDecisionService(apiKey = 'pk_test.sk_secret'): Promise<FakeDecisionService> {
  const requests: ReceivedRequest[] = []
  const decisions = new Map<string, StoredDecision>()
  const byKey = new Map<string, string>()
  const holders = new Map<string, Set<() => void>>()
  const watchers = new Set<{
    predicate: (r: ReceivedRequest) => boolean
    resolve: (r: ReceivedRequest) => void
  }>()
  let webhookSecret = `whsec_${randomUUID()}`

  const release = (decisionId: string) => {
    for (const wake of holders.get(decisionId) ?? []) wake()
    holders.delete(decisionId)
  }

  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' })
    res.end(JSON.stringify(body))
  }

  const handle = (received: ReceivedRequest, res: ServerResponse) => {
    const override = service.override?.(received)
    if (override?.kind === 'hang') return
    if (override?.kind === 'stall-body') {
      res.writeHead(override.status, { 'content-type': 'application/json' })
      res.write('{"decisionId":')
      return
    }
    if (override?.kind === 'reply') {
      res.writeHead(override.status, { 'content-type': override.contentType ?? 'application/json' })
      res.end(override.body)
      return
    }
    if (received.headers.authorization !== `Bearer ${apiKey}`)
      return json(res, 401, { error: 'Invalid or missing API key', code: 'unauthorized' })

    const body = (received.body ?? {}) as Record<string, unknown>
    const match = /^\/decisions\/([^/]+)$/.exec(received.path)
    const decisionId = match ? decodeURIComponent(match[1] ?? '') : undefined

    if (received.method === 'POST' && received.path === '/decisions') {
      const key = typeof body.idempotencyKey === 'string' ? body.idempotencyKey : undefined
      const existing = key ? decisions.get(byKey.get(key) ?? '') : undefined
      if (existing) return json(res, 200, { ...existing, idempotent: true })
      const decision: StoredDecision = {
        decisionId: `dec_${randomUUID()}`,
        status: 'pending',
        answered: false,
        value: null,
        type: (body.type as StoredDecision['type']) ?? 'confirm',
        question: String(body.question),
        options: Array.isArray(body.options) ? (body.options as string[]) : null,
        externalId: typeof body.externalId === 'string' ? body.externalId : null,
        context: typeof body.context === 'string' ? body.context : null,
        createdAt: new Date().toISOString(),
        answeredAt: null,
        expiresAt: null,
      }
      decisions.set(decision.decisionId, decision)
      if (key) byKey.set(key, decision.decisionId)
      return json(res, 201, { ...decision, idempotent: false, reachable: true, reachableChannels: 2 })
    }
    if (decisionId !== undefined) {
      const decision = decisions.get(decisionId)
      if (!decision) return json(res, 404, { error: 'Decision not found or expired', code: 'not_found' })
      if (received.method === 'GET') {
        const wait = Math.min(55, Number(received.query.wait ?? 0))
        if (decision.status !== 'pending' || !(wait > 0)) return json(res, 200, decision)
        const wake = () => {
          clearTimeout(timer)
          if (!res.writableEnded) json(res, 200, decisions.get(decisionId))
        }
        const timer = setTimeout(() => {
          holders.get(decisionId)?.delete(wake)
          wake()
        }, wait * 1000)
        const set = holders.get(decisionId) ?? new Set()
        set.add(wake)
        holders.set(decisionId, set)
        res.on('close', () => {
          clearTimeout(timer)
          holders.get(decisionId)?.delete(wake)
        })
        return
      }
      if (received.method === 'POST') {
        service.answer(decisionId, String(body.answer))
        const updated = decisions.get(decisionId)!
        return json(res, 200, { decisionId, status: updated.status, answered: true, value: updated.value })
      }
      if (received.method === 'DELETE') {
        if (decision.status === 'pending') decision.status = 'cancelled'
        release(decisionId)
        return json(res, 200, {
          decisionId,
          cancelled: decision.status === 'cancelled',
          status: decision.status,
        })
      }
    }
    if (received.method === 'GET' && received.path === '/decisions') {
      const list = [...decisions.values()].filter(
        (d) => received.query.externalId === undefined || d.externalId === received.query.externalId,
      )
      return json(res, 200, { decisions: list, nextCursor: null })
    }
    if (received.method === 'POST' && received.path === '/enroll') {
      const token = randomUUID()
      return json(res, 200, {
        externalId: body.externalId,
        token,
        deepLink: `pushary://enroll?token=${token}`,
        universalLink: `http://127.0.0.1/e/${token}`,
        expiresInSeconds: 600,
      })
    }
    if (received.method === 'GET' && received.path === '/reachability') {
      return json(res, 200, {
        externalId: received.query.externalId,
        deliverability: 'fallback',
        reachable: false,
        reachableChannels: 0,
        deviceCount: 0,
        webEndpoints: 0,
        hint: 'nobody enrolled',
      })
    }
    if (received.method === 'POST' && received.path === '/authorize') {
      return json(res, 200, {
        verdict: 'requires_human',
        policy: null,
        reason: 'No rule matched.',
        authorizationId: null,
      })
    }
    if (received.path === '/webhook-secret') {
      if (received.method === 'POST') webhookSecret = `whsec_${randomUUID()}`
      return json(res, 200, { webhookSecret })
    }
    return json(res, 404, { error: 'Decision not found or expired', code: 'not_found' })
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1')
      const raw = Buffer.concat(chunks).toString('utf8')
      const received: ReceivedRequest = {
        method: req.method ?? 'GET',
        path: url.pathname.replace(/^\/api\/v1\/server/, ''),
        query: Object.fromEntries(url.searchParams),
        headers: req.headers,
        body: raw === '' ? undefined : JSON.parse(raw),
      }
      requests.push(received)
      for (const watcher of [...watchers]) {
        if (watcher.predicate(received)) {
          watchers.delete(watcher)
          watcher.resolve(received)
        }
      }
      handle(received, res)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo

  const service: FakeDecisionService = {
    baseUrl: `http://127.0.0.1:${port}/api/v1/server`,
    apiKey,
    requests,
    decisions,
    override: undefined,
    answer(decisionId, value) {
      const decision = decisions.get(decisionId)
      if (decision?.status !== 'pending') return
      decision.status = 'answered'
      decision.answered = true
      decision.value = value
      decision.answeredAt = new Date().toISOString()
      release(decisionId)
    },
    waitForRequest(predicate) {
      const seen = requests.find(predicate)
      if (seen) return Promise.resolve(seen)
      return new Promise((resolve) => watchers.add({ predicate, resolve }))
    },
    close() {
      server.closeAllConnections()
      return new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())))
    },
  }
  return service
}
