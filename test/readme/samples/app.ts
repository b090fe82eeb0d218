/**
 * The application behind the product README's samples (seed 002). The
 * samples in this folder are the README's code as written; everything they
 * name but leave to the application lives here, backed by real parts: the
 * local decision service (its URL and key arrive in PUSHARY_BASE_URL /
 * PUSHARY_API_KEY, set by the test before this module loads), Mastra on a
 * LibSQL file, a real Agent with a scripted model, and the application's own
 * review table (`review-table.ts`). What the samples did is recorded in `seen`.
 */
import { join } from 'node:path'
import { Agent } from '@mastra/core/agent'
import { Mastra } from '@mastra/core/mastra'
import { createTool } from '@mastra/core/tools'
import { LibSQLStore } from '@mastra/libsql'
import type {
  PusharyAgentResumeOutcome,
  PusharyAgentReview,
  PusharyResolvedApproval,
  PusharySuspendedAgentRun,
} from '@pushary/mastra'
import { z } from 'zod'
import {
  callsOnce,
  describeResults,
  type ScriptedReply,
  scriptedModel,
} from '../../agents/support/scripted-model.js'
import { createReviewTable } from './review-table.js'

const dir = process.env.README_SAMPLES_DIR!

export const config = { apiKey: process.env.PUSHARY_API_KEY! }
export const webhookSecret = process.env.README_WEBHOOK_SECRET!
/** Where the test's loopback server receives the service's callbacks. */
export const publicUrl = process.env.README_PUBLIC_URL!
export const callbackUrl = `${publicUrl}/workflow/callback`

/** The signed-in customer; the test switches to a fresh customer per scenario. */
/** Where the permit sample keeps its reviews (a file your deployment owns). */
export const reviewsUrl = `file:${join(dir, 'permit-reviews.db')}`
export const authenticatedCustomer = { id: 'customer_readme' }
export const customerConversation = { id: 'conversation_readme' }
export const order = { id: 'order_1', amount: 48, draftVersion: 'draft_1' }

/** What the samples handed to the application. */
export const seen = {
  refunds: [] as { orderId: string; amount: number }[],
  savedOutputs: [] as { runId: string; output: unknown }[],
  flagged: [] as PusharyResolvedApproval[],
  pendingRuns: [] as PusharySuspendedAgentRun[][],
  resumeOutcomes: [] as PusharyAgentResumeOutcome[],
  alerts: [] as (string | undefined)[],
  approvalLinks: [] as { customer: string; url: string }[],
  /** What the pending-decisions sample told the ops channel. */
  opsMessages: [] as string[],
  /** The payment provider's refunds (the permit-from-input sample), each under its permit ID. */
  payments: [] as { orderId: string; amountMinor: number; permitId: string }[],
}

/** The polling job's next answered review (set by the test). */
export const job = { decisionId: '' }

/** What "Prepare this order" makes the model do: ask a question, or refund. */
export const prepare = { with: 'question' as 'question' | 'refund' }

export async function refundOrderIdempotently(input: { orderId: string; amount: number }) {
  // Every execution is counted (not deduplicated), so a second run shows.
  seen.refunds.push(input)
  return { refunded: true }
}
/** How the application delivers an approval link (e-mail, chat...): recorded here. */
export async function sendApprovalLink(customer: string, url: string) {
  seen.approvalLinks.push({ customer, url })
}
export async function saveAgentOutput(runId: string, output: unknown) {
  seen.savedOutputs.push({ runId, output })
}
export async function alertOperator(text: string | undefined) {
  seen.alerts.push(text)
}
export async function flagForRecovery(review: PusharyResolvedApproval) {
  seen.flagged.push(review)
}
export async function handlePendingRuns(runs: PusharySuspendedAgentRun[]) {
  seen.pendingRuns.push(runs)
}
export async function recordResumeOutcome(result: PusharyAgentResumeOutcome) {
  seen.resumeOutcomes.push(result)
}
/** Your notification channel (chat, e-mail, a ticket): recorded here. */
export async function notifyOps(message: string): Promise<void> {
  seen.opsMessages.push(message)
}
/** Your payment provider; the permit ID doubles as its idempotency key. */
export const payments = {
  async refund(orderId: string, amountMinor: number, idempotencyKey: string): Promise<string> {
    seen.payments.push({ orderId, amountMinor, permitId: idempotencyKey })
    return `refund_${orderId}`
  },
}
export function readCurrentDraftVersion(_review: PusharyAgentReview): string {
  return order.draftVersion
}

/** The application's own agent-review table: the four operations over one SQLite table. */
export const reviewStore = createReviewTable(`file:${join(dir, 'app-reviews.db')}`)

/**
 * The tools the README tells the reader to register on the agent ("Register
 * issueRefund in the agent's tools", "Register askHuman on the agent"). The
 * samples call `registerTools` where the README says so; the agent reads
 * them per call.
 */
const registered: Record<string, unknown> = {}
export function registerTools(tools: Record<string, unknown>): void {
  Object.assign(registered, tools)
}

/** The scripted model of the application's agent: one tool call per user request, then text. */
function script(turn: Parameters<Parameters<typeof scriptedModel>[0]>[0]): ScriptedReply {
  if (turn.results.size > 0) return { text: describeResults(turn) }
  const callId = `call_${authenticatedCustomer.id}`
  const refund = {
    toolCallId: callId,
    toolName: 'issueRefund',
    input: { orderId: order.id, amount: order.amount },
  }
  const asked = turn.userTexts.at(-1) ?? ''
  if (asked.startsWith('Prepare') && prepare.with === 'question') {
    const question = { question: 'Gift-wrap the order?', type: 'select', options: ['yes', 'no'] }
    return { toolCalls: [{ toolCallId: callId, toolName: 'askHuman', input: question }] }
  }
  return { toolCalls: [refund] }
}

export const agent = new Agent({
  id: 'order-agent',
  name: 'Order agent',
  instructions: 'Refund or prepare orders; ask the customer when unsure.',
  model: scriptedModel(script),
  tools: () => registered as never,
})

/** The refund tool of the requireApproval sample, for samples that do not define it again. */
export const refundTool = createTool({
  id: 'issue-refund',
  description: 'Refund an order',
  inputSchema: z.object({ orderId: z.string(), amount: z.number().positive() }),
  outputSchema: z.object({ refunded: z.boolean() }),
  requireApproval: true,
  execute: async (input) => refundOrderIdempotently(input),
})

/** A supervisor that delegates every request to the order agent (`agent-orderAgent`). */
export const supervisor = new Agent({
  id: 'supervisor',
  name: 'Supervisor',
  instructions: 'Delegate order work to the order agent.',
  model: scriptedModel(
    callsOnce([
      { toolCallId: 'delegate_1', toolName: 'agent-orderAgent', input: { prompt: 'Refund order_1' } },
    ]),
  ),
  agents: { orderAgent: agent },
})

export const mastra = new Mastra({
  agents: { orderAgent: agent, supervisor },
  storage: new LibSQLStore({ id: 'readme-app', url: `file:${join(dir, 'mastra.db')}` }),
  logger: false,
})

export function getAgent(agentId: string): Agent {
  if (agentId !== agent.id) throw new Error(`no agent ${agentId}`)
  return agent
}
