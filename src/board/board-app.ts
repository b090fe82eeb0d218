/**
 * The board's routes as one Hono app under its base path. Loaded on the
 * first request (`review-board.ts`), so an app that never opens the board
 * never loads Hono. Page rules as the reviewer page's: a fresh CSP nonce
 * per response and no script at all, no framing (`frame-ancestors 'none'`,
 * `X-Frame-Options: DENY`), nothing cached, and every state-changing form
 * checked for its session token and the browser's cross-site signals.
 */

import type { Context } from 'hono'
import { Hono } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import { checkNotCrossSite, createNonce } from '../server/reviewer/device-auth.js'
import type { SafeHtml } from '../server/reviewer/html.js'
import { readPusharyReviewStats } from '../store/review-stats.js'
import { isPusharyStoreError } from '../store/store-error.js'
import { csrfFor, issueSession, sameSecret } from './board-auth.js'
import { loadBoard, parseFilters } from './board-query.js'
import { recoverFromForm } from './board-recover.js'
import {
  type PageContext,
  renderListPage,
  renderLoginPage,
  renderMessagePage,
  renderReviewPage,
} from './board-render.js'
import { type BoardConfig, type BoardEnv, requireSession, sessionCookie } from './board-session.js'

type Status = 200 | 400 | 401 | 403 | 404 | 409 | 500

function pageOf(c: Context<BoardEnv>, config: BoardConfig): PageContext {
  return { base: config.basePath, nonce: c.get('nonce'), csrf: c.get('csrf') ?? null }
}

/** Sends a page with the board's headers. */
export function send(c: Context<BoardEnv>, markup: SafeHtml, status: Status = 200): Response {
  const nonce = c.get('nonce')
  c.header(
    'Content-Security-Policy',
    [
      "default-src 'none'",
      "script-src 'none'",
      `style-src 'nonce-${nonce}'`,
      "img-src 'self' data:",
      "form-action 'self'",
      "base-uri 'none'",
      "frame-ancestors 'none'",
    ].join('; '),
  )
  return c.html(markup.value, status)
}

function message(
  c: Context<BoardEnv>,
  config: BoardConfig,
  status: Status,
  title: string,
  text: string,
  back = config.basePath,
): Response {
  return send(c, renderMessagePage(pageOf(c, config), { title, text, back, refused: status >= 400 }), status)
}

/**
 * Builds the board's app for a validated configuration.
 *
 * @example
 * const app = createBoardApp(config); const response = await app.fetch(request)
 */
