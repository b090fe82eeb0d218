// README "Permits and approval links on the workflow step", as written. Only
// the import of the application's values and the export at the end are added.
import { authenticatedCustomer, order, refundOrderIdempotently, reviewsUrl, sendApprovalLink } from './app.js'

// --- sample ---
import { createWorkflow } from '@mastra/core/workflows'
import { z } from 'zod'
import {
  createPusharyClient,
  createSqliteReviewStore,
  pusharyApprovalStep,
  pusharyApprovalStepInputSchema,
  pusharyGate,
  withPusharyPermit,
} from '@pushary/mastra'

const client = createPusharyClient() // PUSHARY_API_KEY, PUSHARY_BASE_URL
const store = createSqliteReviewStore({ url: reviewsUrl }) // e.g. 'file:/var/lib/app/reviews.db'

const approve = pusharyApprovalStep(
  { client, store },
  {
    externalId: authenticatedCustomer.id,
    // No enrolled phone ('fallback'): the step asks for an approval link and hands it to you.
    onFallback: (link) => sendApprovalLink(link.externalId, link.approvalUrl),
  },
)

const refund = withPusharyPermit(
  { client, store },
  {
    id: 'refund',
    outputSchema: z.object({ refunded: z.boolean() }),
    // Must equal the subject the person approved, or the permit is refused (action_mismatch).
    action: { toolName: 'refund.create', toolTarget: order.id },
    execute: () => refundOrderIdempotently({ orderId: order.id, amount: order.amount }),
    summary: (output) => (output.refunded ? `refunded ${order.id}` : 'nothing refunded'),
  },
)

const refundWorkflow = createWorkflow({
  id: 'refund-with-permit',
  inputSchema: pusharyApprovalStepInputSchema,
  outputSchema: z.unknown(),
  options: { autoRestartActiveRuns: false },
})
  .then(approve)
  .then(pusharyGate())
  .then(refund)
  .commit()

// Start it with the subject the permit will be checked against:
// run.start({ inputData: { operationId: `refund:${order.id}:v1`, question: `Refund EUR ${order.amount}?`,
//   subject: { toolName: 'refund.create', toolTarget: order.id } } })
// A refused permit ends the run `success` with isPusharyPermitRefused(result.result) true; nothing ran.
// --- end of sample ---

export { client, refundWorkflow, store }
