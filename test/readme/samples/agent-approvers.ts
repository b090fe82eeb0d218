// docs/agents.md "Several approvers", as written. Added before the sample:
// the refund tool registered on the application's agent, and where the
// application records who approved; after it, the exports.
import {
  agent,
  authenticatedCustomer,
  config,
  customerConversation,
  refundTool,
  registerTools,
} from './app.js'

registerTools({ issueRefund: refundTool })
const approvals: { toolCallId: string | undefined; approvedBy: string[] }[] = []
async function recordApprovers(toolCallId: string | undefined, approvedBy: string[]) {
  approvals.push({ toolCallId, approvedBy })
}

// --- sample ---
import { resolvePusharyApprovals } from '@pushary/mastra'

const memory = { thread: customerConversation.id, resource: authenticatedCustomer.id }
const output = await agent.generate('Refund order o-1', { memory })
if (output.finishReason === 'suspended') {
  const { runs } = await agent.listSuspendedRuns({ resourceId: authenticatedCustomer.id })
  const outcome = await resolvePusharyApprovals(
    {
      ...config,
      // Any 2 of these 3 approve; one "no" declines; the requester is never asked.
      approvers: { externalIds: ['cfo', 'controller', 'treasurer'], required: 2 },
      requestedBy: authenticatedCustomer.id,
      policy: false,
    },
    { agent, runs: runs.filter((run) => run.runId === output.runId) },
  )
  for (const review of outcome.resolved) {
    const approved = (review.approvers ?? []).filter((approver) => approver.approved)
    const approvedBy = approved.map((approver) => approver.externalId)
    await recordApprovers(review.toolCallId, approvedBy)
  }
}
// --- end of sample ---

export { approvals, output }
