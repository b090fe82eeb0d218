// docs/reference.md "Reading an answer: `value`, not `answer`", as written.
// Only the export at the end is added.

// --- sample ---
import { createPusharyClient, isApproved } from '@pushary/mastra'

const client = createPusharyClient() // PUSHARY_API_KEY, PUSHARY_BASE_URL

async function answerOf(decisionId: string) {
  const decision = await client.decisions.get(decisionId)
  if (decision.status !== 'answered') return { answered: false as const, status: decision.status }
  // `value` is the text the person gave; `isApproved` is the one approval rule.
  return { answered: true as const, value: decision.value, approved: isApproved(decision) }
}
// --- end of sample ---

export { answerOf }
