import type { PusharyAgentReviewStore } from '../store/agent-review-store.js'
import type { PusharyAgentReview } from '../store/review-schema.js'

/**
 * The claim bookkeeping of one blocking resolve when the caller passed no
 * store. It coordinates nothing across processes: there, the review
 * workflow run's own claim (Mastra moves it suspended -> running in one
 * transaction) keeps the native resume to one caller.
 */
export function createRunLocalStore(): PusharyAgentReviewStore {
  const reviews = new Map<string, PusharyAgentReview>()
  return {
    save: async (review) => {
      if (!reviews.has(review.decisionId)) reviews.set(review.decisionId, { ...review })
    },
    get: async (decisionId) => reviews.get(decisionId) ?? null,
    claim: async (decisionId) => {
      const review = reviews.get(decisionId)
      if (review?.state !== 'pending') return 'settled'
      review.state = 'resuming'
      return 'claimed'
    },
    finish: async (decisionId, state) => {
      const review = reviews.get(decisionId)
      if (review) review.state = state
    },
  }
}
