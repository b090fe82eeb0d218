/**
 * The `/api/v1/server` routes: the same HTTP contract as the hosted Pushary
 * API, so the package's client works against either by changing `baseUrl`.
 * Every input problem is a 4xx naming the field; nothing a caller sends can
 * reach the 500 handler.
 */
import { type Context, Hono } from 'hono'
import { z } from 'zod/v4'
import { externalIdInputSchema, externalIdSchema } from '../pushary/identity.js'
import { PUSHARY_LIMITS } from '../pushary/limits.js'
import { decisionStatusSchema } from '../pushary/question.js'
import { storableString } from '../pushary/text-rules.js'
import type { EnrollResult } from '../pushary/wire-responses.js'
import { apiError, DECISION_NOT_FOUND } from './api-errors.js'
import { invalid, invalidFromZod, readJsonObject } from './api-request.js'
import {
  authenticateKey,
  type BoundKeys,
  boundExternalIdOf,
  enforceKeyScope,
  principalOf,
  SITE_PRINCIPAL,
} from './bound-keys.js'
import type { CallbackOutbox } from './callbacks-outbox.js'
import type { LongPollBudget } from './connection-limits.js'
import type { DecisionEvents } from './decision-events.js'
import { boundKeyView, decisionJson } from './decision-json.js'
import type { DecisionService } from './decision-service.js'
import type { DecisionRecord } from './decisions-repo.js'
import { localCreateDecisionSchema } from './local-input-rules.js'
import type { PermitService } from './permits.js'
import { createPlatformRoutes } from './platform-routes.js'
import type { PolicyFile } from './policy.js'
import type { ApprovalLinks } from './reviewer/approval-link.js'

/** What the API routes need from the server. */
export interface ApiRouteDeps {
  service: DecisionService
  outbox: CallbackOutbox
  events: DecisionEvents
  policy: PolicyFile
  publicUrl: string
  now: () => number
  apiKey: () => string
  /** Caps long-polls held at once per API key and per bound customer. */
  longPolls: LongPollBudget
  /** Null when the service may call this callback URL, else why not (`callback-address.ts`). */
  checkCallbackUrl: (url: string) => Promise<string | null>
  webhookSecret: { get(): Promise<string>; rotate(): Promise<string> }
  keys: BoundKeys
  permits: PermitService
  approvalLinks: ApprovalLinks
  onEnrollmentLink?: (link: { externalId: string; universalLink: string; expiresInSeconds: number }) => void
}

function notFound(c: Context) {
  return apiError(c, 404, 'not_found', DECISION_NOT_FOUND)
}

function conflict(c: Context, code: string, message: string) {
  return apiError(c, 409, code, message)
}

const waitSchema = z.coerce
  .number()
  .refine((n) => Number.isFinite(n), 'wait must be a number of seconds')
  .transform((n) => Math.min(Math.max(n, 0), PUSHARY_LIMITS.longPollMaxSeconds))

const listQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  cursor: z
    .string()
    .regex(/^c_[1-9][0-9]{0,15}$/, 'cursor must be a nextCursor returned by this service')
    .optional(),
  externalId: externalIdSchema.optional(),
  status: decisionStatusSchema.optional(),
  from: z.iso.datetime({ offset: true }).optional(),
  to: z.iso.datetime({ offset: true }).optional(),
})

const answerBodySchema = z.object({ answer: storableString().max(10_000) })

/**
 * Builds the API sub-app (mounted at `/api/v1/server`).
 *
 * @example
 * app.route('/api/v1/server', createApiRoutes(deps))
 */
