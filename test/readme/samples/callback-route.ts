// docs/workflows.md "Callback route and reconcile", as written. Added before
// the sample: the imports and what it names but leaves to the application
// (the workflows, Mastra's storage, the client, the store, an Express app and
// a port); after it, the exports. The workflow is the step-and-gate refund.
import { randomUUID } from 'node:crypto'
import { createServer } from 'node:http'
import { join } from 'node:path'
import { Mastra } from '@mastra/core/mastra'
import { createStep, createWorkflow } from '@mastra/core/workflows'
import { LibSQLStore } from '@mastra/libsql'
import {
  createPusharyClient,
  createPusharyDispatcher,
  createSqliteReviewStore,
  pusharyApprovalStep,
  pusharyApprovalStepInputSchema,
  pusharyApprovedAnswerSchema,
  pusharyCallbackRoute,
  pusharyDeclinedSchema,
  pusharyExpressCallback,
  pusharyGate,
  pusharyNodeCallback,
} from '@pushary/mastra'
import express from 'express'
import { z } from 'zod'
import * as shop from './app.js'

const files = join(process.env.README_SAMPLES_DIR!, `route-${randomUUID()}`)
const client = createPusharyClient()
const store = createSqliteReviewStore({ url: `file:${files}-reviews.db` })
const storage = new LibSQLStore({ id: 'route', url: `file:${files}-mastra.db` })
const refund = createStep({
  id: 'refund',
  inputSchema: pusharyApprovedAnswerSchema,
  outputSchema: z.object({ refunded: z.boolean() }),
  execute: async () => shop.refundOrderIdempotently({ orderId: shop.order.id, amount: shop.order.amount }),
})
const workflows = {
  refund: createWorkflow({
    id: 'refund',
    inputSchema: pusharyApprovalStepInputSchema,
    outputSchema: z.union([z.object({ refunded: z.boolean() }), pusharyDeclinedSchema]),
    options: { autoRestartActiveRuns: false },
  })
    .then(pusharyApprovalStep({ client, store }, { externalId: shop.authenticatedCustomer.id }))
    .then(pusharyGate())
    .then(refund)
    .commit(),
}
const app = express()
const port = 0 // e.g. 3000

// --- sample ---
// One line in a `mastra dev` / Mastra server app: the route resolves the dispatcher on first use.
const mastra: Mastra = new Mastra({
  workflows,
  storage,
  server: { apiRoutes: [pusharyCallbackRoute(() => dispatcher)] },
})
const dispatcher = createPusharyDispatcher({
  mastra,
  client,
  store,
  webhookSecret: process.env.PUSHARY_WEBHOOK_SECRET,
})

// Or any Fetch-API server (Hono, Next.js route, Bun, Deno):
export const POST = (request: Request) => dispatcher.handleCallback(request)

// Or Express (no body parser on this route, or express.raw({ type: '*/*' }); never express.json()):
app.post('/pushary/callback', pusharyExpressCallback(dispatcher.handleCallback))

// Or plain node:http:
const server = createServer(pusharyNodeCallback(dispatcher.handleCallback)).listen(port)

// And periodically (lost callbacks, or no public callback URL at all):
const reconciling = setInterval(() => dispatcher.reconcile({ limit: 100 }), 30_000)
// --- end of sample ---

export { app, dispatcher, mastra, reconciling, server, store }
