/**
 * Bearer API key check for `/api/v1/server/*`. Keys are compared as SHA-256
 * digests in constant time, so neither the length nor a prefix of the key
 * leaks through response timing.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { MiddlewareHandler } from 'hono'
import { apiError } from './api-errors.js'

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest()
}

/**
 * Generates a dev API key shaped like a hosted one (`pk_….sk_…`), so the
 * package's client accepts it unchanged.
 *
 * @example
 * const apiKey = generateDevApiKey() // 'pk_dev_3f…​.sk_9a…'
 */
export function generateDevApiKey(): string {
  return `pk_dev_${randomBytes(8).toString('hex')}.sk_${randomBytes(24).toString('hex')}`
}

/**
 * Middleware answering 401 unless `Authorization: Bearer <key>` carries the key
 * returned by `currentKey()`.
 *
 * @example
 * app.use('/api/v1/server/*', requireApiKey(() => apiKey))
 */
export function requireApiKey(currentKey: () => string): MiddlewareHandler {
  return async (c, next) => {
    const header = c.req.header('authorization') ?? ''
    const match = /^Bearer\s+(.+)$/i.exec(header.trim())
    const presented = match?.[1]?.trim() ?? ''
    if (presented === '' || !timingSafeEqual(digest(presented), digest(currentKey()))) {
      c.header('WWW-Authenticate', 'Bearer')
      return apiError(c, 401, 'unauthorized', 'Invalid or missing API key (Authorization: Bearer <key>).')
    }
    await next()
  }
}
