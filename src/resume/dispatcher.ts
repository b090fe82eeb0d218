import { checkedCallbackMaxBytes, readCallbackBody } from '../pushary/callback-request.js'
import { parseDecisionCallback, SIGNATURE_HEADER, verifyWebhookSignature } from '../pushary/callbacks.js'
import { PusharyValidationError } from '../pushary/errors.js'
import { idSchema } from '../pushary/identity.js'
import type { PusharyReview } from '../store/review-schema.js'
import {
  type PusharyDispatcher,
  type PusharyDispatcherOptions,
  type PusharyDispatchResult,
  type PusharyReconcileReport,
  RETRYABLE_DISPATCH_STATUSES,
} from './dispatch-types.js'
import { recoverDecision } from './recovery.js'
import type { DispatchContext, ReviewKinds } from './review-kinds.js'
import { claimLease, errorMessage, parentOptions, resumePendingReview } from './review-resumer.js'
import { storedStateResult } from './review-status.js'
import { createKeyedQueue } from './run-queue.js'
import { capabilityProblem, findConfigurationIssues } from './worker-capability.js'
import { createWorkerLog } from './worker-log.js'

/**
 * Results after which the review is no longer `pending`. Anything else
 * (retry-later statuses, a mismatch, an invalid answer, an error) leaves it
 * pending; a misjudged cursor only makes the next round start over.
 */
const LEFT_PENDING: ReadonlySet<string> = new Set(['resumed', 'duplicate', 'stale', 'uncertain'])

/**
 * The callback secret, or `null` for a dispatcher built without one (omitted
 * or `false`). A key present with anything but a non-empty string is the
 * classic unset environment variable, refused before any callback arrives.
 */
function checkedWebhookSecret(options: PusharyDispatcherOptions): string | null {
  if (!options || typeof options !== 'object') {
    throw new PusharyValidationError({
      code: 'invalid_options',
      operation: 'createPusharyDispatcher',
      field: 'options',
      message: 'options must be { mastra, client, store, webhookSecret? }',
    })
  }
  if (!Object.hasOwn(options, 'webhookSecret') || options.webhookSecret === false) return null
  const secret = options.webhookSecret
  if (typeof secret !== 'string' || secret.trim() === '') {
    throw new PusharyValidationError({
      code: 'invalid_options',
      operation: 'createPusharyDispatcher',
      field: 'webhookSecret',
      message:
        'webhookSecret is missing or empty (is PUSHARY_WEBHOOK_SECRET set?); every callback would fail as unsigned. ' +
        'Pass the secret, or webhookSecret: false for a dispatcher that only reconciles',
    })
  }
  return secret
}

/**
 * Builds the dispatcher over the kinds of review the rooms above register
 * (`createPusharyDispatcher` in `agents/dispatcher.ts` passes every kind).
 * Collaborators are passed in; nothing is global.
 */
