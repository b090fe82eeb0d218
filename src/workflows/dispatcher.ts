import { parseDecisionCallback, SIGNATURE_HEADER, verifyWebhookSignature } from '../pushary/callbacks.js'
import type { Decision } from '../pushary/decision-schemas.js'
import { PusharyValidationError } from '../pushary/errors.js'
import { idSchema } from '../pushary/identity.js'
import { answerPusharyQuestion, type PusharyAnswer } from '../pushary/question.js'
import type { PusharyApprovalResume } from '../steps/approval-schemas.js'
import { checkWorkflowDecision } from '../steps/workflow-binding.js'
import type { PusharyWorkflowReview } from '../store/review-schema.js'
import { settleBatchParent, settleSuspendedBatches } from './batch-parent.js'
import {
  type PusharyDispatcher,
  type PusharyDispatcherOptions,
  type PusharyDispatchResult,
  type PusharyReconcileReport,
  RETRYABLE_DISPATCH_STATUSES,
} from './dispatch-types.js'
import { isPusharyResumeError } from './resume-error.js'
import { resumePusharyApproval } from './resume-guard.js'
import { createKeyedQueue } from './run-queue.js'
import { findWorkflow, isTargetSuspended, labelTarget, loadRunSnapshot } from './run-snapshot.js'

/**
 * Results after which the review is no longer `pending`. Anything else
 * (retry-later statuses, a mismatch, an invalid answer, an error) leaves it
 * pending; a misjudged cursor only makes the next round start over.
 */
const LEFT_PENDING: ReadonlySet<string> = new Set(['resumed', 'duplicate', 'stale', 'uncertain'])