export function createBoardApp(config: BoardConfig): Hono<BoardEnv> {
  const base = config.basePath
  const app = new Hono<BoardEnv>()
  app.use('*', async (c, next) => {
    c.set('nonce', createNonce())
    await next()
    c.header('Cache-Control', 'no-store')
    c.header('X-Content-Type-Options', 'nosniff')
    c.header('Referrer-Policy', 'no-referrer')
    c.header('X-Frame-Options', 'DENY')
  })
  app.use('*', bodyLimit({ maxSize: 16 * 1024, onError: (c) => c.text('Request body too large.', 413) }))
  // A form the browser marks as sent from another site is refused before anything else reads it.
  app.use('*', async (c, next) => {
    if (c.req.method !== 'GET' && c.req.method !== 'HEAD') {
      const verdict = checkNotCrossSite(c, c.req.url)
      if (verdict.status === 'rejected') {
        config.log('warn', 'board: refused a cross-site form', { path: c.req.path, why: verdict.reason })
        return message(c, config, 403, 'Refused', `Refused a cross-site request (${verdict.reason}).`)
      }
    }
    await next()
  })

  app.get(`${base}/login`, (c) => send(c, renderLoginPage(pageOf(c, config))))
  app.post(`${base}/login`, async (c) => {
    const form = await c.req.parseBody()
    const key = typeof form.key === 'string' ? form.key : ''
    if (!sameSecret(config.operatorKey, key)) {
      config.log('warn', 'board: sign-in refused (wrong operator key)', {})
      return send(c, renderLoginPage(pageOf(c, config), 'That is not the operator key.'), 401)
    }
    const cookie = sessionCookie(config, c.req.url)
    c.header(
      'Set-Cookie',
      `${cookie.name}=${issueSession(config.operatorKey, config.now())}; Path=${cookie.path}; HttpOnly; SameSite=Strict; Max-Age=${Math.floor(config.sessionTtlMs / 1000)}${cookie.secure ? '; Secure' : ''}`,
    )
    config.log('info', 'board: operator signed in', {})
    return c.redirect(base, 303)
  })

  const session = requireSession(config, (c, why) => {
    if (why === 'conflicting') {
      return message(
        c,
        config,
        400,
        'Two session cookies',
        "This browser sent two board cookies, so one was planted by another page. Clear this site's cookies, then sign in again.",
      )
    }
    return send(
      c,
      renderLoginPage(pageOf(c, config), why === 'expired' ? 'Your session expired; sign in again.' : null),
      401,
    )
  })
  const csrf = async (c: Context<BoardEnv>, next: () => Promise<void>) => {
    const form = await c.req.parseBody()
    const token = typeof form.csrf === 'string' ? form.csrf : ''
    if (!sameSecret(csrfFor(config.operatorKey, c.get('session')), token)) {
      config.log('warn', 'board: refused a form without its session token', { path: c.req.path })
      return message(
        c,
        config,
        403,
        'Refused',
        'The form was not sent from this board (missing or wrong form token). Reload the page and try again.',
      )
    }
    await next()
    return undefined
  }

  app.post(`${base}/logout`, session, csrf, (c) => {
    const cookie = sessionCookie(config, c.req.url)
    c.header(
      'Set-Cookie',
      `${cookie.name}=; Path=${cookie.path}; HttpOnly; SameSite=Strict; Max-Age=0${cookie.secure ? '; Secure' : ''}`,
    )
    return c.redirect(`${base}/login`, 303)
  })

  app.get(base, session, async (c) => {
    const parsed = parseFilters(new URL(c.req.url).searchParams)
    if (parsed.status === 'invalid') {
      return message(c, config, 400, 'Filter not accepted', `${parsed.field}: ${parsed.message}`)
    }
    const nowMs = config.now()
    const sections = await loadBoard(config.store, parsed.filters, config, nowMs)
    // The numbers an operator alerts on, over the whole store; a store without them shows none.
    const stats = await readPusharyReviewStats(config.store, { now: new Date(nowMs) }).catch(
      (error: unknown) => {
        config.log('warn', 'board: the review numbers could not be read', { error: String(error) })
        return null
      },
    )
    return send(c, renderListPage(pageOf(c, config), { filters: parsed.filters, sections, nowMs, stats }))
  })

  app.get(`${base}/reviews/:id`, session, async (c) => {
    const view = await reviewView(config, c.req.param('id'))
    if (view === null) return message(c, config, 404, 'Not found', 'There is no review for this decision.')
    return send(c, renderReviewPage(pageOf(c, config), view))
  })

  for (const step of ['recover', 'recover/confirm'] as const) {
    app.post(`${base}/reviews/:id/${step}`, session, csrf, async (c) => {
      const result = await recoverFromForm(
        config,
        c.req.param('id'),
        await c.req.parseBody(),
        step === 'recover/confirm',
      )
      const page = pageOf(c, config)
      if (result.status === 'confirm') return send(c, result.render(page))
      if (result.status === 'invalid')
        return message(c, config, result.httpStatus, result.title, result.text, result.back)
      const view = await reviewView(config, c.req.param('id'), result.notice)
      if (view === null) return message(c, config, 404, 'Not found', 'There is no review for this decision.')
      return send(c, renderReviewPage(page, view), result.status === 'recovered' ? 200 : 409)
    })
  }

  app.all(`${base}/*`, session, (c) =>
    message(c, config, 404, 'Not found', `No board page at ${c.req.path}.`),
  )
  app.onError((error, c) => {
    if (isPusharyStoreError(error) && (error.code === 'invalid_argument' || error.code === 'not_found')) {
      return message(c, config, 400, 'Not accepted', `${error.field || 'input'}: ${error.message}`)
    }
    if (isPusharyStoreError(error)) {
      return message(
        c,
        config,
        500,
        'Store error',
        `The review store failed (${error.code}): ${error.message}`,
      )
    }
    config.log('error', 'board: internal error', {
      error: error instanceof Error ? error.message : String(error),
    })
    return message(c, config, 500, 'Internal error', 'The board hit an internal error; see the logs.')
  })
  return app
}

async function reviewView(
  config: BoardConfig,
  decisionId: string,
  notice?: { text: string; refused: boolean },
) {
  const review = await config.store.get(decisionId)
  if (review === null) return null
  const [history, claim, action, receipts] = await Promise.all([
    config.store.history(decisionId),
    config.store.claimState(decisionId),
    config.store.actionOf(decisionId),
    config.store.listReceipts(decisionId),
  ])
  return {
    review,
    history,
    since: claim?.since ?? history.at(-1)?.at ?? null,
    action,
    receipts,
    nowMs: config.now(),
    notice,
  }
}
