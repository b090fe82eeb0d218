// README (seed 002) "Require approval before a tool executes", as written.
// Added: the import of the application's values, and one line where the
// README's prose says "Register issueRefund in the agent's tools".
import {
  agent,
  authenticatedCustomer,
  config,
  customerConversation,
  flagForRecovery,
  handlePendingRuns,
  refundOrderIdempotently,
  registerTools,
  saveAgentOutput,
} from './app.js'

// --- sample ---
import { createTool } from '@mastra/core/tools'
import { resolvePusharyApprovals } from '@pushary/mastra'
import { z } from 'zod'

const issueRefund = createTool({
  id: 'issue-refund',
  description: 'Refund an order',
  inputSchema: z.object({ orderId: z.string(), amount: z.number().positive() }),
  outputSchema: z.object({ refunded: z.boolean() }),
  requireApproval: true,
  execute: async (input) => refundOrderIdempotently(input),
})
registerTools({ issueRefund }) // README: "Register issueRefund in the agent's tools and configure its storage."

const output = await agent.generate('Refund this order', {
  memory: { thread: customerConversation.id, resource: authenticatedCustomer.id },
})
if (output.finishReason === 'suspended') {
  const { runs } = await agent.listSuspendedRuns({ resourceId: authenticatedCustomer.id })
  const outcome = await resolvePusharyApprovals(
    { ...config, externalId: authenticatedCustomer.id, policy: false, maxApprovals: 5 },
    { agent, runs: runs.filter((run) => run.runId === output.runId) },
  )
  for (const review of outcome.resolved) {
    if (review.output) await saveAgentOutput(review.runId, review.output)
    if (review.reviewError || review.resumeError || review.discoveryError) await flagForRecovery(review)
  }
  await handlePendingRuns(outcome.pending)
}
// --- end of sample ---

export { output }
