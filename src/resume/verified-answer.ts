/**
 * The answer a workflow review resumes with: re-read from the service (a
 * callback body is never authority), checked against the saved binding and
 * read against the review's question.
 */
import { answerPusharyQuestion, type PusharyAnswer } from '../pushary/question.js'
import type { Decision } from '../pushary/wire-responses.js'
import type { PusharyApprovalResume } from '../steps/approval-schemas.js'
import { readReviewedDecision } from '../steps/decision-expiry.js'
import { checkWorkflowDecision } from '../steps/workflow-binding.js'
import type { PusharyWorkflowReview } from '../store/review-schema.js'
import { logVerifiedAnswer } from './answer-notes.js'
import type { PusharyDispatchResult } from './dispatch-types.js'
import { errorMessage } from './resume-error.js'
import type { DispatchContext } from './review-kinds.js'

/** A verified answer, ready to resume with, and the decision it was read from. */
export interface VerifiedAnswer {
  answer: PusharyAnswer
  resumeData: PusharyApprovalResume
  decision: Decision
  /** When the decision was answered (the service's time, else when it was read), noted with the claim. */
  answeredAt: string
}

function toResumeData(decision: Decision): PusharyApprovalResume {
  const status = decision.status === 'pending' ? 'answered' : decision.status
  return { answer: status === 'answered' ? decision.value : null, status }
}

/**
 * The verified answer, or the result that says why there is none yet
 * (`mismatch`, `pending`, `invalid_answer`).
 *
 * @example
 * const verified = await verifiedAnswer(context, review)
 * if ('status' in verified) return verified
 */
export async function verifiedAnswer(
  context: DispatchContext,
  review: PusharyWorkflowReview,
): Promise<VerifiedAnswer | PusharyDispatchResult> {
  const decisionId = review.decisionId
  const decision = await readReviewedDecision(context.client, review, context.options.now?.() ?? new Date())
  const mismatch = checkWorkflowDecision(review, decision)
  if (mismatch) return { status: 'mismatch', decisionId, reason: mismatch }
  if (decision.status === 'pending') return { status: 'pending', decisionId }
  const resumeData = toResumeData(decision)
  let answer: PusharyAnswer
  try {
    answer = answerPusharyQuestion(review.question, resumeData.status, resumeData.answer)
  } catch (error) {
    return { status: 'invalid_answer', decisionId, reason: errorMessage(error) }
  }
  const answeredAt = logVerifiedAnswer({
    mastra: context.mastra,
    decisionId,
    runId: review.runId,
    decision,
    approved: answer.approved,
    target: 'workflow-step',
    now: context.options.now?.() ?? new Date(),
  })
  return { answer, resumeData, decision, answeredAt }
}