function isReview(value: PusharyWorkflowReview | PusharyDispatchResult): value is PusharyWorkflowReview {
  return 'target' in value
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

function toResumeData(decision: Decision): PusharyApprovalResume {
  const status = decision.status === 'pending' ? 'answered' : decision.status
  return { answer: status === 'answered' ? decision.value : null, status }
}

/**
 * Builds the dispatcher. Collaborators are passed in; nothing is global.
 *
 * @example
 * const dispatcher = createPusharyDispatcher({ mastra, client, store, webhookSecret: process.env.PUSHARY_WEBHOOK_SECRET })
 * setInterval(() => void dispatcher.reconcile({ limit: 100 }), 30_000)
 */
export function createPusharyDispatcher(options: PusharyDispatcherOptions): PusharyDispatcher {
  const { mastra, client, store } = options
  const now = options.now ?? (() => new Date())
  const queue = createKeyedQueue()

  async function verifiedAnswer(
    review: PusharyWorkflowReview,
  ): Promise<{ answer: PusharyAnswer; resumeData: PusharyApprovalResume } | PusharyDispatchResult> {
    const decisionId = review.decisionId
    // The callback body is never authority: the answer comes from the service.
    const decision = await client.decisions.get(decisionId)
    const mismatch = checkWorkflowDecision(review, decision)
    if (mismatch) return { status: 'mismatch', decisionId, reason: mismatch }
    if (decision.status === 'pending') return { status: 'pending', decisionId }
    const resumeData = toResumeData(decision)
    try {
      return {
        answer: answerPusharyQuestion(review.question, resumeData.status, resumeData.answer),
        resumeData,
      }
    } catch (error) {
      return { status: 'invalid_answer', decisionId, reason: errorMessage(error) }
    }
  }

  /**
   * Ends a claimed review as `stale` or `uncertain` and reports it. A failed
   * write leaves the claim `resuming` (visible as `busy`) and is reported as
   * `persistenceError` rather than thrown, so the outcome is never lost.
   */
  async function endReview(
    decisionId: string,
    state: 'stale' | 'uncertain',
    reason: string,
  ): Promise<PusharyDispatchResult> {
    try {
      await store.finish(decisionId, state, reason)
      return { status: state, decisionId, reason }
    } catch (error) {
      return { status: state, decisionId, reason, persistenceError: errorMessage(error) }
    }
  }

  async function resumeClaimed(
    review: PusharyWorkflowReview,
    answer: PusharyAnswer,
    resumeData: PusharyApprovalResume,
  ): Promise<PusharyDispatchResult> {
    const decisionId = review.decisionId
    try {
      const outcome = await resumePusharyApproval({
        mastra,
        workflowId: review.workflowId,
        runId: review.runId,
        label: review.resumeLabel,
        resumeData,
        ...(options.conflictTimeoutMs === undefined ? {} : { conflictTimeoutMs: options.conflictTimeoutMs }),
      })
      if (outcome.stillSuspended) {
        const reason = 'the step is still suspended after the resume'
        return endReview(decisionId, 'uncertain', reason)
      }
      await store.finish(decisionId, 'completed')
      const resumed: PusharyDispatchResult = {
        status: 'resumed',
        decisionId,
        workflowId: review.workflowId,
        runId: review.runId,
        answer,
        runStatus: outcome.result.status,
      }
      if (review.parent) {
        // The child is done whatever happens to its parent; a failure here is
        // reported, and the next child's settle (or settleBatchParent) retries it.
        try {
          resumed.parent = await settleBatchParent({
            mastra,
            parent: review.parent,
            ...(options.conflictTimeoutMs === undefined
              ? {}
              : { conflictTimeoutMs: options.conflictTimeoutMs }),
          })
        } catch (error) {
          resumed.parent = { status: 'failed', reason: errorMessage(error) }
        }
      }
      if (options.onResumed) {
        try {
          await options.onResumed({
            review,
            answer,
            runStatus: outcome.result.status,
            runResult: outcome.result.result,
          })
        } catch (error) {
          resumed.hookError = errorMessage(error)
        }
      }
      return resumed
    } catch (error) {
      // Refusals are raised before Mastra runs anything: the step or
      // iteration vanished, so this review can never resume. Stale, not uncertain.
      if (isPusharyResumeError(error) && error.code !== 'resume_conflict' && error.code !== 'no_storage') {
        const reason = error.message
        return endReview(decisionId, 'stale', reason)
      }
      const reason = errorMessage(error)
      return endReview(decisionId, 'uncertain', reason)
    }
  }

  async function workflowReview(decisionId: string): Promise<PusharyWorkflowReview | PusharyDispatchResult> {
    const review = await store.get(decisionId)
    if (!review) return { status: 'unknown', decisionId, reason: 'no review is saved for this decision yet' }
    if (review.target !== 'workflow-step') {
      return {
        status: 'unsupported',
        decisionId,
        reason: `reviews of target "${review.target}" are not workflow steps`,
      }
    }
    return review
  }

  async function savedReview(decisionId: string): Promise<PusharyWorkflowReview | PusharyDispatchResult> {
    const review = await workflowReview(decisionId)
    if (!isReview(review)) return review
    switch (review.state) {
      case 'pending':
        return review
      case 'resuming':
        return { status: 'busy', decisionId }
      case 'completed':
        return { status: 'duplicate', decisionId }
      case 'stale':
        return { status: 'stale', decisionId, reason: 'the review was already found stale' }
      case 'uncertain':
        return {
          status: 'uncertain',
          decisionId,
          reason: 'the review is uncertain; an operator must recover it',
        }
      default: {
        const unreachable: never = review.state
        return unreachable
      }
    }
  }

  async function resumeDecisionInQueue(decisionId: string): Promise<PusharyDispatchResult> {
    const review = await savedReview(decisionId)
    if (!isReview(review)) return review
    const saved = review
    const verified = await verifiedAnswer(saved)
    if ('status' in verified) return verified

    // Mastra persists the snapshot only after the suspending step returns, so
    // a fast answer can arrive before the run is suspended. Do not claim then.
    const snapshot = await loadRunSnapshot(mastra, saved.workflowId, saved.runId)
    if (!snapshot || ['running', 'pending', 'waiting'].includes(snapshot.status)) {
      return { status: 'not_suspended_yet', decisionId, runStatus: snapshot?.status ?? 'absent' }
    }
    const target = labelTarget(snapshot, saved.resumeLabel)
    const live = target !== null && isTargetSuspended(snapshot, target)

    const claim = await store.claim(decisionId, saved.runId)
    switch (claim) {
      case 'busy':
        return { status: 'busy', decisionId }
      case 'settled':
        return { status: 'duplicate', decisionId }
      case 'claimed':
        break
      default: {
        const unreachable: never = claim
        return unreachable
      }
    }
    if (!live) {
      const reason = `the run is ${snapshot.status} and no longer waits on this decision`
      return endReview(decisionId, 'stale', reason)
    }
    return resumeClaimed(saved, verified.answer, verified.resumeData)
  }

  async function resumeDecision(decisionId: string): Promise<PusharyDispatchResult> {
    const parsed = idSchema.safeParse(decisionId)
    if (!parsed.success) {
      throw PusharyValidationError.fromZod(parsed.error, {
        operation: 'dispatcher.resumeDecision',
        code: 'invalid_identifier',
        fieldPrefix: 'decisionId',
      })
    }
    const review = await store.get(decisionId)
    if (!review) return { status: 'unknown', decisionId, reason: 'no review is saved for this decision yet' }
    // One process never races itself on one run (Mastra's 2 s wait would lose answers).
    return queue.run(review.runId, () => resumeDecisionInQueue(decisionId))
  }

  async function recoverInQueue(decisionId: string): Promise<PusharyDispatchResult> {
    const review = await workflowReview(decisionId)
    if (!isReview(review)) return review
    // Only a crash-left claim needs recovery; anything else takes the normal path.
    if (review.state !== 'resuming') return resumeDecisionInQueue(decisionId)
    const verified = await verifiedAnswer(review)
    if ('status' in verified) return verified
    const snapshot = await loadRunSnapshot(mastra, review.workflowId, review.runId)
    if (!snapshot) return { status: 'unknown', decisionId, reason: 'the run has no snapshot' }
    if (snapshot.status === 'running') {
      // The crash left the run claimed by nobody. Restart re-runs the active
      // step: the approval step's first pass lands on the same decision and
      // binding and suspends again; a later step just runs again.
      const run = await findWorkflow(mastra, review.workflowId, review.runId).createRun({
        runId: review.runId,
      })
      await run.restart()
    }
    const after = await loadRunSnapshot(mastra, review.workflowId, review.runId)
    const target = after ? labelTarget(after, review.resumeLabel) : null
    if (after && target && isTargetSuspended(after, target)) {
      return resumeClaimed(review, verified.answer, verified.resumeData)
    }
    if (after?.status === 'success') {
      // The answer had been applied before the crash; the restart finished the run.
      await store.finish(decisionId, 'completed', 'recovered: the run finished after restart')
      return {
        status: 'resumed',
        decisionId,
        workflowId: review.workflowId,
        runId: review.runId,
        answer: verified.answer,
        runStatus: after.status,
      }
    }
    const reason = `recovery found the run ${after?.status ?? 'missing'}; inspect it before marking this review`
    return endReview(decisionId, 'uncertain', reason)
  }

  async function handleCallback(request: Request): Promise<Response> {
    const reply = (status: number, body: unknown) =>
      new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } })
    const raw = await request.text()
    if (!verifyWebhookSignature(raw, request.headers.get(SIGNATURE_HEADER), options.webhookSecret)) {
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
      if (review.target !== 'workflow-step') continue
      report.checked++
      let result: PusharyReconcileReport['results'][number]
      try {
        result = await resumeDecision(review.decisionId)
      } catch (error) {
        result = { status: 'error', decisionId: review.decisionId, reason: errorMessage(error) }
      }
      if (result.status === 'resumed') report.resumed++
      report.results.push(result)
      if (!LEFT_PENDING.has(result.status)) lastStillPending = review.decisionId
    }
    // A short page reached the end: start over next time. Otherwise continue
    // after the last review that is still waiting (rows that settled have left
    // the pending set, so the old cursor still marks the right place).
    reconcileCursor = pending.length < limit ? undefined : (lastStillPending ?? reconcileCursor)
    try {
      report.parents = await settleSuspendedBatches({
        mastra,
        limit,
        ...(options.conflictTimeoutMs === undefined ? {} : { conflictTimeoutMs: options.conflictTimeoutMs }),
      })
    } catch (error) {
      report.parents = [{ status: 'failed', reason: errorMessage(error) }]
    }
    return report
  }

  return {
    handleCallback,
    reconcile,
    resumeDecision,
    recover: async (decisionId) => {
      const review = await store.get(decisionId)
      if (!review) return { status: 'unknown', decisionId, reason: 'no review is saved for this decision' }
      return queue.run(review.runId, () => recoverInQueue(decisionId))
    },
  }
}
