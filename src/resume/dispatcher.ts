import { checkedCallbackMaxBytes, readCallbackBody } from '../pushary/callback-request.js'
import { parseDecisionCallback, SIGNATURE_HEADER, verifyWebhookSignature } from '../pushary/callbacks.js'
import { PusharyValidationError } from '../pushary/errors.js'
import { idSchema } from '../pushary/identity.js'
import type { PusharyReview } from '../store/review-schema.js'
import { noteDispatchResult } from './dispatch-notes.js'
import {
  type PusharyDispatcher,
  type PusharyDispatcherOptions,
  type PusharyDispatchResult,
  RETRYABLE_DISPATCH_STATUSES,
} from './dispatch-types.js'
import { createReconciler } from './reconciler.js'
import { recoverDecision } from './recovery.js'
import { errorMessage } from './resume-error.js'
import { claimLease, type DispatchContext, parentOptions, type ReviewKinds } from './review-kinds.js'
import { resumePendingReview } from './review-resumer.js'
import { storedStateResult } from './review-status.js'
import { createKeyedQueue, type KeyedQueue } from './run-queue.js'
import { capabilityProblem, findConfigurationIssues } from './worker-capability.js'
import { createWorkerLog, type WorkerLog } from './worker-log.js'

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

/** What one dispatcher's calls share: its collaborators, its queue and its log. */
interface Dispatch {
  context: DispatchContext
  webhookSecret: string | null
  callbackMaxBytes: number
  now: () => Date
  queue: KeyedQueue
  log: WorkerLog
}

/** The queued part of a resume: hands the review to the path of its kind. */
async function resumeInQueue(dispatch: Dispatch, review: PusharyReview): Promise<PusharyDispatchResult> {
  const { context } = dispatch
  const { decisionId } = review
  if (review.target === 'batch-parent') {
    if (review.state !== 'pending') return { status: 'duplicate', decisionId }
    const parent = await context.kinds.parent.resume({
      mastra: context.mastra,
      store: context.store,
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
        ? await capabilityProblem(context.mastra, review, context.kinds.agent.capabilityProblem)
        : null
    if (problem) return { status: 'misconfigured', decisionId, ...problem }
    return context.kinds.agent.resume(context, decisionId)
  }
  const blocked = await storedStateResult(context.store, review, {
    leaseMs: claimLease(context),
    now: dispatch.now(),
  })
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

/** `dispatcher.resumeDecision`: one answered decision to its exact target, at most once. */
async function resumeDecision(dispatch: Dispatch, decisionId: string): Promise<PusharyDispatchResult> {
  const review = await dispatch.context.store.get(decisionId)
  if (!review) return { status: 'unknown', decisionId, reason: 'no review is saved for this decision yet' }
  const { queue } = dispatch
  // With nothing queued before it on this run, no resume of this process
  // can move the review between the read above and the queued work, so the
  // read is reused; a resume that waited behind another reads it again.
  // Other writers (processes, operators) could move it either way: the
  // claim's compare-and-set decides, as it always did.
  const readJustNow = queue.idle(review.runId)
  // One process never races itself on one run (Mastra's 2 s wait would lose answers).
  const result = await queue.run(review.runId, async () => {
    const current = readJustNow ? review : await dispatch.context.store.get(decisionId)
    if (!current)
      return { status: 'unknown' as const, decisionId, reason: 'no review is saved for this decision yet' }
    return resumeInQueue(dispatch, current)
  })
  await noteDispatchResult(dispatch.context.mastra, dispatch.context.store, result)
  return dispatch.log.observe(result)
}

/** `dispatcher.handleCallback`: signature, durable inbox, then the verified resume. */
async function handleCallback(dispatch: Dispatch, request: Request): Promise<Response> {
  const reply = (status: number, body: unknown) =>
    new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } })
  const { webhookSecret } = dispatch
  // Not a forgery but our own configuration: say so instead of a 401 on every callback.
  if (webhookSecret === null) return reply(500, { error: 'webhook_secret_not_configured' })
  // Capped before anything else: an unsigned body is attacker-sized.
  const read = await readCallbackBody(request, dispatch.callbackMaxBytes)
  if (read.status === 'too_large') {
    return reply(413, { error: 'callback_body_too_large', maxBytes: read.maxBytes })
  }
  const raw = read.raw
  if (!verifyWebhookSignature(raw, request.headers.get(SIGNATURE_HEADER), webhookSecret)) {
    dispatch.log.warn(
      'signature',
      `callback refused (401): its ${SIGNATURE_HEADER} does not match this dispatcher's webhookSecret; check PUSHARY_WEBHOOK_SECRET (it must be the secret of the service that sends the callbacks)`,
    )
    return reply(401, { error: 'invalid_signature' })
  }
  const callback = parseDecisionCallback(raw)
  if (!callback) return reply(400, { error: 'invalid_callback_body' })
  const decisionId = callback.decisionId || callback.correlationId
  // Signed but unusable: retrying the same body cannot help.
  if (!idSchema.safeParse(decisionId).success)
    return reply(400, { error: 'invalid_callback_body', field: 'decisionId' })
  try {
    // Durable inbox first: once we answer 200 the sender stops retrying.
    await dispatch.context.store.recordReceipt({
      decisionId,
      receivedAt: dispatch.now().toISOString(),
      body: raw,
    })
  } catch (error) {
    return reply(503, { error: 'receipt_not_recorded', reason: errorMessage(error) })
  }
  let result: PusharyDispatchResult
  try {
    result = await resumeDecision(dispatch, decisionId)
  } catch (error) {
    return reply(503, { status: 'error', decisionId, reason: errorMessage(error) })
  }
  const retry = (RETRYABLE_DISPATCH_STATUSES as readonly string[]).includes(result.status)
  return reply(retry ? 503 : 200, result)
}

