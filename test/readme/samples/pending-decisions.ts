// docs/workflows.md "What is this run waiting on?", as written. Added before
// the sample: what it names but leaves to the application (its notification
// channel, where the files live); after it, the exports.
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import { notifyOps } from './app.js'

const files = join(process.env.README_SAMPLES_DIR!, `pending-${randomUUID()}`)
const reviewsUrl = `file:${files}-reviews.db`
const mastraUrl = `file:${files}-mastra.db`

// --- sample ---
import { Mastra } from '@mastra/core/mastra'
import { createWorkflow } from '@mastra/core/workflows'
import { LibSQLStore } from '@mastra/libsql'
import {
  createPusharyClient,
  createSqliteReviewStore,
  pusharyApprovalStep,
  pusharyApprovalStepInputSchema,
  pusharyPendingDecisions,
  readPusharyPendingDecisions,
} from '@pushary/mastra'
import { z } from 'zod'

const client = createPusharyClient() // PUSHARY_API_KEY, PUSHARY_BASE_URL
const store = createSqliteReviewStore({ url: reviewsUrl })

const refunds = createWorkflow({
  id: 'refunds',
  inputSchema: z.array(pusharyApprovalStepInputSchema),
  outputSchema: z.unknown(),
  options: { autoRestartActiveRuns: false },
})
  .foreach(pusharyApprovalStep({ client, store }, { externalId: 'ops_lead' }), { concurrency: 3 })
  .commit()

const mastra = new Mastra({ workflows: { refunds }, storage: new LibSQLStore({ id: 'app', url: mastraUrl }) })

async function askForRefunds(orders: { id: string; amount: string }[]) {
  const run = await mastra.getWorkflow('refunds').createRun()
  const result = await run.start({
    inputData: orders.map((order) => ({
      operationId: `refund:${order.id}`,
      question: `Refund EUR ${order.amount} for ${order.id}?`,
      type: 'confirm' as const,
    })),
  })
  // One entry per open decision: for a .foreach, `itemIndex` is the item's position.
  for (const pending of pusharyPendingDecisions(result)) {
    await notifyOps(
      `#${pending.itemIndex} asked ${pending.externalId}: ${pending.question} (${pending.decisionId})`,
    )
  }
  return run.runId
}

// Later, from any process (a batch step's items included): read the run from storage.
async function stillOpen(runId: string) {
  const pending = await readPusharyPendingDecisions({ mastra, workflowId: 'refunds', runId })
  return pending.map((p) => p.decisionId)
}
// --- end of sample ---

export { askForRefunds, client, mastra, stillOpen, store }
