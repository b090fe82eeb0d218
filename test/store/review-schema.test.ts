import { describe, expect, it } from 'vitest'
import {
  pusharyAgentReviewSchema,
  pusharyReviewSchema,
  pusharyWorkflowReviewSchema,
} from '../../src/store/review-schema.js'
import { agentReview, workflowReview } from './support/reviews.js'

describe('review schemas', () => {
  it('parses a record without target as an agent review', () => {
    const { target: _target, ...legacy } = agentReview()
    expect(pusharyReviewSchema.parse(legacy).target).toBe('agent')
  })

  it('tells agent and workflow-step reviews apart by target', () => {
    const review = pusharyReviewSchema.parse(workflowReview())
    expect(review.target).toBe('workflow-step')
    if (review.target === 'workflow-step') expect(review.stepId).toBe('approve-refunds.approve')
  })

  it('strips unknown keys so they never become part of a binding', () => {
    const parsed = pusharyAgentReviewSchema.parse({ ...agentReview(), apiKey: 'pk_x.sk_y' })
    expect(parsed).not.toHaveProperty('apiKey')
  })

  it('refuses an external ID longer than 256 UTF-16 units', () => {
    const result = pusharyAgentReviewSchema.safeParse(agentReview({ externalId: '😀'.repeat(129) }))
    expect(result.success).toBe(false)
    expect(result.error?.issues[0]?.path).toEqual(['externalId'])
  })

  it('refuses a review in an unknown state', () => {
    const result = pusharyReviewSchema.safeParse({ ...agentReview(), state: 'approved' })
    expect(result.error?.issues[0]?.path).toEqual(['state'])
  })

  it('refuses a negative foreach index and a parent without an item index', () => {
    expect(pusharyWorkflowReviewSchema.safeParse(workflowReview({ forEachIndex: -1 })).success).toBe(false)
    const parent = { workflowId: 'batch', runId: 'run_1', stepId: 'fan-out' }
    expect(pusharyWorkflowReviewSchema.safeParse({ ...workflowReview(), parent }).success).toBe(false)
  })

  it('refuses a select question with fewer than two options', () => {
    const result = pusharyWorkflowReviewSchema.safeParse(
      workflowReview({ question: { question: 'Which?', type: 'select', options: ['only'] } }),
    )
    expect(result.success).toBe(false)
  })
})
