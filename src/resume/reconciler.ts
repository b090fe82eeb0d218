import type { PusharyDispatchResult, PusharyReconcileReport } from './dispatch-types.js'
import { errorMessage } from './resume-error.js'
import { type DispatchContext, parentOptions } from './review-kinds.js'

/**
 * Results after which the review is no longer `pending`. Anything else
 * (retry-later statuses, a mismatch, an invalid answer, an error) leaves it
 * pending; a misjudged cursor only makes the next round start over.
 */
const LEFT_PENDING: ReadonlySet<string> = new Set(['resumed', 'duplicate', 'stale', 'uncertain'])

/** What the reconciler asks of its dispatcher: the queued resume and the operator log. */
interface ReconcileHooks {
  resume(decisionId: string): Promise<PusharyDispatchResult>
  observe<T extends { status: string; decisionId?: string; reason?: string }>(result: T): T
}

/**
 * `dispatcher.reconcile`: pages through `pending` reviews, resumes each
 * answered one through the dispatcher's own queue, then settles multi-item
 * parents suspended on their batch step.
 */
export function createReconciler(context: DispatchContext, hooks: ReconcileHooks) {
  const { store } = context
  // Where the next reconcile round continues. Without it, more than `limit`
  // old unanswered reviews would hide every newer answered one forever.
  let cursor: string | undefined

  async function pendingPage(limit: number) {
    if (cursor !== undefined) {
      const page = await store.listByState('pending', { limit, after: cursor })
      if (page.length > 0) return page
      cursor = undefined
    }
    return store.listByState('pending', { limit })
  }

  async function reconcile(options: { limit?: number } = {}): Promise<PusharyReconcileReport> {
    const limit = options.limit ?? 100
    const pending = await pendingPage(limit)
    const report: PusharyReconcileReport = { checked: 0, resumed: 0, results: [], parents: [] }
    let lastStillPending: string | undefined
    for (const review of pending) {
      report.checked++
      let result: PusharyReconcileReport['results'][number]
      try {
        result = await hooks.resume(review.decisionId)
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
    cursor = pending.length < limit ? undefined : (lastStillPending ?? cursor)
    try {
      report.parents.push(
        ...(await context.kinds.parent.settleSuspended({
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
        hooks.observe({ ...parent, decisionId: parent.reviewId })
      }
    }
    return report
  }

  return { reconcile }
}
