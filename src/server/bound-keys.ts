/**
 * Bound keys (`/keys`): API keys limited to one customer (`externalId`). A
 * bound key may create, read, list and cancel decisions, enrol devices and
 * check reachability only for its customer; it can never answer, neither by
 * relaying an answer nor through an approval link (it is never given one),
 * and every other route (keys, webhook secret, policy, permits, callback
 * deliveries) is the site key's. Outside its customer it gets 403 with the
 * hosted error body. Only a SHA-256 digest of each key is stored; the key
 * itself is shown once.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { Client } from '@libsql/client'
import type { Context, MiddlewareHandler } from 'hono'
import { apiError } from './api-errors.js'
import type { DecisionRecord } from './decisions-repo.js'

declare module 'hono' {
  interface ContextVariableMap {
    /** The customer a bound key is limited to; null for the site key. */
    pusharyBoundExternalId: string | null
    /** Who is asking: {@link SITE_PRINCIPAL} or a bound key's prefix. */
    pusharyPrincipal: string
  }
}

/**
 * The principal of requests made with the site key. A bound key's principal
 * is its key prefix (`pk_bound_…`), so the two never collide. Recorded as who
 * asked a decision and who received an approval link, and used to scope
 * idempotency keys and long-poll budgets.
 */
export const SITE_PRINCIPAL = 'site'

/** Bound-key lifetimes are clamped to this range, as on the hosted API. */
export const BOUND_KEY_LIFETIME = { minSeconds: 60, maxSeconds: 365 * 24 * 60 * 60 } as const

/** One bound key as `GET /keys` lists it. */
export interface BoundKeyRow {
  keyPrefix: string
  name: string
  boundExternalId: string | null
  isActive: boolean
  lastUsedAt: string | null
  expiresAt: string | null
  createdAt: string
}

/** Storage of bound keys. */
export interface BoundKeys {
  issue(input: {
    externalId: string
    name?: string | undefined
    expiresInSeconds?: number | undefined
  }): Promise<{
    apiKey: string
    keyPrefix: string
    scope: 'bound'
    boundExternalId: string
    expiresAt: string | null
  }>
  list(): Promise<BoundKeyRow[]>
  revoke(keyPrefix: string): Promise<boolean>
  /** The customer and prefix of an active, unexpired bound key, else null. */
  authenticate(presented: string): Promise<{ externalId: string; keyPrefix: string } | null>
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest()
}

/**
 * Builds the bound-key store over the service database.
 *
 * @example
 * const keys = createBoundKeys(db, Date.now)
 */
export function createBoundKeys(db: Client, now: () => number): BoundKeys {
  const iso = (ms: number) => new Date(ms).toISOString()
  return {
    async issue(input) {
      const keyPrefix = `pk_bound_${randomBytes(8).toString('hex')}`
      const apiKey = `${keyPrefix}.sk_${randomBytes(24).toString('hex')}`
      const nowMs = now()
      const seconds =
        input.expiresInSeconds === undefined
          ? null
          : Math.min(
              BOUND_KEY_LIFETIME.maxSeconds,
              Math.max(BOUND_KEY_LIFETIME.minSeconds, input.expiresInSeconds),
            )
      const expiresMs = seconds === null ? null : nowMs + seconds * 1000
      await db.execute({
        sql: `INSERT INTO bound_keys (key_prefix, key_hash, name, bound_external_id, created_at, expires_at, expires_ms)
              VALUES (?, ?, ?, ?, ?, ?, ?)`,
        args: [
          keyPrefix,
          digest(apiKey).toString('hex'),
          // The hosted list always carries a name.
          input.name ?? `Bound key for ${input.externalId}`,
          input.externalId,
          iso(nowMs),
          expiresMs === null ? null : iso(expiresMs),
          expiresMs,
        ],
      })
      return {
        apiKey,
        keyPrefix,
        scope: 'bound',
        boundExternalId: input.externalId,
        expiresAt: expiresMs === null ? null : iso(expiresMs),
      }
    },

    async list() {
      const result = await db.execute(
        `SELECT key_prefix, name, bound_external_id, created_at, expires_at, expires_ms, revoked_at, last_used_at
         FROM bound_keys ORDER BY created_at DESC, key_prefix`,
      )
      const nowMs = now()
      return result.rows.map((row) => ({
        keyPrefix: String(row.key_prefix),
        name: String(row.name ?? ''),
        boundExternalId: String(row.bound_external_id),
        isActive: row.revoked_at === null && (row.expires_ms === null || Number(row.expires_ms) > nowMs),
        lastUsedAt: row.last_used_at === null ? null : String(row.last_used_at),
        expiresAt: row.expires_at === null ? null : String(row.expires_at),
        createdAt: String(row.created_at),
      }))
    },

    async revoke(keyPrefix) {
      const result = await db.execute({
        sql: 'UPDATE bound_keys SET revoked_at = ? WHERE key_prefix = ? AND revoked_at IS NULL AND (expires_ms IS NULL OR expires_ms > ?)',
        args: [iso(now()), keyPrefix, now()],
      })
      return result.rowsAffected === 1
    },

    async authenticate(presented) {
      const prefix = presented.split('.')[0] ?? ''
      if (!prefix.startsWith('pk_bound_')) return null
      const result = await db.execute({
        sql: 'SELECT key_hash, bound_external_id, expires_ms, revoked_at FROM bound_keys WHERE key_prefix = ?',
        args: [prefix],
      })
      const row = result.rows[0]
      if (row === undefined) return null
      const same = timingSafeEqual(Buffer.from(String(row.key_hash), 'hex'), digest(presented))
      const nowMs = now()
      if (!same || row.revoked_at !== null || (row.expires_ms !== null && Number(row.expires_ms) <= nowMs)) {
        return null
      }
      await db.execute({
        sql: 'UPDATE bound_keys SET last_used_at = ? WHERE key_prefix = ?',
        args: [iso(nowMs), prefix],
      })
      return { externalId: String(row.bound_external_id), keyPrefix: prefix }
    },
  }
}

