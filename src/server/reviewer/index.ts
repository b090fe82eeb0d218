/**
 * The reviewer page: a Hono sub-app the decision service mounts at `/`.
 * A device enrols by opening `/e/:token` and tapping "Link this phone" (the
 * POST consumes the token). An enrolled device (HttpOnly cookie) sees and answers only its own
 * customer's pending decisions; the list stays current over server-sent events.
 */
import type { Context } from 'hono'
import { Hono } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import { setCookie } from 'hono/cookie'
import type { SlotLimiter } from '../connection-limits.js'
import type { ReviewerDeps } from '../service-types.js'
import { answerJson, handleAnswerPost, httpStatusOf, wantsJson } from './answer.js'
import { loadApproverSets } from './approver-set-card.js'
import { handleBatchAnswerPost } from './batch-answer.js'
import { BATCH_ANSWER_PATH } from './batch-card.js'
import {
  checkNotCrossSite,
  createNonce,
  deviceCookieName,
  type ReviewerEnv,
  requireDevice,
} from './device-auth.js'
import { type ReviewerEventOptions, streamReviewerEvents } from './events.js'
import type { SafeHtml } from './html.js'
import {
  renderDecisionCardFragment,
  renderDecisionList,
  renderDecisionPage,
  renderEnrollPage,
  renderMessagePage,
  renderReviewPage,
} from './render.js'

/** Options beyond the service dependencies; tests shorten the keep-alive. */
export interface ReviewerAppOptions {
  readonly events?: ReviewerEventOptions
  /** Lifetime of the device cookie. Default 180 days. */
  readonly deviceCookieMaxAgeSeconds?: number
  /** Caps concurrent event streams per device; unlimited when absent. */
  readonly streams?: SlotLimiter
}

type StatusCode = 200 | 400 | 401 | 403 | 404 | 409 | 410 | 429

const ENROLL_TOKEN_SHAPE = /^[A-Za-z0-9_-]{1,200}$/

function page(c: Context<ReviewerEnv>, markup: SafeHtml, status: StatusCode = 200): Response {
  const nonce = c.get('nonce')
  c.header(
    'Content-Security-Policy',
    [
      "default-src 'none'",
      `script-src 'nonce-${nonce}'`,
      `style-src 'nonce-${nonce}'`,
      "connect-src 'self'",
      "img-src 'self' data:",
      "form-action 'self'",
      "base-uri 'none'",
      "frame-ancestors 'none'",
    ].join('; '),
  )
  return c.html(markup.value, status)
}

function message(
  c: Context<ReviewerEnv>,
  status: StatusCode,
  title: string,
  text: string,
  backLink = false,
): Response {
  return page(c, renderMessagePage({ title, message: text, nonce: c.get('nonce'), backLink }), status)
}

function conflictingCookies(c: Context<ReviewerEnv>): Response {
  const text =
    "This browser sent two device cookies for this site, so one of them was planted by another page. Nothing is shown until that is resolved: clear this site's cookies, then open your enrollment link again."
  if (wantsJson(c)) return c.json({ status: 'conflicting_device_cookies', message: text }, 400)
  return message(c, 400, 'Two device cookies', text)
}

function notEnrolled(c: Context<ReviewerEnv>): Response {
  const text =
    'This device is not enrolled. Open the enrollment link you were sent on this device, then come back here.'
  if (wantsJson(c)) return c.json({ status: 'not_enrolled', message: text }, 401)
  return message(c, 401, 'Device not enrolled', text)
}

/**
 * Builds the reviewer sub-app. Mount it on the service app at the root:
 * `app.route('/', createReviewerApp(deps))`.
 *
 * @example
 * const app = new Hono()
 * app.route('/', createReviewerApp(reviewerDeps))
 */
