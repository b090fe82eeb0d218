/**
 * Who may see the board: whoever holds the operator key. The key is typed
 * once into a login form; the session cookie then carries a MAC of its
 * issue time under the key, never the key itself, so a leaked cookie
 * expires and a changed key signs every session out. The cookie is HttpOnly
 * and SameSite=Strict (no other site's page can make the browser send it),
 * and every state-changing form also carries a token derived from the
 * session, checked together with the browser's own cross-site signals.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import { cookieValues } from '../server/reviewer/device-auth.js'

/** The session cookie on an http page. */
export const BOARD_COOKIE = 'pushary_board'

/**
 * The session cookie on an https page: a `__Host-` cookie is set only by a
 * secure page, for path `/`, with no domain, so another port or subdomain
 * cannot plant one.
 */
export const SECURE_BOARD_COOKIE = '__Host-pushary_board'

function mac(key: string, purpose: string, value: string): string {
  return createHmac('sha256', key).update(`pushary-board/${purpose}/v1\0${value}`).digest('base64url')
}

/**
 * Compares two strings in time independent of where they differ.
 *
 * @example
 * sameSecret(typed, operatorKey) // true only for the exact key
 */
export function sameSecret(expected: string, actual: string): boolean {
  // Hash first so the comparison is over equal lengths and the key's length does not leak.
  const a = createHmac('sha256', 'pushary-board/compare').update(expected).digest()
  const b = createHmac('sha256', 'pushary-board/compare').update(actual).digest()
  return timingSafeEqual(a, b) && expected === actual
}

/**
 * A new session value for the cookie: `v1.<issued ms>.<MAC>`.
 *
 * @example
 * const session = issueSession(operatorKey, Date.now())
 */
export function issueSession(key: string, nowMs: number): string {
  const issued = String(Math.floor(nowMs))
  return `v1.${issued}.${mac(key, 'session', issued)}`
}

/** Why a request has no session: the board answers each the same way (the login form), but logs differ. */
export type SessionCheck =
  | { status: 'ok'; session: string }
  | { status: 'missing' | 'invalid' | 'expired' | 'conflicting' }

/**
 * Reads and checks the session cookie of a request. Two cookies of the
 * board's name mean one was planted: refused, never guessed between.
 *
 * @example
 * const check = checkSession(request.headers.get('cookie') ?? undefined, 'pushary_board', key, 43_200_000, Date.now())
 */
export function checkSession(
  cookieHeader: string | undefined,
  cookieName: string,
  key: string,
  ttlMs: number,
  nowMs: number,
): SessionCheck {
  const values = cookieValues(cookieHeader, cookieName)
  if (values.length === 0) return { status: 'missing' }
  if (values.length > 1) return { status: 'conflicting' }
  const session = values[0] as string
  const match = /^v1\.(\d{1,16})\.([A-Za-z0-9_-]{43})$/.exec(session)
  if (!match) return { status: 'invalid' }
  const issued = match[1] as string
  if (!sameSecret(mac(key, 'session', issued), match[2] as string)) return { status: 'invalid' }
  const age = nowMs - Number(issued)
  // A session "issued" in the future was not issued by this clock.
  if (age < -60_000 || age > ttlMs) return { status: 'expired' }
  return { status: 'ok', session }
}

/**
 * The form token for a session: a MAC the page renders into every form and
 * a cross-site page can neither read nor compute.
 *
 * @example
 * html`<input type="hidden" name="csrf" value="${csrfFor(key, session)}">`
 */
export function csrfFor(key: string, session: string): string {
  return mac(key, 'csrf', session)
}
