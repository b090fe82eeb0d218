/**
 * Approval links: what `approvalUrl: true` on create returns. The link is
 * bound to one decision and lives no longer than it; the token in the URL is
 * the only credential (only its SHA-256 is stored), so a customer without an
 * enrolled device can still answer, from any browser the application
 * delivers the link to. Opening the link only shows the question (a link
 * preview answers nothing); the answer is a POST through the service's one
 * answer path, so validation, the callback and the event are the API's.
 *
 * A link answers only when it was handed to the site key: the application
 * delivers it to the person. A bound key is the customer's agent, the one
 * asking, so a link in its hands would let the asker approve its own request;
 * the API never gives it one, and a link recorded as issued to one, or issued
 * before recipients were recorded, is refused here as well.
 */
import { randomBytes } from 'node:crypto'
import type { Client } from '@libsql/client'
import { type Context, Hono } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import { SITE_PRINCIPAL } from '../bound-keys.js'
import { hashToken } from '../enrollment-repo.js'
import type { ReviewerDeps } from '../service-types.js'
import { loadApproverSets } from './approver-set-card.js'
import { checkNotCrossSite, createNonce } from './device-auth.js'
import type { SafeHtml } from './html.js'
import { renderDecisionCard, renderMessagePage, renderPage } from './render.js'

/** Storage of approval links. */
export interface ApprovalLinks {
  /** A new link for the decision, valid until `expiresMs`, handed to `issuedTo` (`site` or a bound key's prefix). */
  issue(decisionId: string, expiresMs: number, issuedTo: string): Promise<string>
  /** The decision of a live link and who received it (null: before v4 recorded it), else null. */
  resolve(token: string): Promise<{ decisionId: string; issuedTo: string | null } | null>
}

const TOKEN_SHAPE = /^[A-Za-z0-9_-]{16,200}$/

/**
 * Builds the link store over the service database; links are
 * `${publicUrl}/a/<token>`.
 *
 * @example
 * const links = createApprovalLinks(db, publicUrl, Date.now)
 */
export function createApprovalLinks(db: Client, publicUrl: string, now: () => number): ApprovalLinks {
  return {
    async issue(decisionId, expiresMs, issuedTo) {
      const token = randomBytes(24).toString('base64url')
      await db.execute({
        sql: 'INSERT INTO approval_links (token_hash, decision_id, created_at, expires_ms, issued_to) VALUES (?, ?, ?, ?, ?)',
        args: [hashToken(token), decisionId, new Date(now()).toISOString(), expiresMs, issuedTo],
      })
      return `${publicUrl}/a/${token}`
    },
    async resolve(token) {
      if (!TOKEN_SHAPE.test(token)) return null
      const result = await db.execute({
        sql: 'SELECT decision_id, issued_to FROM approval_links WHERE token_hash = ? AND expires_ms > ?',
        args: [hashToken(token), now()],
      })
      const id = result.rows[0]?.decision_id
      const issuedTo = result.rows[0]?.issued_to
      return typeof id === 'string'
        ? { decisionId: id, issuedTo: typeof issuedTo === 'string' ? issuedTo : null }
        : null
    },
  }
}

type Status = 200 | 400 | 403 | 404 | 409 | 410

/**
 * The `/a/:token` page: GET shows the decision with its answer buttons, POST
 * records the answer.
 *
 * @example
 * app.route('/', createApprovalLinkApp(links, service.reviewerDeps))
 */
export function createApprovalLinkApp(
  links: ApprovalLinks,
  deps: Pick<ReviewerDeps, 'getDecision' | 'answerDecision' | 'publicUrl' | 'listApproverSet'>,
): Hono {
  const app = new Hono()

  const page = (c: Context, markup: SafeHtml, nonce: string, status: Status = 200) => {
    c.header(
      'Content-Security-Policy',
      `default-src 'none'; style-src 'nonce-${nonce}'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`,
    )
    c.header('Cache-Control', 'no-store')
    c.header('Referrer-Policy', 'no-referrer')
    c.header('X-Frame-Options', 'DENY')
    return c.html(markup.value, status)
  }
  const message = (c: Context, status: Status, title: string, text: string) => {
    const nonce = createNonce()
    return page(c, renderMessagePage({ title, message: text, nonce }), nonce, status)
  }
  const gone = (c: Context) =>
    message(c, 410, 'Link expired', 'This approval link has expired. Ask the application for a new one.')
  // Who would answer through the link is whoever it was handed to.
  const refused = (c: Context) =>
    message(
      c,
      403,
      'Link cannot answer',
      'This approval link was not issued to the application, so it cannot answer this decision. Ask the application for a new one.',
    )
  const live = async (c: Context) => {
    const link = await links.resolve(c.req.param('token') ?? '')
    if (link === null) return { response: gone(c) } as const
    if (link.issuedTo !== SITE_PRINCIPAL) return { response: refused(c) } as const
    return { decisionId: link.decisionId } as const
  }

  const show = async (c: Context, decisionId: string, status: Status = 200) => {
    const decision = await deps.getDecision(decisionId)
    if (decision === null) return gone(c)
    const nonce = createNonce()
    const action = `/a/${encodeURIComponent(c.req.param('token') ?? '')}`
    const set = (await loadApproverSets(deps, [decision])).get(decision.decisionId)
    const card = renderDecisionCard(decision, { csrf: '', index: 0, action, set })
    return page(c, renderPage(card, { title: decision.question, nonce }), nonce, status)
  }

  app.get('/a/:token', async (c) => {
    const link = await live(c)
    return 'response' in link ? link.response : show(c, link.decisionId)
  })

  app.post('/a/:token', bodyLimit({ maxSize: 64 * 1024 }), async (c) => {
    const sameSite = checkNotCrossSite(c, deps.publicUrl)
    if (sameSite.status === 'rejected') {
      return message(c, 403, 'Answer not accepted', `Refused a cross-site answer (${sameSite.reason}).`)
    }
    const link = await live(c)
    if ('response' in link) return link.response
    const { decisionId } = link
    const form = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>)
    const answer = form.answer
    if (typeof answer !== 'string') return message(c, 400, 'Answer not recorded', 'No answer was sent.')
    const outcome = await deps.answerDecision(decisionId, answer, 'reviewer')
    switch (outcome.status) {
      case 'answered':
        return show(c, decisionId)
      case 'invalid_answer':
        return message(c, 400, 'Answer not recorded', outcome.message)
      case 'not_found':
        return gone(c)
      case 'already_answered':
      case 'expired':
      case 'cancelled':
        return message(c, 409, 'Answer not recorded', outcome.message)
      default: {
        const unknown: never = outcome
        return unknown
      }
    }
  })

  return app
}
