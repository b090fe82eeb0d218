/**
 * Types of the hosted fake and the pure pieces of its wire: which route a
 * request is, and the decision bodies (E2 and the E5 list item) exactly as
 * the contract names their fields.
 */

/** The routes a test can make odd. */
export type HostedRoute =
  | 'create'
  | 'get'
  | 'answer'
  | 'cancel'
  | 'list'
  | 'reachability'
  | 'enroll'
  | 'authorize'
  | 'webhook-secret'
  | 'consume'
  | 'receipt'
  | 'keys'

/** One request as the fake received it. */
export interface HostedRequest {
  method: string
  /** Path after the mount (e.g. `/decisions/dec_1`). */
  path: string
  route: HostedRoute | 'unknown'
  query: Record<string, string>
  authorization: string | undefined
  body: unknown
}

/** An odd reply: a status and a body sent as is (not checked against the contract). */
export interface OddReply {
  status: number
  body: unknown
}

/**
 * How an odd reply is made. `afterHandling`: the request is handled normally
 * first (a create opens the decision and pages the person) and only the
 * response is replaced, as when a proxy or the network loses it; the reply
 * function then sees the body the fake would have sent.
 */
export type OddReplier = OddReply | ((request: HostedRequest, handled: OddReply | null) => OddReply)

/** One decision as the fake holds it. */
export interface HostedDecision {
  decisionId: string
  /** A string, not the closed set: a test may put an unknown status here. */
  status: string
  answered: boolean
  value: string | null
  type: 'confirm' | 'select' | 'input'
  question: string
  options: string[] | null
  externalId: string | null
  context: string | null
  createdAt: string
  answeredAt: string | null
  expiresAt: string
  callbackUrl: string | null
  idempotencyKey: string | null
}

/** One callback the fake delivered (each attempt). */
export interface HostedCallback {
  decisionId: string
  rawBody: string
  signature: string
  respondedWith: number | 'network_error'
}

export interface HostedFake {
  /** `http://127.0.0.1:<port><mount>`. */
  baseUrl: string
  apiKey: string
  webhookSecret: string
  requests: HostedRequest[]
  decisions: Map<string, HostedDecision>
  callbacks: HostedCallback[]
  /** How many decisions were opened (people paged): replays do not count. */
  readonly pages: number
  /** The person answers: releases waiting requests and delivers the signed callback. */
  answer(decisionId: string, value: string): Promise<void>
  /** The decision expires (no callback, as on the hosted API). */
  expire(decisionId: string): void
  /** The service forgets the decision: every later read is a 404. */
  forget(decisionId: string): void
  /** Replies to the next `count` requests of `route` with `reply` instead of handling them. */
  oddNext(route: HostedRoute, reply: OddReplier, options?: { count?: number; afterHandling?: boolean }): void
  /** Creates of one route received so far. */
  count(route: HostedRoute): number
  close(): Promise<void>
}

export interface HostedFakeOptions {
  /** Path the API is mounted at; default `/api/v1/server`. */
  mount?: string
  apiKey?: string
  /** Delivery attempts per callback (a 5xx or a network error is retried). */
  callbackAttempts?: number
}

/** The contract route of a request (path after the mount). */
export function routeOf(method: string, path: string): HostedRoute | 'unknown' {
  if (path === '/decisions') return method === 'POST' ? 'create' : method === 'GET' ? 'list' : 'unknown'
  if (/^\/decisions\/[^/]+$/.test(path)) {
    if (method === 'GET') return 'get'
    if (method === 'POST') return 'answer'
    if (method === 'DELETE') return 'cancel'
  }
  if (path === '/reachability' && method === 'GET') return 'reachability'
  if (path === '/enroll' && method === 'POST') return 'enroll'
  if (path === '/authorize' && method === 'POST') return 'authorize'
  if (path === '/webhook-secret' && (method === 'GET' || method === 'POST')) return 'webhook-secret'
  if (path === '/authorizations/consume' && method === 'POST') return 'consume'
  if (/^\/authorizations\/[^/]+\/receipt$/.test(path) && method === 'POST') return 'receipt'
  if (
    (path === '/keys' && (method === 'POST' || method === 'GET')) ||
    (/^\/keys\/[^/]+$/.test(path) && method === 'DELETE')
  )
    return 'keys'
  return 'unknown'
}

/** E2: the twelve declared fields, nothing else. */
export function decisionBody(d: HostedDecision) {
  return {
    decisionId: d.decisionId,
    status: d.status,
    answered: d.answered,
    value: d.value,
    type: d.type,
    question: d.question,
    options: d.options,
    externalId: d.externalId,
    context: d.context,
    createdAt: d.createdAt,
    answeredAt: d.answeredAt,
    expiresAt: d.expiresAt,
  }
}

/** E5 item (ListedDecision): no options or expiresAt; tool fields and origin. */
export function listedBody(d: HostedDecision) {
  return {
    decisionId: d.decisionId,
    status: d.status,
    answered: d.answered,
    value: d.value,
    type: d.type,
    question: d.question,
    externalId: d.externalId,
    context: d.context,
    createdAt: d.createdAt,
    answeredAt: d.answeredAt,
    toolName: null,
    toolTarget: null,
    autoResolved: false,
    decisionOrigin: 'api',
  }
}
