// README "Agents: ask on the phone, approve native tool calls", the
// supervisor sample, as written. Added: the import of the application's
// values, and the registration of the requireApproval sample's refund tool on
// the order agent (the supervisor's sub-agent).
import {
  alertOperator,
  authenticatedCustomer,
  config,
  customerConversation,
  refundTool,
  registerTools,
  saveAgentOutput,
  supervisor,
} from './app.js'

registerTools({ issueRefund: refundTool })

// --- sample ---
import { resolvePusharyApprovals } from '@pushary/mastra'

// The supervisor delegates to the order agent, whose issueRefund needs approval.
const memory = { thread: customerConversation.id, resource: authenticatedCustomer.id }
const stream = await supervisor.stream('Refund this order', { memory })
if ((await stream.finishReason) === 'suspended') {
  // Resolve at the supervisor: Mastra lists a delegated approval only at the outermost agent.
  const outcome = await resolvePusharyApprovals(
    { ...config, externalId: authenticatedCustomer.id, policy: false },
    { agent: supervisor, resourceId: authenticatedCustomer.id, stream: true },
  )
  if (outcome.found === 0) await alertOperator(outcome.reason) // e.g. the sub-agent was passed
  for (const review of outcome.resolved) {
    if (review.output) await saveAgentOutput(review.runId, review.output) // the settled, replayable stream
  }
}
// --- end of sample ---

export { stream }
