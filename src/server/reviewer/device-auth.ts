/**
 * Device authentication for the reviewer page: the HttpOnly cookie set by the
 * enrolment link names a device, the device names exactly one customer.
 * Also the CSRF rules for answer posts.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import type { Context, MiddlewareHandler } from 'hono'
import type { ReviewerDeps } from '../service-types.js'

/** Name of the cookie holding the random device token on an http page. */
export const DEVICE_COOKIE = 'pushary_device'

/**
 * Name of the device cookie on an https page. Cookies are not isolated by
 * port, so any page on the same host could plant a `pushary_device` cookie;
 * a `__Host-` cookie can only be set by a secure page, for path `/`, without
 * a domain, so no other origin can toss one in.
 */
export const SECURE_DEVICE_COOKIE = '__Host-pushary_device'

/**
 * The device cookie's name for a public URL.
 *
 * @example
 * deviceCookieName('https://approvals.example.com') // '__Host-pushary_device'
 */
export function deviceCookieName(publicUrl: string): string {
  return publicUrl.startsWith('https:') ? SECURE_DEVICE_COOKIE : DEVICE_COOKIE
}

/**
 * Every value of cookie `name` in a `Cookie` header, in header order. A
 * browser sends several when cookies of the same name exist for different
 * paths or were set by a page on another port of the same host.
 *
 * @example
 * cookieValues('a=1; pushary_device=x; pushary_device=y', 'pushary_device') // ['x', 'y']
 */
export function cookieValues(header: string | undefined, name: string): string[] {
  if (header === undefined) return []
  const values: string[] = []
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq === -1) continue
    if (part.slice(0, eq).trim() === name) values.push(part.slice(eq + 1).trim())
  }
  return values
}

/** Hono environment of the reviewer sub-app. */
export interface ReviewerEnv {
  Variables: {
    /** The customer this device answers for. */
    externalId: string
    /** Public handle of the device (a digest prefix), for per-device limits. */
    deviceId: string
    /** Per-device CSRF token rendered into every answer form. */
    csrf: string
    /** The device token of this request, so a long-lived stream can re-check the device. */
    deviceToken: string
    /** CSP nonce for this response's inline style and script. */
    nonce: string
  }
}

// Tokens are base64url from the service; anything longer or odder is not worth a lookup.
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{16,200}$/

/**
 * Derives the form CSRF token from the device token. The device token is
 * secret (HttpOnly cookie), so a cross-site page can neither read nor compute
 * it, and nothing extra has to be stored.
 *
 * @example
 * html`<input type="hidden" name="csrf" value="${csrfTokenFor(deviceToken)}">`
 */
export function csrfTokenFor(deviceToken: string): string {
  return createHmac('sha256', deviceToken).update('pushary-reviewer-csrf/v1').digest('base64url')
}

function sameToken(expected: string, actual: string): boolean {
  const a = Buffer.from(expected)
  const b = Buffer.from(actual)
  return a.length === b.length && timingSafeEqual(a, b)
}

/**
 * A fresh CSP nonce for one response.
 *
 * @example
 * c.set('nonce', createNonce())
 */
export function createNonce(): string {
  return randomBytes(16).toString('base64')
}

/**
 * Middleware: resolves the device cookie to a customer, or calls `onMissing`
 * (a 401 page or JSON) when there is no cookie or the device is unknown, or
 * `onConflict` when the request carries more than one device cookie: one of
 * them was planted (from another port of the same host, or a narrower path),
 * and picking either could show the reviewer someone else's questions.
 *
 * @example
 * app.get('/review', requireDevice(deps, (c) => c.text('not enrolled', 401), (c) => c.text('two cookies', 400)), (c) => c.text(c.get('externalId')))
 */
export function requireDevice(
  deps: Pick<ReviewerDeps, 'deviceFromToken' | 'publicUrl'>,
  onMissing: (c: Context<ReviewerEnv>) => Response | Promise<Response>,
  onConflict: (c: Context<ReviewerEnv>) => Response | Promise<Response>,
): MiddlewareHandler<ReviewerEnv> {
  const name = deviceCookieName(deps.publicUrl)
  return async (c, next) => {
    const tokens = cookieValues(c.req.header('cookie'), name)
    if (tokens.length > 1) return onConflict(c)
    const token = tokens[0]
    if (token === undefined || !TOKEN_SHAPE.test(token)) return onMissing(c)
    const device = await deps.deviceFromToken(token)
    if (device === null) return onMissing(c)
    c.set('externalId', device.externalId)
    c.set('deviceId', device.deviceId)
    c.set('csrf', csrfTokenFor(token))
    c.set('deviceToken', token)
    await next()
  }
}

function originOf(url: string): string | null {
  try {
    return new URL(url).origin
  } catch {
    return null
  }
}

function ownOriginsOf(c: Context, publicUrl: string): Set<string> {
  return new Set([originOf(c.req.url), originOf(publicUrl)].filter((o) => o !== null))
}

/**
 * Refuses a post the browser says came from another site (`Sec-Fetch-Site`
 * `cross-site` or `same-site`, or a foreign `Origin`). A request without
 * these headers (curl, an old browser) passes: this only catches what a
 * browser vouches for, so posts that need more also check a secret.
 *
 * @example
 * if (checkNotCrossSite(c, deps.publicUrl).status === 'rejected') return c.text('forbidden', 403)
 */
export function checkNotCrossSite(c: Context, publicUrl: string): CsrfVerdict {
  const fetchSite = c.req.header('sec-fetch-site')
  const origin = c.req.header('origin')
  if (fetchSite === 'cross-site' || fetchSite === 'same-site') {
    return { status: 'rejected', reason: `Sec-Fetch-Site is ${fetchSite}` }
  }
  // `Origin: null` is what Chromium sends for a form post under `Referrer-Policy: no-referrer`.
  if (origin !== undefined && origin !== 'null' && !ownOriginsOf(c, publicUrl).has(origin)) {
    return { status: 'rejected', reason: `Origin ${origin} is not this service` }
  }
  return { status: 'ok' }
}

/** Outcome of the CSRF check on an answer post. */
export type CsrfVerdict = { status: 'ok' } | { status: 'rejected'; reason: string }

/**
 * A post is accepted when it carries this device's form token, or when the
 * browser vouches that it is same-origin (`Sec-Fetch-Site: same-origin` or
 * an `Origin` equal to the page's). A browser that says the request is cross
 * site is refused even with a token, since the token could only have leaked.
 *
 * @example
 * if (checkCsrf(c, deps.publicUrl, form.csrf).status === 'rejected') return c.text('forbidden', 403)
 */
export function checkCsrf(c: Context<ReviewerEnv>, publicUrl: string, formToken: string | null): CsrfVerdict {
  const crossSite = checkNotCrossSite(c, publicUrl)
  if (crossSite.status === 'rejected') return crossSite
  const ownOrigins = ownOriginsOf(c, publicUrl)
  const fetchSite = c.req.header('sec-fetch-site')
  const origin = c.req.header('origin')
  if (formToken !== null && sameToken(c.get('csrf'), formToken)) return { status: 'ok' }
  if (fetchSite === 'same-origin') return { status: 'ok' }
  if (origin !== undefined && ownOrigins.has(origin)) return { status: 'ok' }
  return { status: 'rejected', reason: 'missing CSRF token and no same-origin evidence' }
}
