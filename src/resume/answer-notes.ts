/**
 * What a resume notes when it has read a verified answer: the answer time in
 * the review store (for the operator's numbers: answered-to-resumed latency,
 * answered reviews not yet resumed) and the `answered` info line. Neither may
 * fail a resume: a note that cannot be written is logged and the resume goes on.
 */
import type { Mastra } from '@mastra/core/mastra'
import { logAnswered } from '../steps/approval-log.js'
import type { PusharyReviewStore } from '../store/review-store.js'

/** The part of a decision read here. */
interface ReadDecision {
  status: string
  answeredAt?: string | null | undefined
}

/**
 * The service's answer time when it sent a valid one, else `now` (the time
 * the resume first read the settled decision).
 */
function answerTime(decision: ReadDecision, now: Date): string {
  const said = decision.answeredAt
  if (typeof said === 'string' && said !== '') {
    const parsed = Date.parse(said)
    if (!Number.isNaN(parsed)) return new Date(parsed).toISOString()
  }
  return now.toISOString()
}

/**
 * Notes a verified, settled answer: the answer time in the store (the first
 * one is kept) and one `answered` line through the Mastra logger.
 *
 * @example
 * await noteVerifiedAnswer({ mastra, store, decisionId, runId, decision, approved: answer.approved, target: 'workflow-step', now: new Date() })
 */
export async function noteVerifiedAnswer(input: {
  mastra: Mastra | undefined
  /** The review store; an agent review store without `recordAnswered` (your own table) gets no note. */
  store: object
  decisionId: string
  runId: string
  decision: ReadDecision
  approved: boolean | null
  target: 'workflow-step' | 'agent'
  now: Date
}): Promise<void> {
  const { mastra, decisionId } = input
  logAnswered(mastra, {
    decisionId,
    runId: input.runId,
    status: input.decision.status,
    approved: input.approved,
    target: input.target,
  })
  // A store without the note (an agent review store of your own) is not an error.
  const store = input.store as Partial<Pick<PusharyReviewStore, 'recordAnswered'>>
  if (typeof store.recordAnswered !== 'function') return
  try {
    await store.recordAnswered(decisionId, answerTime(input.decision, input.now))
  } catch (error) {
    try {
      mastra
        ?.getLogger()
        ?.warn(
          `[pushary] could not note the answer time of ${decisionId} for the review numbers (the resume goes on): ${error instanceof Error ? error.message : String(error)}`,
        )
    } catch {
      // A logger that throws must not fail the resume.
    }
  }
}
