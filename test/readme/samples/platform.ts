// README "Platform", as written. Only the import of the application's values
// and the export at the end are added.
import { authenticatedCustomer, order, refundOrderIdempotently, sendApprovalLink } from './app.js'

// --- sample ---
import { createPusharyClient, isApproved } from '@pushary/mastra'

const client = createPusharyClient() // PUSHARY_API_KEY, PUSHARY_BASE_URL
const customer = authenticatedCustomer.id
const action = {
  toolName: 'refund.create',
  toolTarget: order.id,
  externalId: customer,
  parameters: { amountMinor: order.amount * 100, currency: 'EUR' },
}

// No enrolled phone ('fallback'): ask for a link and deliver it yourself.
const reach = await client.reachability(customer)
const created = await client.decisions.create({
  question: `Refund EUR ${order.amount} on ${order.id}?`,
  ...action,
  approvalUrl: reach.deliverability === 'fallback',
})
if (created.approvalUrl) await sendApprovalLink(customer, created.approvalUrl)

const decision = await client.decisions.get(created.decisionId, { wait: 50 })
if (isApproved(decision)) {
  // Spend the approval once, for exactly this action; a refusal is a result.
  const permit = await client.consumeAuthorization({ authorizationId: decision.decisionId, ...action })
  if (permit.status === 'permitted') {
    const outcome = await refundOrderIdempotently({ orderId: order.id, amount: order.amount })
    await client.recordReceipt(permit.permitId, { outcome: outcome.refunded ? 'succeeded' : 'failed' })
  }
}
// --- end of sample ---

export { action, decision, reach }