export function createReviewerApp(deps: ReviewerDeps, options: ReviewerAppOptions = {}): Hono<ReviewerEnv> {
  const app = new Hono<ReviewerEnv>()
  const secureCookie = deps.publicUrl.startsWith('https:')
  const cookieName = deviceCookieName(deps.publicUrl)
  const cookieMaxAge = options.deviceCookieMaxAgeSeconds ?? 180 * 24 * 60 * 60
  const device = requireDevice(deps, notEnrolled, conflictingCookies)

  // Scoped to the page's own paths: a `*` middleware here would also run for
  // the API routes of the app this is mounted on.
  for (const path of ['/e/*', '/review', '/review/*']) {
    app.use(path, async (c, next) => {
      c.set('nonce', createNonce())
      await next()
      c.header('Cache-Control', 'no-store')
      c.header('X-Content-Type-Options', 'nosniff')
      c.header('Referrer-Policy', 'no-referrer')
      c.header('X-Frame-Options', 'DENY')
    })
  }

  const linkExpired = (c: Context<ReviewerEnv>): Response =>
    message(
      c,
      410,
      'Enrollment link expired',
      'This enrollment link has expired or was already used. Ask the application for a new link.',
    )

  // GET only shows a confirmation: link previews and mail scanners fetch URLs
  // before the person opens them, and a consuming GET would burn the link.
  app.get('/e/:token', async (c) => {
    const token = c.req.param('token')
    const enrollment = ENROLL_TOKEN_SHAPE.test(token) ? await deps.peekEnrollment(token) : null
    if (enrollment === null) return linkExpired(c)
    return page(c, renderEnrollPage({ externalId: enrollment.externalId, token, nonce: c.get('nonce') }))
  })

  // No CSRF token: the URL token is the secret and works once. A post the
  // browser marks cross-site is still refused, before the token is consumed.
  app.post('/e/:token', async (c) => {
    const sameSite = checkNotCrossSite(c, deps.publicUrl)
    if (sameSite.status === 'rejected') {
      return message(c, 403, 'Link not accepted', `Refused a cross-site enrollment (${sameSite.reason}).`)
    }
    const token = c.req.param('token')
    const enrollment = ENROLL_TOKEN_SHAPE.test(token) ? await deps.consumeEnrollment(token) : null
    if (enrollment === null) return linkExpired(c)
    const { deviceToken } = await deps.registerDevice(enrollment.externalId)
    setCookie(c, cookieName, deviceToken, {
      httpOnly: true,
      sameSite: 'Lax',
      path: '/',
      secure: secureCookie,
      maxAge: cookieMaxAge,
    })
    return c.redirect('/review', 303)
  })

  app.get('/review', device, async (c) => {
    const externalId = c.get('externalId')
    const decisions = await deps.listPendingFor(externalId)
    const sets = await loadApproverSets(deps, decisions)
    return page(
      c,
      renderReviewPage({ externalId, decisions, sets, csrf: c.get('csrf'), nonce: c.get('nonce') }),
    )
  })

  app.get('/review/list', device, async (c) => {
    const decisions = await deps.listPendingFor(c.get('externalId'))
    const sets = await loadApproverSets(deps, decisions)
    return c.html(renderDecisionList(decisions, c.get('csrf'), sets).value)
  })

  app.get('/review/events', device, (c) => {
    const release = options.streams === undefined ? () => {} : options.streams.acquire(c.get('deviceId'))
    if (release === null) {
      c.header('Retry-After', '5')
      return c.json({ status: 'too_many_streams', message: 'Too many open live views for this device.' }, 429)
    }
    return streamReviewerEvents(c, deps, { ...options.events, onClose: release })
  })

  // Registered before `/review/:id/answer`, whose pattern it would also match.
  app.post(BATCH_ANSWER_PATH, device, bodyLimit({ maxSize: 256 * 1024 }), async (c) => {
    const result = await handleBatchAnswerPost(c, deps)
    const status = result.status === 'refused' ? result.httpStatus : result.status === 'answered' ? 200 : 409
    if (wantsJson(c)) {
      return c.json(
        {
          status: result.status,
          message: result.message,
          ...(result.status === 'refused'
            ? {}
            : {
                results: result.results.map((entry) => ({
                  decisionId: entry.decisionId,
                  ...answerJson(entry.result),
                })),
              }),
        },
        status,
      )
    }
    if (result.status === 'answered') return c.redirect('/review', 303)
    return message(c, status, 'Answers not all recorded', result.message, true)
  })

  /** The device's own decision with its approvers' set, or the page that refuses it. */
  const ownDecision = async (c: Context<ReviewerEnv>) => {
    const decision = await deps.getDecision(c.req.param('id') ?? '')
    if (decision === null) {
      return { refused: message(c, 404, 'Decision not found', 'There is no such decision.', true) } as const
    }
    if (decision.externalId !== c.get('externalId')) {
      return {
        refused: message(c, 403, 'Not your decision', 'This decision is not addressed to you.', true),
      } as const
    }
    const set = (await loadApproverSets(deps, [decision])).get(decision.decisionId)
    return { decision, set } as const
  }

  app.get('/review/:id', device, async (c) => {
    const own = await ownDecision(c)
    if ('refused' in own) return own.refused
    return page(c, renderDecisionPage({ ...own, csrf: c.get('csrf'), nonce: c.get('nonce') }))
  })

  // The card alone, for the decision page's script to re-read while it is open.
  app.get('/review/:id/card', device, async (c) => {
    const own = await ownDecision(c)
    if ('refused' in own) return own.refused
    return c.html(renderDecisionCardFragment({ ...own, csrf: c.get('csrf') }).value)
  })

  app.post('/review/:id/answer', device, bodyLimit({ maxSize: 64 * 1024 }), async (c) => {
    const result = await handleAnswerPost(c, deps)
    const status = httpStatusOf(result)
    if (wantsJson(c)) return c.json(answerJson(result), status)
    if (result.status === 'answered') {
      // Post/redirect/get: the decision page then shows the recorded outcome.
      return c.redirect(`/review/${encodeURIComponent(result.decision.decisionId)}`, 303)
    }
    return message(c, status, 'Answer not recorded', result.message, true)
  })

  return app
}

export type { ReviewerEnv } from './device-auth.js'
