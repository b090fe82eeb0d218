/**
 * `POST /review/:id/answer`: the reviewer's tap. Accepts a form post (no
 * JavaScript) or a fetch asking for JSON, checks CSRF and ownership, and
 * answers through the service's own `answerDecision`, so validation, the
 * callback and the event are exactly those of the API relay.
 */
import type { Context } from 'hono'
import type { AnswerOutcome, ReviewerDeps, StoredDecision } from '../service-types.js'
import { checkCsrf, type ReviewerEnv } from './device-auth.js'
import { describeOutcome } from './render.js'

/** What an answer post resolved to, before it is turned into HTML or JSON. */
export type AnswerPostResult =
  | { status: 'answered'; decision: StoredDecision }
  | {
      status:
        | 'forbidden'
        | 'not_found'
        | 'bad_request'
        | 'already_answered'
        | 'expired'
        | 'cancelled'
        | 'invalid_answer'
      message: string
    }

/**
 * HTTP status for each result.
 *
 * @example
 * httpStatusOf({ status: 'already_answered', message: '' }) // 409
 */
export function httpStatusOf(result: AnswerPostResult): 200 | 400 | 403 | 404 | 409 {
  switch (result.status) {
    case 'answered':
      return 200
    case 'bad_request':
    case 'invalid_answer':
      return 400
    case 'forbidden':
      return 403
    case 'not_found':
      return 404
    case 'already_answered':
    case 'expired':
    case 'cancelled':
      return 409
    default: {
      const unknown: never = result
      throw new Error(`answer post: unknown result ${JSON.stringify(unknown)}`)
    }
  }
}

/**
 * True when the caller wants JSON (the page script) rather than an HTML page.
 *
 * @example
 * return wantsJson(c) ? c.json(body, 401) : c.html(page, 401)
 */
export function wantsJson(c: Context): boolean {
  const accept = c.req.header('accept') ?? ''
  const type = c.req.header('content-type') ?? ''
  return accept.includes('application/json') || type.includes('application/json')
}

export async function readAnswerBody(
  c: Context<ReviewerEnv>,
): Promise<{ answer: unknown; csrf: string | null }> {
  const type = c.req.header('content-type') ?? ''
  if (type.includes('application/json')) {
    const body: unknown = await c.req.json().catch(() => null)
    if (typeof body !== 'object' || body === null) return { answer: undefined, csrf: null }
    const record = body as Record<string, unknown>
    return { answer: record.answer, csrf: typeof record.csrf === 'string' ? record.csrf : null }
  }
  if (type.includes('application/x-www-form-urlencoded') || type.includes('multipart/form-data')) {
    const form = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>)
    return { answer: form.answer, csrf: typeof form.csrf === 'string' ? form.csrf : null }
  }
  return { answer: undefined, csrf: null }
}

function fromOutcome(outcome: AnswerOutcome): AnswerPostResult {
  switch (outcome.status) {
    case 'answered':
      return { status: 'answered', decision: outcome.decision }
    case 'not_found':
    case 'already_answered':
    case 'expired':
    case 'cancelled':
    case 'invalid_answer':
      return { status: outcome.status, message: outcome.message }
    default: {
      const unknown: never = outcome
      throw new Error(`answerDecision: unknown outcome ${JSON.stringify(unknown)}`)
    }
  }
}

/**
 * Runs the answer post: CSRF, body, ownership (another customer's decision is
 * 403 before anything is written), then `answerDecision`.
 *
 * @example
 * const result = await handleAnswerPost(c, deps)
 * if (result.status === 'answered') console.log(result.decision.value)
 */
export async function handleAnswerPost(
  c: Context<ReviewerEnv>,
  deps: Pick<ReviewerDeps, 'getDecision' | 'answerDecision' | 'publicUrl'>,
): Promise<AnswerPostResult> {
  const body = await readAnswerBody(c)
  return answerAsDevice(c, deps, { decisionId: c.req.param('id') ?? '', ...body })
}

/**
 * One answer of this device: CSRF, a non-empty answer, ownership (another
 * customer's decision is 403 before anything is written), then the service's
 * `answerDecision` (pending only, callback, event). The single tap and every
 * item of a batch answer go through here.
 *
 * @example
 * const result = await answerAsDevice(c, deps, { decisionId, answer: 'yes', csrf })
 */
export async function answerAsDevice(
  c: Context<ReviewerEnv>,
  deps: Pick<ReviewerDeps, 'getDecision' | 'answerDecision' | 'publicUrl'>,
  input: { readonly decisionId: string; readonly answer: unknown; readonly csrf: string | null },
): Promise<AnswerPostResult> {
  const csrf = checkCsrf(c, deps.publicUrl, input.csrf)
  if (csrf.status === 'rejected') {
    return { status: 'forbidden', message: `Refused a cross-site answer (${csrf.reason}).` }
  }
  if (typeof input.answer !== 'string' || input.answer.trim() === '') {
    return { status: 'bad_request', message: 'The field "answer" must be a non-empty string.' }
  }
  const decision = await deps.getDecision(input.decisionId)
  if (decision === null) return { status: 'not_found', message: 'There is no such decision.' }
  if (decision.externalId !== c.get('externalId')) {
    return { status: 'forbidden', message: 'This decision is not addressed to you.' }
  }
  return fromOutcome(await deps.answerDecision(input.decisionId, input.answer, 'reviewer'))
}

/**
 * The JSON body the page script reads (`message` is shown to the reviewer).
 *
 * @example
 * return c.json(answerJson(result), httpStatusOf(result))
 */
export function answerJson(result: AnswerPostResult): Record<string, unknown> {
  if (result.status === 'answered') {
    return {
      status: 'answered',
      decisionId: result.decision.decisionId,
      value: result.decision.value,
      message: describeOutcome(result.decision),
    }
  }
  return { status: result.status, message: result.message }
}
