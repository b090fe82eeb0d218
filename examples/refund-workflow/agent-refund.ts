/**
 * The demo's agent path (`npm run demo -- --agent`): a real Mastra Agent
 * whose refund tool is protected by `requireApproval` (and, for `--answer
 * select|input`, the deferred question tool). The suspended call becomes a
 * phone review (`openPusharyAgentReview`); a polling worker
 * (`resumePusharyAgentReview`) resumes the agent once the person answered.
 * Scripted model by default; `--model provider/name` uses a real one (its
 * key must be set, e.g. OPENAI_API_KEY).
 */
import { join } from 'node:path'
import { Agent } from '@mastra/core/agent'
import { Mastra } from '@mastra/core/mastra'
import { createTool } from '@mastra/core/tools'
import { LibSQLStore } from '@mastra/libsql'
import {
  createPusharyDeferredAskTool,
  openPusharyAgentReview,
  type PusharyClient,
  type PusharyReviewStore,
  resumePusharyAgentReview,
} from '@pushary/mastra'
import { z } from 'zod/v4'
import { callsOnce, type ScriptedToolCall, scriptedModel } from '../shared/scripted-model.js'
import type { RefundLedger, RefundOrder } from './refund-app.js'

export type DemoAnswer = 'approve' | 'deny' | 'select' | 'input'

/** What the scripted model does: refund (approve/deny), or ask a choice or a text first. */
function scriptedCall(answer: DemoAnswer | undefined, order: RefundOrder): ScriptedToolCall {
  const amount = order.amountMinor / 100
  if (answer === 'select') {
    return {
      toolCallId: 'ask_1',
      toolName: 'askHuman',
      input: { question: `Refund ${order.orderId} how?`, type: 'select', options: ['yes', 'store credit'] },
    }
  }
  if (answer === 'input') {
    return {
      toolCallId: 'ask_1',
      toolName: 'askHuman',
      input: { question: `Why should ${order.orderId} be refunded?`, type: 'input' },
    }
  }
  return { toolCallId: 'refund_1', toolName: 'refund', input: { orderId: order.orderId, amount } }
}

/** Unattended taps: a choice and a text of "yes" prove data is never permission. */
export const UNATTENDED_VALUE: Record<DemoAnswer, string> = {
  approve: 'yes',
  deny: 'no',
  select: 'yes',
  input: 'yes',
}

export async function runAgentRefund(input: {
  dataDir: string
  client: PusharyClient
  store: PusharyReviewStore
  ledger: RefundLedger
  order: RefundOrder
  answer: DemoAnswer | undefined
  model: string | undefined
  expiresInSeconds: number
  deadline: number
  onAsked: (decisionId: string) => void
}): Promise<{ ok: boolean; refunds: number; summary: string; answerStatus?: string }> {
  const { order } = input
  const refund = createTool({
    id: 'refund',
    description: 'Refund an order',
    inputSchema: z.object({ orderId: z.string(), amount: z.number().positive() }),
    outputSchema: z.object({ refunded: z.boolean() }),
    requireApproval: true,
    execute: async () => {
      await input.ledger.execute(order)
      return { refunded: true }
    },
  })
  const askHuman = createPusharyDeferredAskTool({ client: input.client }, { externalId: order.customerId })
  const agent = new Agent({
    id: 'support',
    name: 'Support',
    instructions: 'Refund the order the customer asks about. Refunds need their approval.',
    model: input.model ?? scriptedModel(callsOnce([scriptedCall(input.answer, order)], 'Done.')),
    tools: { refund, askHuman },
  })
  const mastra = new Mastra({
    agents: { support: agent },
    storage: new LibSQLStore({
      id: 'agent-demo',
      url: `file:${join(input.dataDir, 'demo-agent-mastra.db')}`,
    }),
    logger: false,
  })
  const support = mastra.getAgent('support')

  const memory = { memory: { thread: `thread-${order.orderId}`, resource: order.customerId } }
  const first = await support.generate(
    `Please refund ${order.orderId} (${order.amountMinor / 100} ${order.currency}).`,
    memory,
  )
  if (first.finishReason !== 'suspended')
    throw new Error(`the agent did not wait for approval (${first.finishReason})`)
  const { runs } = await support.listSuspendedRuns({ resourceId: order.customerId })
  const run = runs.find((candidate) => candidate.runId === first.runId)
  const call = run?.toolCalls[0]
  if (!run || !call?.toolCallId) throw new Error('the suspended agent call was not found')
  const review = await openPusharyAgentReview(
    { client: input.client },
    {
      agent: support,
      agentId: 'support',
      runId: run.runId,
      toolCallId: call.toolCallId,
      externalId: order.customerId,
      actionVersion: `${order.orderId}:v1`,
      store: input.store,
      question: `Refund ${(order.amountMinor / 100).toFixed(2)} ${order.currency} for ${order.orderId}?`,
      expiresInSeconds: input.expiresInSeconds,
      requireReachable: true,
    },
  )
  input.onAsked(review.decisionId)

  // The polling worker: no public callback URL needed for agent reviews.
  for (;;) {
    const result = await resumePusharyAgentReview(
      { client: input.client },
      {
        agent: support,
        agentId: 'support',
        externalId: order.customerId,
        decisionId: review.decisionId,
        store: input.store,
      },
    )
    if (result.status === 'pending' || result.status === 'busy') {
      if (Date.now() > input.deadline) {
        const refunds = await input.ledger.count(order.orderId)
        return { ok: false, refunds, summary: 'No answer before the timeout; the refund was not executed.' }
      }
      await new Promise((resolve) => setTimeout(resolve, 1000))
      continue
    }
    const refunds = await input.ledger.count(order.orderId)
    if (result.status !== 'resumed') {
      return {
        ok: false,
        refunds,
        summary: `Outcome: ${result.status}; refunds executed for ${order.orderId}: ${refunds}`,
      }
    }
    const { answer } = result
    let summary: string
    if (review.kind === 'question') {
      summary = `Outcome: answered ${JSON.stringify(answer.value)} (data, never approval); refunds executed for ${order.orderId}: ${refunds}`
    } else if (answer.approved) {
      summary = `Outcome: approved; refund executed ${refunds === 1 ? 'once' : `${refunds} times`} for ${order.orderId}`
    } else {
      const reason = answer.status === 'answered' ? 'denied' : answer.status
      summary = `Outcome: declined (${reason}); refunds executed for ${order.orderId}: ${refunds}`
    }
    const expected = answer.approved && review.kind === 'approval' ? 1 : 0
    const ok =
      refunds === expected &&
      (input.answer === undefined ||
        (input.answer === 'approve'
          ? answer.approved
          : !answer.approved && answer.value === UNATTENDED_VALUE[input.answer]))
    return { ok, refunds, summary, answerStatus: answer.status }
  }
}
