/**
 * Shared reads for the reliability tests: every review and decision that
 * belongs to one run (a batch's children and parent included), and the
 * protected side effects recorded across processes.
 */

import { REVIEW_STATES } from '../../../src/machines/review-lifecycle.js'
import type { PusharyClient } from '../../../src/pushary/client.js'
import type { ListedDecision } from '../../../src/pushary/decision-schemas.js'
import type { PusharyReview } from '../../../src/store/review-schema.js'
import type { PusharyReviewStore } from '../../../src/store/review-store.js'
import { listEffects } from '../../helpers/mastra.js'

/** Every review in the store, whatever its state. */
export async function allReviews(store: PusharyReviewStore): Promise<PusharyReview[]> {
  const all: PusharyReview[] = []
  for (const state of REVIEW_STATES) {
    for (let after: string | undefined; ; ) {
      const page = await store.listByState(state, { limit: 1000, ...(after ? { after } : {}) })
      all.push(...page)
      if (page.length < 1000) break
      after = page.at(-1)?.decisionId
    }
  }
  return all
}

/** Whether a review belongs to `runId`: the run itself, or a batch child of it. */
export function belongsTo(review: { runId: string }, runId: string): boolean {
  return review.runId === runId || review.runId.startsWith(`${runId}~`)
}

/** A listed decision that carries its id (the local service always sends one). */
export type ListedWithId = ListedDecision & { decisionId: string }

/** Every decision the service holds, all pages. */
export async function allDecisions(client: PusharyClient): Promise<ListedWithId[]> {
  const all: ListedWithId[] = []
  for (let cursor: string | undefined; ; ) {
    const page = await client.decisions.list({ limit: 100, ...(cursor ? { cursor } : {}) })
    for (const item of page.decisions) if (item.decisionId) all.push({ ...item, decisionId: item.decisionId })
    if (!page.nextCursor) break
    cursor = page.nextCursor
  }
  return all
}

/** The binding context a workflow approval step writes on its decision. */
export function decisionBinding(
  decision: Pick<ListedDecision, 'context'>,
): { runId: string; operationId: string; workflowId: string } | null {
  try {
    const parsed = JSON.parse(decision.context ?? 'null') as Record<string, unknown> | null
    if (typeof parsed?.runId !== 'string' || typeof parsed.operationId !== 'string') return null
    return {
      runId: parsed.runId,
      operationId: parsed.operationId,
      workflowId: String(parsed.workflowId),
    }
  } catch {
    return null
  }
}

/** How often each protected side effect ran, by key. */
export async function effectCounts(dir: string): Promise<Map<string, number>> {
  const counts = new Map<string, number>()
  for (const effect of await listEffects(dir)) counts.set(effect.key, (counts.get(effect.key) ?? 0) + 1)
  return counts
}