export function createDispatcher(options: PusharyDispatcherOptions, kinds: ReviewKinds): PusharyDispatcher {
  const { store } = options
  const webhookSecret = checkedWebhookSecret(options)
  const callbackMaxBytes = checkedCallbackMaxBytes(
    options.callbackMaxBytes,
    'createPusharyDispatcher',
    'callbackMaxBytes',
  )
  const context: DispatchContext = { mastra: options.mastra, client: options.client, store, options, kinds }
  const now = options.now ?? (() => new Date())
  const queue = createKeyedQueue()
  const log = createWorkerLog(options.mastra, now)

  /** Logs what an operator must act on: a resume this worker cannot do, a review parked `uncertain`. */
  function observed<T extends { status: string; decisionId?: string; reason?: string; missing?: string }>(
    result: T,
  ): T {
    if (result.status === 'misconfigured') {
      // One line a minute per kind of gap, not one per review.
      log.warn(
        `misconfigured:${result.missing ?? result.reason}`,
        `cannot resume ${result.decisionId ?? 'a review'} on this worker, left pending and retried: ${result.reason}`,
      )
    } else if (result.status === 'uncertain') {
      log.warn(
        `uncertain:${result.decisionId}`,
        `review ${result.decisionId} is parked uncertain (${result.reason}); an operator resolves it: pushary-mastra reviews show ${result.decisionId}, then reviews recover`,
      )
    }
    return result
  }

  async function resumeInQueue(
    decisionId: string,
    readJustNow: PusharyReview | null,
  ): Promise<PusharyDispatchResult> {
    const review = readJustNow ?? (await store.get(decisionId))
    if (!review) return { status: 'unknown', decisionId, reason: 'no review is saved for this decision yet' }
    if (review.target === 'batch-parent') {
      if (review.state !== 'pending') return { status: 'duplicate', decisionId }
      const parent = await kinds.parent.resume({
        mastra: context.mastra,
        store,
        review,
        ...parentOptions(context),
      })
      if (parent.status === 'misconfigured') {
        return { status: 'misconfigured', decisionId, reason: parent.reason, missing: parent.missing }
      }
      return { status: 'parent', decisionId, parent }
    }
    // Agent reviews take the same verified, claimed path (issue 10), once
    // this worker has the agent, its tool and the review's run.
    if (review.target === 'agent') {
      const problem =
        review.state === 'pending'
          ? await capabilityProblem(context.mastra, review, kinds.agent.capabilityProblem)
          : null
      if (problem) return { status: 'misconfigured', decisionId, ...problem }
      return kinds.agent.resume(context, decisionId)
    }
    const blocked = await storedStateResult(store, review, { leaseMs: claimLease(context), now: now() })
    return blocked ?? resumePendingReview(context, review)
  }

  function checkedDecisionId(decisionId: string, operation: string): void {
    const parsed = idSchema.safeParse(decisionId)
    if (!parsed.success) {
      throw PusharyValidationError.fromZod(parsed.error, {
        operation,
        code: 'invalid_identifier',
        fieldPrefix: 'decisionId',
      })
    }
  }

  async function resumeDecision(decisionId: string): Promise<PusharyDispatchResult> {
    checkedDecisionId(decisionId, 'dispatcher.resumeDecision')
    const review = await store.get(decisionId)
    if (!review) return { status: 'unknown', decisionId, reason: 'no review is saved for this decision yet' }
    // With nothing queued before it on this run, no resume of this process
    // can move the review between the read above and the queued work, so the
    // read is reused; a resume that waited behind another reads it again.
    // Other writers (processes, operators) could move it either way: the
    // claim's compare-and-set decides, as it always did.
    const readJustNow = queue.idle(review.runId) ? review : null
    // One process never races itself on one run (Mastra's 2 s wait would lose answers).
    return observed(await queue.run(review.runId, () => resumeInQueue(decisionId, readJustNow)))
  }

  async function recover(decisionId: string): Promise<PusharyDispatchResult> {
    checkedDecisionId(decisionId, 'dispatcher.recover')
    const review = await store.get(decisionId)
    return observed(
      await queue.run(review?.runId ?? `decision:${decisionId}`, () => recoverDecision(context, decisionId)),
    )
  }

  async function handleCallback(request: Request): Promise<Response> {
    const reply = (status: number, body: unknown) =>
      new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } })
    // Not a forgery but our own configuration: say so instead of a 401 on every callback.
    if (webhookSecret === null) return reply(500, { error: 'webhook_secret_not_configured' })
    // Capped before anything else: an unsigned body is attacker-sized.
    const read = await readCallbackBody(request, callbackMaxBytes)
    if (read.status === 'too_large') {
      return reply(413, { error: 'callback_body_too_large', maxBytes: read.maxBytes })
    }
    const { raw } = read
    if (!verifyWebhookSignature(raw, request.headers.get(SIGNATURE_HEADER), webhookSecret)) {
      log.warn(
        'signature',
        `callback refused (401): its ${SIGNATURE_HEADER} does not match this dispatcher's webhookSecret; check PUSHARY_WEBHOOK_SECRET (it must be the secret of the service that sends the callbacks)`,
      )
      return reply(401, { error: 'invalid_signature' })
    }
    const callback = parseDecisionCallback(raw)
    if (!callback) return reply(400, { error: 'invalid_callback_body' })
    const decisionId = callback.decisionId || callback.correlationId
    try {
      // Durable inbox first: once we answer 200 the sender stops retrying.
      await store.recordReceipt({ decisionId, receivedAt: now().toISOString(), body: raw })
    } catch (error) {
      return reply(503, { error: 'receipt_not_recorded', reason: errorMessage(error) })
    }
    let result: PusharyDispatchResult
    try {
      result = await resumeDecision(decisionId)
    } catch (error) {
      return reply(503, { status: 'error', decisionId, reason: errorMessage(error) })
    }
    const retry = (RETRYABLE_DISPATCH_STATUSES as readonly string[]).includes(result.status)
    return reply(retry ? 503 : 200, result)
  }

  // Where the next reconcile round continues. Without it, more than `limit`
  // old unanswered reviews would hide every newer answered one forever.
  let reconcileCursor: string | undefined

  async function pendingPage(limit: number) {
    if (reconcileCursor !== undefined) {
      const page = await store.listByState('pending', { limit, after: reconcileCursor })
      if (page.length > 0) return page
      reconcileCursor = undefined
    }
    return store.listByState('pending', { limit })
  }

  async function reconcile(reconcileOptions: { limit?: number } = {}): Promise<PusharyReconcileReport> {
    const limit = reconcileOptions.limit ?? 100
    const pending = await pendingPage(limit)
    const report: PusharyReconcileReport = { checked: 0, resumed: 0, results: [], parents: [] }
    let lastStillPending: string | undefined
    for (const review of pending) {
      report.checked++
      let result: PusharyReconcileReport['results'][number]
      try {
        result = await resumeDecision(review.decisionId)
      } catch (error) {
        result = { status: 'error', decisionId: review.decisionId, reason: errorMessage(error) }
      }
      if (result.status === 'resumed') report.resumed++
      if (result.status === 'parent') report.parents.push(result.parent)
      report.results.push(result)
      if (!LEFT_PENDING.has(result.status)) lastStillPending = review.decisionId
    }
    // A short page reached the end: start over next time. Otherwise continue
    // after the last review that is still waiting (rows that settled have left
    // the pending set, so the old cursor still marks the right place).
    reconcileCursor = pending.length < limit ? undefined : (lastStillPending ?? reconcileCursor)
    try {
      report.parents.push(
        ...(await kinds.parent.settleSuspended({
          mastra: context.mastra,
          store,
          limit,
          ...parentOptions(context),
        })),
      )
    } catch (error) {
      report.parents.push({ status: 'failed', reason: errorMessage(error) })
    }
    for (const parent of report.parents) {
      if (parent.status === 'misconfigured' || parent.status === 'uncertain') {
        observed({ ...parent, decisionId: parent.reviewId })
      }
    }
    return report
  }

  function checkConfiguration() {
    return findConfigurationIssues({
      mastra: context.mastra,
      store,
      checkAgent: kinds.agent.capabilityProblem,
    })
  }

  return { handleCallback, reconcile, resumeDecision, recover, checkConfiguration }
}
