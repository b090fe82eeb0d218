/**
 * Shared pieces of the agent tests: find the decision a tool just created on
 * the local service, answer it, and read tool results out of an agent output.
 */
import type { PusharyClient } from '../../../src/pushary/client.js'
import type { Decision } from '../../../src/pushary/decision-schemas.js'
import { waitFor } from '../../helpers/mastra.js'

/** The newest pending decision of a customer, waiting until one exists. */
export async function pendingDecisionOf(client: PusharyClient, externalId: string): Promise<Decision> {
  return waitFor(async () => {
    const { decisions } = await client.decisions.list({ externalId, status: 'pending', limit: 20 })
    const first = decisions[0]
    return first?.decisionId ? client.decisions.get(first.decisionId) : undefined
  })
}

/** Answers (or expires/cancels) the customer's next pending decision once it appears. */
export async function answerNext(
  client: PusharyClient,
  externalId: string,
  answer: string | 'cancel',
): Promise<Decision> {
  const decision = await pendingDecisionOf(client, externalId)
  if (answer === 'cancel') await client.decisions.cancel(decision.decisionId)
  else await client.decisions.answer(decision.decisionId, answer)
  return decision
}

/** Every tool result of an agent output, by tool call id (Mastra's chunk shape). */
export function toolResults(output: { toolResults?: unknown }): Map<string, unknown> {
  const results = new Map<string, unknown>()
  for (const entry of (output.toolResults ?? []) as Record<string, unknown>[]) {
    const payload = (entry.payload ?? entry) as Record<string, unknown>
    results.set(String(payload.toolCallId), payload.result ?? payload.output)
  }
  return results
}
