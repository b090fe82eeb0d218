/**
 * What a resume notes when it has read a verified answer: the `answered` info
 * line, and the answer time (for the operator's numbers: answered-to-resumed
 * latency, answered reviews not yet resumed), written with the claim in the
 * same commit rather than as a write of its own on every resume.
 */
import type { Mastra } from '@mastra/core/mastra'
import { logAnswered } from '../steps/approval-log.js'
import type { PusharyReviewStore, ReviewClaimResult } from '../store/review-store.js'

/** The part of a decision read here. */
interface ReadDecision {
  status: string
  answeredAt?: string | null | undefined
}

/**
 * The service's answer time when it sent a valid one, else `now` (the time
 * the resume first read the settled decision). A time outside four-digit
 * years (`+275760-…`) is not one the store takes, and a note must never stop
 * a resume: it counts as absent too.
 */
function answerTime(decision: ReadDecision, now: Date): string {
  const said = decision.answeredAt
  if (typeof said === 'string' && said !== '') {
    const parsed = Date.parse(said)
    if (!Number.isNaN(parsed)) {
      const iso = new Date(parsed).toISOString()
      if (/^\d{4}-/.test(iso)) return iso
    }
  }
  return now.toISOString()
}

/**
 * Logs a verified, settled answer (one `answered` line through the Mastra
 * logger) and returns its answer time, which the resume notes in the store
 * with its claim ({@link claimNotingAnswer}): one commit, not a write of its own.
 *
 * @example
 * const answeredAt = logVerifiedAnswer({ mastra, decisionId, runId, decision, approved: answer.approved, target: 'agent', now: new Date() })
 */
export function logVerifiedAnswer(input: {
  mastra: Mastra | undefined
  decisionId: string
  runId: string
  decision: ReadDecision
  approved: boolean | null
  target: 'workflow-step' | 'agent'
  now: Date
}): string {
  logAnswered(input.mastra, {
    decisionId: input.decisionId,
    runId: input.runId,
    status: input.decision.status,
    approved: input.approved,
    target: input.target,
  })
  return answerTime(input.decision, input.now)
}

/**
 * Claims the review with its answer time noted in the same commit. A store
 * of your own (the four-operation agent review store) is claimed plainly.
 *
 * @example
 * const claim = await claimNotingAnswer(store, review.decisionId, review.runId, answeredAt)
 */
export function claimNotingAnswer(
  store:
    | Pick<PusharyReviewStore, 'claim'>
    | { claim(decisionId: string, runId: string): Promise<ReviewClaimResult> },
  decisionId: string,
  runId: string,
  answeredAt: string,
): Promise<ReviewClaimResult> {
  if (typeof (store as Partial<PusharyReviewStore>).recordAnswered !== 'function') {
    return store.claim(decisionId, runId)
  }
  return (store as PusharyReviewStore).claim(decisionId, runId, undefined, { answeredAt })
}
