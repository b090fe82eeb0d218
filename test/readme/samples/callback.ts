// README (seed 002) "Receive and reconcile an answer", as written. Added: the
// import of the application's values.
import { config, getAgent, readCurrentDraftVersion, recordResumeOutcome, reviewStore, webhookSecret } from './app.js'

// --- sample ---
import { resolvePusharyCallback, resumePusharyAgentReview } from '@pushary/mastra'

export async function POST(request: Request) {
  const raw = await request.text()
  const callback = resolvePusharyCallback(raw, request.headers.get('x-pushary-signature'), webhookSecret)
  if (!callback) return new Response('Invalid signature', { status: 401 })

  const saved = await reviewStore.get(callback.correlationId)
  if (!saved) return new Response('Review mapping not ready', { status: 503 })

  const result = await resumePusharyAgentReview(config, {
    agent: getAgent(saved.agentId),
    agentId: saved.agentId,
    externalId: saved.externalId,
    decisionId: saved.decisionId,
    store: reviewStore,
    currentActionVersion: (review) => readCurrentDraftVersion(review),
  })
  await recordResumeOutcome(result)
  if (['unknown', 'busy', 'pending'].includes(result.status))
    return new Response('Retry later', { status: 503 })
  return new Response('Recorded', { status: 200 })
}
// --- end of sample ---
