// docs/workflows.md "Workflow step and gate", as written. Added before the
// sample: what it names but leaves to the application (the order, the
// customer, the refund, where the files live); after it, the exports.
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import * as app from './app.js'

const order = { ...app.order, version: 1 }
const customer = app.authenticatedCustomer
const callbackUrl = app.callbackUrl
const refundOrderIdempotently = (refunded: typeof order) =>
  app.refundOrderIdempotently({ orderId: refunded.id, amount: refunded.amount })
const files = join(process.env.README_SAMPLES_DIR!, `gate-${randomUUID()}`)
const reviewsUrl = `file:${files}-reviews.db`
const mastraUrl = `file:${files}-mastra.db`

// --- sample ---
import { Mastra } from '@mastra/core/mastra'
import { createStep, createWorkflow } from '@mastra/core/workflows'
import { LibSQLStore } from '@mastra/libsql'
import { z } from 'zod'
import {
  createPusharyClient,
  createSqliteReviewStore,
  isPusharyDeclined,
  pusharyApprovalStep,
  pusharyApprovalStepInputSchema,
  pusharyApprovedAnswerSchema,
  pusharyDeclinedSchema,
  pusharyGate,
} from '@pushary/mastra'

const client = createPusharyClient({ baseUrl: process.env.PUSHARY_BASE_URL }) // apiKey: PUSHARY_API_KEY
const store = createSqliteReviewStore({ url: reviewsUrl }) // e.g. 'file:./reviews.db'

const refund = createStep({
  id: 'refund',
  inputSchema: pusharyApprovedAnswerSchema, // only an approved answer fits
  outputSchema: z.object({ refunded: z.boolean() }),
  execute: async () => refundOrderIdempotently(order), // your business side effect
})

const refundWorkflow = createWorkflow({
  id: 'refund',
  inputSchema: pusharyApprovalStepInputSchema,
  // A declined run also ends `success`, with the gate's declined result.
  outputSchema: z.union([z.object({ refunded: z.boolean() }), pusharyDeclinedSchema]),
  options: { autoRestartActiveRuns: false },
})
  .then(
    pusharyApprovalStep({ client, store }, { externalId: customer.id, callbackUrl, requireReachable: true }),
  )
  .then(pusharyGate()) // continues only when approved === true
  .then(refund)
  .commit()

const mastra = new Mastra({
  workflows: { refund: refundWorkflow },
  storage: new LibSQLStore({ id: 'app', url: mastraUrl }), // e.g. 'file:./mastra.db'
})
const run = await mastra.getWorkflow('refund').createRun()
await run.start({
  inputData: {
    operationId: `refund:${order.id}:v${order.version}`,
    question: `Refund €${order.amount} on ${order.id}?`,
    type: 'confirm',
  },
})
// The run is suspended; this process may exit. Later (after the dispatcher resumed it):
const state = await mastra.getWorkflow('refund').getWorkflowRunById(run.runId)
if (isPusharyDeclined(state?.result)) console.log('not refunded:', state.result.reason)
// --- end of sample ---

export { client, mastra, run, state, store }
