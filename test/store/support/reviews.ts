import { randomUUID } from 'node:crypto'
import type { PusharyAgentReview, PusharyWorkflowReview } from '../../../src/store/review-schema.js'

/** A fresh pending agent review; every call gets new decision, run and call IDs. */
export function agentReview(overrides: Partial<PusharyAgentReview> = {}): PusharyAgentReview {
  const id = randomUUID()
  return {
    target: 'agent',
    version: 1,
    agentId: 'support-agent',
    runId: `run_${id}`,
    toolCallId: `call_${id}`,
    toolName: 'refund.create',
    externalId: 'customer_1',
    actionVersion: 'order-1001@v3',
    inputHash: 'a'.repeat(64),
    subjectHash: 'b'.repeat(64),
    kind: 'approval',
    question: { question: 'Refund EUR 48.00 for order 1001?', type: 'confirm' },
    threadId: 'thread_1',
    resourceId: 'customer_1',
    decisionId: `dec_${id}`,
    correlationId: `dec_${id}`,
    state: 'pending',
    ...overrides,
  }
}

/** A fresh pending workflow-step review. */
export function workflowReview(overrides: Partial<PusharyWorkflowReview> = {}): PusharyWorkflowReview {
  const id = randomUUID()
  return {
    target: 'workflow-step',
    version: 1,
    workflowId: 'refund-workflow',
    runId: `wrun_${id}`,
    stepId: 'approve-refunds.approve',
    forEachIndex: 2,
    resumeLabel: `pushary:dec_${id}`,
    externalId: 'customer_1',
    operationId: 'refund-1001-v3',
    questionHash: 'c'.repeat(64),
    question: { question: 'Which refund method?', type: 'select', options: ['card', 'store credit'] },
    parent: { workflowId: 'refund-batch', runId: 'batch_run_1', stepId: 'fan-out', itemIndex: 2 },
    decisionId: `dec_${id}`,
    correlationId: `corr_${id}`,
    state: 'pending',
    ...overrides,
  }
}