/** `dispatcher.recover`: an operator's (or a recoverer's) settle of one review. */
async function recover(dispatch: Dispatch, decisionId: string): Promise<PusharyDispatchResult> {
  checkedDecisionId(decisionId, 'dispatcher.recover')
  const review = await dispatch.context.store.get(decisionId)
  const key = review?.runId ?? `decision:${decisionId}`
  return dispatch.log.observe(
    await dispatch.queue.run(key, () => recoverDecision(dispatch.context, decisionId)),
  )
}

/**
 * Builds the dispatcher over the kinds of review the rooms above register
 * (`createPusharyDispatcher` in `agents/dispatcher.ts` passes every kind).
 * Collaborators are passed in; nothing is global.
 */
export function createDispatcher(options: PusharyDispatcherOptions, kinds: ReviewKinds): PusharyDispatcher {
  const webhookSecret = checkedWebhookSecret(options)
  const callbackMaxBytes = checkedCallbackMaxBytes(
    options.callbackMaxBytes,
    'createPusharyDispatcher',
    'callbackMaxBytes',
  )
  const context: DispatchContext = {
    mastra: options.mastra,
    client: options.client,
    store: options.store,
    options,
    kinds,
  }
  const now = options.now ?? (() => new Date())
  const dispatch: Dispatch = {
    context,
    webhookSecret,
    callbackMaxBytes,
    now,
    queue: createKeyedQueue(),
    log: createWorkerLog(options.mastra, now),
  }
  const reconciler = createReconciler(context, {
    resume: (decisionId) => resumeDecision(dispatch, decisionId),
    observe: (result) => dispatch.log.observe(result),
  })
  return {
    handleCallback: (request) => handleCallback(dispatch, request),
    resumeDecision: async (decisionId) => {
      checkedDecisionId(decisionId, 'dispatcher.resumeDecision')
      return resumeDecision(dispatch, decisionId)
    },
    recover: (decisionId) => recover(dispatch, decisionId),
    reconcile: reconciler.reconcile,
    checkConfiguration: () =>
      findConfigurationIssues({
        mastra: context.mastra,
        store: context.store,
        checkAgent: kinds.agent.capabilityProblem,
      }),
  }
}
