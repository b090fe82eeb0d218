/**
 * Approval spans of an agent review's resume: the review run's approval step
 * kept where it asked (its suspend payload's `trace`), and the resume joins
 * that trace (`observability/resume-spans.ts`). The snapshot is read only
 * when Mastra has an observability instance.
 */
import type { Mastra } from '@mastra/core/mastra'
import { type ResumeSpans, startResumeSpans, tracingInstance } from '../observability/resume-spans.js'
import { traceRefOf } from '../observability/trace-ref.js'
import type { PusharyAnswer } from '../pushary/question.js'
import type { Decision } from '../pushary/wire-responses.js'
import { loadRunSnapshot } from '../resume/run-position.js'
import type { PusharyAgentReview } from '../store/review-schema.js'
import { AGENT_REVIEW_ASK_STEP, AGENT_REVIEW_WORKFLOW_ID, agentWorkflowBinding } from './agent-binding.js'

/**
 * The spans of one agent resume, the verified answer already recorded; no-ops
 * when nothing is traced. A failed snapshot read only costs the spans.
 *
 * @example
 * const spans = await agentResumeSpans(mastra, review, decision, answer)
 * spans.claimed(await store.claim(decisionId, review.runId))
 */
export async function agentResumeSpans(
  mastra: Mastra,
  review: PusharyAgentReview,
  decision: Decision,
  answer: PusharyAnswer,
  /** The review run's step context the caller just read, when it did (no second read). */
  known?: Record<string, unknown>,
): Promise<ResumeSpans> {
  let context = known
  if (context === undefined && tracingInstance(mastra)) {
    try {
      const { runId } = agentWorkflowBinding(review, 'resumePusharyAgentReview')
      context = (await loadRunSnapshot(mastra, AGENT_REVIEW_WORKFLOW_ID, runId))?.context
    } catch {
      context = undefined
    }
  }
  const spans = startResumeSpans(mastra, traceRefOf(context, AGENT_REVIEW_ASK_STEP), {
    decisionId: review.decisionId,
    questionType: review.question.type ?? 'confirm',
    externalId: review.externalId,
    kind: 'agent',
  })
  spans.answered({ status: answer.status, approved: answer.approved, answeredAt: decision.answeredAt })
  return spans
}
