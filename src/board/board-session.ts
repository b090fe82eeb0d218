/**
 * The board's resolved configuration and its session middleware: a request
 * without a valid session cookie never reaches a page that reads the store.
 */
import type { Context, MiddlewareHandler } from 'hono'
import type { PusharyReviewStore } from '../store/review-store.js'
import { BOARD_COOKIE, checkSession, csrfFor, SECURE_BOARD_COOKIE, type SessionCheck } from './board-auth.js'

/** Levels the board logs at. */
export type BoardLogLevel = 'info' | 'warn' | 'error'

/** The board's options after validation, with defaults resolved once. */
export interface BoardConfig {
  readonly store: PusharyReviewStore
  readonly operatorKey: string
  readonly basePath: string
  readonly claimLeaseMs: number
  readonly sessionTtlMs: number
  readonly pageSize: number
  readonly scanLimit: number
  /** `null`: Secure cookies exactly when the request arrived over https. */
  readonly secureCookie: boolean | null
  readonly now: () => number
  readonly log: (level: BoardLogLevel, message: string, details: Record<string, unknown>) => void
}

/** Hono environment of the board's app. */
export interface BoardEnv {
  Variables: {
    nonce: string
    /** The session cookie's value, once checked. */
    session: string
    /** The form token of this session. */
    csrf: string | undefined
  }
}

/**
 * The session cookie's name, path and Secure flag for a request. On https
 * it is a `__Host-` cookie (path `/` by that prefix's rule); on http it is
 * scoped to the board's path.
 *
 * @example
 * const { name, path, secure } = sessionCookie(config, request.url)
 */
export function sessionCookie(
  config: Pick<BoardConfig, 'basePath' | 'secureCookie'>,
  requestUrl: string,
): { name: string; path: string; secure: boolean } {
  const secure = config.secureCookie ?? requestUrl.startsWith('https:')
  return secure
    ? { name: SECURE_BOARD_COOKIE, path: '/', secure }
    : { name: BOARD_COOKIE, path: config.basePath, secure }
}

/**
 * Middleware: continues only with a valid session (setting `session` and
 * `csrf`), else answers through `refuse`.
 *
 * @example
 * app.get('/board', requireSession(config, (c) => c.text('sign in', 401)), handler)
 */
export function requireSession(
  config: BoardConfig,
  refuse: (c: Context<BoardEnv>, why: Exclude<SessionCheck['status'], 'ok'>) => Response,
): MiddlewareHandler<BoardEnv> {
  return async (c, next) => {
    const { name } = sessionCookie(config, c.req.url)
    const check = checkSession(
      c.req.header('cookie'),
      name,
      config.operatorKey,
      config.sessionTtlMs,
      config.now(),
    )
    if (check.status !== 'ok') {
      if (check.status !== 'missing')
        config.log('warn', `board: session ${check.status}`, { path: c.req.path })
      return refuse(c, check.status)
    }
    c.set('session', check.session)
    c.set('csrf', csrfFor(config.operatorKey, check.session))
    await next()
    return undefined
  }
}