/**
 * Accepts the site key (compared as digests in constant time) or an active
 * bound key, and records which customer the request is limited to; 401
 * otherwise.
 *
 * @example
 * api.use('*', authenticateKey(() => apiKey, keys))
 */
export function authenticateKey(siteKey: () => string, keys: BoundKeys): MiddlewareHandler {
  return async (c, next) => {
    const header = c.req.header('authorization') ?? ''
    const match = /^Bearer\s+(.+)$/i.exec(header.trim())
    const presented = match?.[1]?.trim() ?? ''
    if (presented !== '' && timingSafeEqual(digest(presented), digest(siteKey()))) {
      c.set('pusharyBoundExternalId', null)
      c.set('pusharyPrincipal', SITE_PRINCIPAL)
      return next()
    }
    const bound = presented === '' ? null : await keys.authenticate(presented)
    if (bound === null) {
      c.header('WWW-Authenticate', 'Bearer')
      return apiError(c, 401, 'unauthorized', 'Invalid or missing API key (Authorization: Bearer <key>).')
    }
    c.set('pusharyBoundExternalId', bound.externalId)
    c.set('pusharyPrincipal', bound.keyPrefix)
    return next()
  }
}

/**
 * The customer the request's key is bound to, or null for the site key.
 *
 * @example
 * const only = boundExternalIdOf(c) ?? query.externalId
 */
export function boundExternalIdOf(c: Context): string | null {
  return c.get('pusharyBoundExternalId') ?? null
}

/**
 * Who the request's key is: {@link SITE_PRINCIPAL} or the bound key's prefix.
 *
 * @example
 * const askedBy = principalOf(c)
 */
export function principalOf(c: Context): string {
  return c.get('pusharyPrincipal') ?? SITE_PRINCIPAL
}

// Decoded as Hono decodes a route parameter, so this check and the route
// look up the same decision.
function routeParam(raw: string): string {
  if (!raw.includes('%')) return raw
  try {
    return decodeURIComponent(raw)
  } catch {
    return raw
  }
}

function outsideScope(c: Context, what: string): Response {
  return apiError(c, 403, 'forbidden', `This key is bound to one customer and ${what}.`)
}

async function bodyField(c: Context, field: 'externalId' | 'approvalUrl'): Promise<unknown> {
  // Hono caches the body text, so the route reads the same bytes afterwards.
  try {
    const value = JSON.parse(await c.req.text()) as unknown
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[field] : undefined
  } catch {
    return undefined
  }
}

/**
 * Refuses (403) what a bound key may not do, before the route runs. A
 * decision that does not exist is left to the route's 404.
 *
 * @example
 * api.use('*', enforceKeyScope((id) => service.get(id)))
 */
export function enforceKeyScope(
  getDecision: (id: string) => Promise<DecisionRecord | null>,
): MiddlewareHandler {
  return async (c, next) => {
    const bound = boundExternalIdOf(c)
    if (bound === null) return next()
    const method = c.req.method
    // Path after the mount, e.g. `/decisions/dec_1`.
    const path = c.req.path.replace(/^\/api\/v1\/server/, '')
    const decisionMatch = /^\/decisions\/([^/]+)(\/deliveries)?$/.exec(path)
    if (path === '/decisions' && method === 'POST') {
      if ((await bodyField(c, 'externalId')) !== bound) {
        return outsideScope(c, 'can create decisions only for it')
      }
      // An approval link answers the decision: whoever holds it is the
      // reviewer. Handed to the key that asked (on a create or on a replay of
      // one), it would let the asker approve its own request.
      if ((await bodyField(c, 'approvalUrl')) === true) {
        return outsideScope(c, 'never receives approval links (a bound key cannot answer)')
      }
      return next()
    }
    if (path === '/decisions' && method === 'GET') {
      const asked = c.req.query('externalId')
      if (asked !== undefined && asked !== bound) return outsideScope(c, 'can list only its own decisions')
      return next()
    }
    if (decisionMatch !== null) {
      if (method === 'POST' && decisionMatch[2] === undefined)
        return outsideScope(c, 'cannot answer decisions')
      // Deliveries name the application's callback URL; the customer's key needs none of it.
      if (decisionMatch[2] !== undefined) return outsideScope(c, 'cannot read callback deliveries')
      const decision = await getDecision(routeParam(decisionMatch[1] ?? ''))
      if (decision !== null && decision.externalId !== bound) {
        return outsideScope(c, "cannot read or cancel another customer's decision")
      }
      return next()
    }
    if (path === '/enroll' && method === 'POST') {
      if ((await bodyField(c, 'externalId')) !== bound)
        return outsideScope(c, 'can enrol devices only for it')
      return next()
    }
    if (path === '/reachability' && method === 'GET') {
      if (c.req.query('externalId') !== bound) return outsideScope(c, 'can check only its own customer')
      return next()
    }
    return outsideScope(c, 'cannot use this route')
  }
}
