// README (seed 002) "Defer agent reviews without holding a request open", as
// written. Added: the import of the application's values, and one line where
// the README's prose says "Register askHuman on the agent".
import {
  agent,
  authenticatedCustomer,
  config,
  customerConversation,
  order,
  publicUrl,
  registerTools,
  reviewStore,
} from './app.js'

// --- sample ---
import { createPusharyDeferredAskTool, openPusharyAgentReview } from '@pushary/mastra'

const askHuman = createPusharyDeferredAskTool(config, { externalId: authenticatedCustomer.id })
registerTools({ askHuman }) // README: "Register askHuman on the agent alongside its protected tools."

const output = await agent.generate('Prepare this order', {
  memory: { thread: customerConversation.id, resource: authenticatedCustomer.id },
})
if (output.finishReason === 'suspended') {
  const { runs } = await agent.listSuspendedRuns({ resourceId: authenticatedCustomer.id })
  const run = runs.find((item) => item.runId === output.runId)
  if (run) {
    for (const call of run.toolCalls) {
      await openPusharyAgentReview(config, {
        agent,
        agentId: 'order-agent',
        runId: run.runId,
        toolCallId: call.toolCallId!,
        externalId: authenticatedCustomer.id,
        actionVersion: order.draftVersion,
        store: reviewStore,
        callbackUrl: `${publicUrl}/pushary/callback`,
        expiresInSeconds: 3600,
        requireReachable: true,
      })
    }
  }
}
// --- end of sample ---

export { output }
