// docs/workflows.md "Parallel items", as written. Added before the sample:
// the imports and what it names but leaves to the application (the client,
// the store, Mastra's storage, the order schema and the refund); after it,
// the exports.
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import { Mastra } from '@mastra/core/mastra'
import { createStep, createWorkflow } from '@mastra/core/workflows'
import { LibSQLStore } from '@mastra/libsql'
import {
  createPusharyApprovalWorkflow,
  createPusharyClient,
  createSqliteReviewStore,
  pusharyApprovalBatchStep,
  pusharyApprovalStepInputSchema,
  pusharyApprovedItemSchema,
  pusharyGateItems,
} from '@pushary/mastra'
import { z } from 'zod'
import * as app from './app.js'

const files = join(process.env.README_SAMPLES_DIR!, `items-${randomUUID()}`)
const client = createPusharyClient()
const store = createSqliteReviewStore({ url: `file:${files}-reviews.db` })
const storage = new LibSQLStore({ id: 'items', url: `file:${files}-mastra.db` })
const customer = app.authenticatedCustomer
const callbackUrl = app.callbackUrl
const orderSchema = z.object({ id: z.string(), amount: z.number(), version: z.number() })
const refundOrderIdempotently = (order: z.infer<typeof orderSchema>) =>
  app.refundOrderIdempotently({ orderId: order.id, amount: order.amount })

// --- sample ---
const itemApproval = createPusharyApprovalWorkflow(
  { client, store },
  // Each item's answer arrives by signed callback; `reconcile` catches a lost one.
  { workflowId: 'refund-item-approval', externalId: customer.id, callbackUrl, requireReachable: true },
)
const toQuestions = createStep({
  id: 'to-questions',
  inputSchema: z.array(orderSchema),
  outputSchema: z.array(pusharyApprovalStepInputSchema),
  execute: async ({ inputData }) =>
    inputData.map((order) => ({
      operationId: `refund:${order.id}:v${order.version}`,
      question: `Refund €${order.amount} on ${order.id}?`,
      type: 'confirm' as const,
    })),
})
const refundOne = createStep({
  id: 'refund-order',
  inputSchema: pusharyApprovedItemSchema, // { index, answer } of an approved item only
  outputSchema: z.object({ orderId: z.string() }),
  execute: async ({ inputData, getInitData }) => {
    const order = z.array(orderSchema).parse(getInitData())[inputData.index]!
    await refundOrderIdempotently(order)
    return { orderId: order.id }
  },
})
const refundBatch = createWorkflow({
  id: 'refund-batch',
  inputSchema: z.array(orderSchema),
  outputSchema: z.array(z.object({ orderId: z.string() })),
  options: { autoRestartActiveRuns: false },
})
  .then(toQuestions)
  .then(pusharyApprovalBatchStep({ childWorkflowId: 'refund-item-approval', store }))
  .then(pusharyGateItems())
  .foreach(refundOne)
  .commit()

// Register the child under its workflow ID, next to the parent.
const mastra = new Mastra({
  workflows: { 'refund-item-approval': itemApproval, 'refund-batch': refundBatch },
  storage,
})
// --- end of sample ---

export { client, mastra, store }