export function createApiRoutes(deps: ApiRouteDeps): Hono {
  const api = new Hono()
  const { service } = deps
  const apiBase = `${deps.publicUrl}/api/v1/server`

  api.use('*', authenticateKey(deps.apiKey, deps.keys))
  api.use(
    '*',
    enforceKeyScope((id) => service.get(id)),
  )

  api.post('/enroll', async (c) => {
    const body = await readJsonObject(c)
    if (!body.ok) return body.response
    // A new customer ID reaches the `dev` terminal and `devices list`: the
    // same text rule as a decision's customer.
    const parsed = externalIdInputSchema.safeParse(body.value.externalId)
    if (!parsed.success) return invalidFromZod(c, parsed.error, 'externalId')
    const { token, expiresInSeconds } = await service.enroll(parsed.data)
    const result: EnrollResult = {
      externalId: parsed.data,
      token,
      deepLink: `pushary://enroll?token=${encodeURIComponent(token)}`,
      universalLink: `${deps.publicUrl}/e/${token}`,
      expiresInSeconds,
    }
    deps.onEnrollmentLink?.({
      externalId: parsed.data,
      universalLink: result.universalLink,
      expiresInSeconds,
    })
    return c.json(result, 201)
  })

  api.get('/reachability', async (c) => {
    const externalId = c.req.query('externalId')
    if (externalId === undefined) {
      return c.json({
        externalId: '',
        deliverability: 'unreachable',
        reachable: false,
        reachableChannels: 0,
        deviceCount: 0,
        webEndpoints: 0,
        hint: 'No end-user was named; pass ?externalId=.',
      })
    }
    const parsed = externalIdSchema.safeParse(externalId)
    if (!parsed.success) return invalidFromZod(c, parsed.error, 'externalId')
    return c.json(await service.reachability(parsed.data))
  })

  api.post('/decisions', async (c) => {
    const body = await readJsonObject(c)
    if (!body.ok) return body.response
    const parsed = localCreateDecisionSchema.safeParse(body.value)
    if (!parsed.success) return invalidFromZod(c, parsed.error)
    const refused =
      parsed.data.callbackUrl === undefined ? null : await deps.checkCallbackUrl(parsed.data.callbackUrl)
    if (refused !== null) return invalid(c, 'callbackUrl', refused)
    const askedBy = principalOf(c)
    const outcome = await service.create(parsed.data, askedBy)
    switch (outcome.status) {
      case 'unreachable':
        return conflict(c, 'unreachable', outcome.message)
      case 'key_reused':
        return c.json({ error: outcome.message, code: 'idempotency_key_reused' }, 409)
      case 'created':
      case 'idempotent': {
        const d =
          parsed.data.wait === true ? await heldCreate(c, outcome.decision, parsed.data) : outcome.decision
        if (d === null) {
          c.header('Retry-After', '1')
          return apiError(
            c,
            429,
            'too_many_waits',
            'Too many long-polls are open for this API key; retry shortly.',
          )
        }
        const pageUrl = `${deps.publicUrl}/review/${d.decisionId}`
        const result: Record<string, unknown> = {
          decisionId: d.decisionId,
          status: d.status,
          answered: d.status === 'answered',
          value: d.value,
          type: d.type,
          question: d.question,
          pollUrl: `${apiBase}/decisions/${d.decisionId}`,
          decisionPageUrl: pageUrl,
          expiresInSeconds: Math.max(0, Math.ceil((d.expiresMs - deps.now()) / 1000)),
          // Only the site key is handed a link (`enforceKeyScope` refuses a
          // bound key's request for one before this route runs).
          ...(parsed.data.approvalUrl === true && askedBy === SITE_PRINCIPAL
            ? { approvalUrl: await deps.approvalLinks.issue(d.decisionId, d.expiresMs, askedBy) }
            : {}),
          ...(outcome.status === 'idempotent' ? { idempotent: true } : {}),
          ...(outcome.reach
            ? {
                reachable: outcome.reach.reachable,
                reachableChannels: outcome.reach.reachableChannels,
                deviceCount: outcome.reach.deviceCount,
                ...(outcome.reach.reachable
                  ? {}
                  : {
                      hint: `Nobody is enrolled for this externalId yet: enrol a device (POST /enroll) or open ${pageUrl}.`,
                    }),
              }
            : {}),
          ...(d.status === 'pending' && parsed.data.wait === true
            ? { hint: `No answer yet: poll ${apiBase}/decisions/${d.decisionId}.` }
            : {}),
        }
        return c.json(result, outcome.status === 'created' ? 201 : 200)
      }
      default: {
        const unreachable: never = outcome
        return unreachable
      }
    }
  })

  // `wait: true` on create holds the response up to `timeoutSeconds` (at most
  // 55 s) for a fast answer, like a long-poll, under the same per-key cap.
  async function heldCreate(
    c: Context,
    created: DecisionRecord,
    input: { timeoutSeconds?: number | undefined },
  ): Promise<DecisionRecord | null> {
    const seconds = Math.min(PUSHARY_LIMITS.longPollMaxSeconds, Math.max(0, input.timeoutSeconds ?? 55))
    if (created.status !== 'pending' || seconds === 0) return created
    const release = deps.longPolls.acquire(principalOf(c), boundExternalIdOf(c))
    if (release === null) return null
    const stop = new AbortController()
    try {
      const settled = deps.events.waitForSettled(
        created.decisionId,
        seconds * 1000,
        AbortSignal.any([stop.signal, c.req.raw.signal]),
      )
      // Read after subscribing, so an answer landing in between is not missed.
      const current = (await service.get(created.decisionId)) ?? created
      if (current.status !== 'pending') return current
      if (await settled) return (await service.get(created.decisionId)) ?? current
      return current
    } finally {
      stop.abort()
      release()
    }
  }

  api.get('/decisions', async (c) => {
    const parsed = listQuerySchema.safeParse(c.req.query())
    if (!parsed.success) return invalidFromZod(c, parsed.error)
    const q = parsed.data
    const rows = await service.list({
      limit: q.limit,
      beforeSeq: q.cursor === undefined ? null : Number(q.cursor.slice(2)),
      // A bound key lists its own customer's decisions only.
      externalId: boundExternalIdOf(c) ?? q.externalId ?? null,
      status: q.status ?? null,
      fromMs: q.from === undefined ? null : Date.parse(q.from),
      toMs: q.to === undefined ? null : Date.parse(q.to),
    })
    const last = rows[rows.length - 1]
    const bound = boundExternalIdOf(c) !== null
    return c.json({
      decisions: rows.map((d) => (bound ? boundKeyView(decisionJson(d)) : decisionJson(d))),
      nextCursor: rows.length === q.limit && last !== undefined ? `c_${last.seq}` : null,
    })
  })

  api.get('/decisions/:id', async (c) => {
    const id = c.req.param('id')
    const rawWait = c.req.query('wait')
    let waitSeconds = 0
    if (rawWait !== undefined && rawWait !== '') {
      const parsed = waitSchema.safeParse(rawWait)
      if (!parsed.success) return invalidFromZod(c, parsed.error, 'wait')
      waitSeconds = parsed.data
    }
    // Each held long-poll keeps a socket open; past the cap the caller is told
    // to come back rather than starving everyone else of connections.
    const release = waitSeconds > 0 ? deps.longPolls.acquire(principalOf(c), boundExternalIdOf(c)) : () => {}
    if (release === null) {
      c.header('Retry-After', '1')
      return apiError(
        c,
        429,
        'too_many_waits',
        'Too many long-polls are open for this API key; retry shortly.',
      )
    }
    // Subscribe before the first read so an answer landing in between is not missed.
    // A plain GET builds no signals: the adapter creates an abort controller
    // for `c.req.raw.signal` on first read, and `AbortSignal.any` tracks both;
    // only a long-poll needs them.
    const stop = waitSeconds > 0 ? new AbortController() : null
    const settled =
      stop === null
        ? null
        : deps.events.waitForSettled(id, waitSeconds * 1000, AbortSignal.any([stop.signal, c.req.raw.signal]))
    try {
      let decision = await service.get(id)
      if (decision === null) return notFound(c)
      if (decision.status === 'pending' && settled !== null) {
        if (await settled) decision = (await service.get(id)) ?? decision
      }
      if (boundExternalIdOf(c) !== null) return c.json(boundKeyView(decisionJson(decision)))
      return c.json(decisionJson(decision, await deps.outbox.deliveriesFor(id)))
    } finally {
      stop?.abort()
      release()
    }
  })

  api.get('/decisions/:id/deliveries', async (c) => {
    const id = c.req.param('id')
    const decision = await service.get(id)
    if (decision === null) return notFound(c)
    return c.json({ decisionId: id, deliveries: await deps.outbox.deliveriesFor(id) })
  })

  api.post('/decisions/:id', async (c) => {
    const id = c.req.param('id')
    const body = await readJsonObject(c)
    if (!body.ok) return body.response
    const parsed = answerBodySchema.safeParse(body.value)
    if (!parsed.success) return invalidFromZod(c, parsed.error)
    const outcome = await service.answer(id, parsed.data.answer, 'api')
    switch (outcome.status) {
      case 'answered':
        return c.json({
          decisionId: id,
          status: outcome.decision.status,
          answered: true,
          value: outcome.decision.value,
        })
      case 'not_found':
        return notFound(c)
      case 'invalid_answer':
        return invalid(c, 'answer', outcome.message)
      case 'already_answered':
      case 'expired':
      case 'cancelled':
        return conflict(c, outcome.status, outcome.message)
      default: {
        const unreachable: never = outcome
        return unreachable
      }
    }
  })

  api.delete('/decisions/:id', async (c) => {
    const outcome = await service.cancel(c.req.param('id'))
    if (outcome.status === 'not_found') return notFound(c)
    return c.json({
      decisionId: outcome.decision.decisionId,
      cancelled: outcome.cancelled,
      status: outcome.decision.status,
    })
  })

  api.get('/webhook-secret', async (c) => c.json({ webhookSecret: await deps.webhookSecret.get() }))
  api.post('/webhook-secret', async (c) => c.json({ webhookSecret: await deps.webhookSecret.rotate() }))

  api.route('/', createPlatformRoutes({ policy: deps.policy, permits: deps.permits, keys: deps.keys }))

  api.all('*', (c) => apiError(c, 404, 'not_found', `No route ${c.req.method} ${c.req.path}.`))

  return api
}
