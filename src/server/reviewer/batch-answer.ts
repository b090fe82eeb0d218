/**
 * `POST /review/batch/answer`: "Approve all N" / "Deny all N". The post names
 * the decision IDs the page drew; every one is checked (it exists, is
 * addressed to this device, belongs to the named batch, is a confirm) before
 * anything is written, then each is answered through the same path as a
 * single tap (`answerAsDevice`: CSRF, ownership, pending), so each gets its
 * own verified callback and resume. Nothing else is answered.
 */
import type { Context } from 'hono'
import type { ReviewerDeps } from '../service-types.js'
import { type AnswerPostResult, answerAsDevice } from './answer.js'
import { cardSource } from './card-source.js'
import { checkCsrf, type ReviewerEnv } from './device-auth.js'

/** How many items one post may answer; a batch card never lists more than the page holds. */
export const BATCH_ANSWER_MAX = 500

/** The outcome of a batch post, before it becomes JSON or a redirect. */
export type BatchAnswerResult =
  | {
      readonly status: 'answered' | 'partly_answered'
      readonly results: ReadonlyArray<{ decisionId: string; result: AnswerPostResult }>
      readonly message: string
    }
  | { readonly status: 'refused'; readonly httpStatus: 400 | 403 | 404; readonly message: string }

interface BatchBody {
  answer: unknown
  csrf: string | null
  group: unknown
  decisionIds: unknown
}

async function readBatchBody(c: Context<ReviewerEnv>): Promise<BatchBody> {
  const type = c.req.header('content-type') ?? ''
  if (type.includes('application/json')) {
    const body = (await c.req.json().catch(() => null)) as Record<string, unknown> | null
    if (typeof body !== 'object' || body === null) {
      return { answer: undefined, csrf: null, group: undefined, decisionIds: undefined }
    }
    return {
      answer: body.answer,
      csrf: typeof body.csrf === 'string' ? body.csrf : null,
      group: body.group,
      decisionIds: body.decisionIds,
    }
  }
  const form = await c.req.parseBody({ all: true }).catch(() => ({}) as Record<string, unknown>)
  const ids = form.decisionId
  return {
    answer: form.answer,
    csrf: typeof form.csrf === 'string' ? form.csrf : null,
    group: form.group,
    decisionIds: ids === undefined ? undefined : Array.isArray(ids) ? ids : [ids],
  }
}

function refused(httpStatus: 400 | 403 | 404, message: string): BatchAnswerResult {
  return { status: 'refused', httpStatus, message }
}

/**
 * Runs a batch post: validates every listed item first (nothing is written
 * when one is refused), then answers each listed item once.
 *
 * @example
 * const result = await handleBatchAnswerPost(c, deps)
 */
export async function handleBatchAnswerPost(
  c: Context<ReviewerEnv>,
  deps: Pick<ReviewerDeps, 'getDecision' | 'answerDecision' | 'publicUrl'>,
): Promise<BatchAnswerResult> {
  const body = await readBatchBody(c)
  const csrf = checkCsrf(c, deps.publicUrl, body.csrf)
  if (csrf.status === 'rejected') return refused(403, `Refused a cross-site answer (${csrf.reason}).`)
  if (body.answer !== 'yes' && body.answer !== 'no') {
    return refused(400, 'The field "answer" must be "yes" or "no".')
  }
  if (typeof body.group !== 'string' || body.group === '') {
    return refused(400, 'The field "group" must name the batch.')
  }
  const ids = body.decisionIds
  if (
    !Array.isArray(ids) ||
    ids.length === 0 ||
    ids.length > BATCH_ANSWER_MAX ||
    !ids.every((id): id is string => typeof id === 'string' && id !== '') ||
    new Set(ids).size !== ids.length
  ) {
    return refused(
      400,
      `The field "decisionId" must list 1 to ${BATCH_ANSWER_MAX} distinct decision IDs, the items shown.`,
    )
  }
  for (const id of ids) {
    const decision = await deps.getDecision(id)
    if (decision === null) return refused(404, `decisionId ${id}: there is no such decision.`)
    if (decision.externalId !== c.get('externalId')) {
      return refused(403, `decisionId ${id}: this decision is not addressed to you.`)
    }
    const source = cardSource(decision)
    if (source.kind !== 'batch' || source.group !== body.group) {
      return refused(400, `decisionId ${id}: this decision is not an item of the batch answered.`)
    }
    if (decision.type !== 'confirm') {
      return refused(400, `decisionId ${id}: only approve/deny items can be answered all at once.`)
    }
  }
  const results: Array<{ decisionId: string; result: AnswerPostResult }> = []
  for (const decisionId of ids) {
    results.push({
      decisionId,
      result: await answerAsDevice(c, deps, { decisionId, answer: body.answer, csrf: body.csrf }),
    })
  }
  const done = results.filter((entry) => entry.result.status === 'answered').length
  const verb = body.answer === 'yes' ? 'Approved' : 'Denied'
  const message =
    done === ids.length
      ? `${verb} all ${done} items.`
      : `${verb} ${done} of ${ids.length} items; the others were already answered, expired or cancelled.`
  return { status: done === ids.length ? 'answered' : 'partly_answered', results, message }
}
