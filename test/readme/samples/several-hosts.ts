// docs/several-hosts.md, as written: one host's set-up. Added before the
// sample: what it names but leaves to the application (the client and the
// workflows built on the store); after it, the exports. The test runs it as
// two hosts on one PostgreSQL.
import { createStep, createWorkflow } from '@mastra/core/workflows'
import {
  createPusharyClient,
  type PusharyReviewStore,
  pusharyApprovalStep,
  pusharyApprovalStepInputSchema,
  pusharyApprovedAnswerSchema,
  pusharyDeclinedSchema,
  pusharyGate,
} from '@pushary/mastra'
import { z } from 'zod'
import * as shop from './app.js'

const client = createPusharyClient()
const mastraSchema = process.env.README_PG_MASTRA_SCHEMA! // e.g. 'app_mastra'
const reviewSchema = process.env.README_PG_REVIEW_SCHEMA! // e.g. 'app_reviews'
function refundWorkflows(app: { client: typeof client; store: PusharyReviewStore }) {
  const refund = createStep({
    id: 'refund',
    inputSchema: pusharyApprovedAnswerSchema,
    outputSchema: z.object({ refunded: z.boolean() }),
    execute: async () => shop.refundOrderIdempotently({ orderId: shop.order.id, amount: shop.order.amount }),
  })
  const refundWorkflow = createWorkflow({
    id: 'refund',
    inputSchema: pusharyApprovalStepInputSchema,
    outputSchema: z.union([z.object({ refunded: z.boolean() }), pusharyDeclinedSchema]),
    options: { autoRestartActiveRuns: false },
  })
    .then(pusharyApprovalStep(app, { externalId: shop.authenticatedCustomer.id }))
    .then(pusharyGate())
    .then(refund)
    .commit()
  return { refund: refundWorkflow }
}

// --- sample ---
import { Mastra } from '@mastra/core/mastra'
import { PostgresStore } from '@mastra/pg'
import { createPostgresReviewStore, createPusharyDispatcher } from '@pushary/mastra'

const connectionString = process.env.DATABASE_URL! // the one PostgreSQL every host shares
const storage = new PostgresStore({ id: 'app', connectionString, schemaName: mastraSchema })
await storage.init() // a deploy step; repeating it is harmless
const store = createPostgresReviewStore({ connectionString, schema: reviewSchema })

const mastra = new Mastra({ workflows: refundWorkflows({ client, store }), storage })
const dispatcher = createPusharyDispatcher({
  mastra,
  client,
  store,
  webhookSecret: process.env.PUSHARY_WEBHOOK_SECRET,
})
// dispatcher.handleCallback behind the load balancer is the callbackUrl; and on every host:
const reconciling = setInterval(() => dispatcher.reconcile({ limit: 100 }), 30_000)
// --- end of sample ---

export { dispatcher, mastra, reconciling, storage, store }
