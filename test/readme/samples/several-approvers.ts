// docs/workflows.md "Several approvers", as written. Added before the sample:
// what it names but leaves to the application (the payment, who asked, the
// payout, where the files live); after it, the exports.
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import * as app from './app.js'

const payment = { id: `pay_${randomUUID().slice(0, 8)}`, amount: 12_000 }
const requester = app.authenticatedCustomer
const payments: string[] = []
const sendPayment = async (paid: typeof payment) => {
  payments.push(paid.id)
  return { paid: true }
}
const files = join(process.env.README_SAMPLES_DIR!, `approvers-${randomUUID()}`)
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
  pusharyApprovalStep,
  pusharyApprovalStepInputSchema,
  pusharyApprovedAnswerSchema,
  pusharyGate,
} from '@pushary/mastra'

const client = createPusharyClient({ baseUrl: process.env.PUSHARY_BASE_URL }) // apiKey: PUSHARY_API_KEY
const store = createSqliteReviewStore({ url: reviewsUrl })

const pay = createStep({
  id: 'pay',
  inputSchema: pusharyApprovedAnswerSchema,
  outputSchema: z.object({ paid: z.boolean() }),
  execute: async () => sendPayment(payment),
})

const paymentWorkflow = createWorkflow({
  id: 'payment',
  inputSchema: pusharyApprovalStepInputSchema,
  outputSchema: z.unknown(),
  options: { autoRestartActiveRuns: false },
})
  // Any 2 of these 3 approve; one "no" declines; the requester never counts.
  .then(pusharyApprovalStep({ client, store }, { id: 'approve' }))
  .then(pusharyGate())
  .then(pay)
  .commit()

const mastra = new Mastra({
  workflows: { payment: paymentWorkflow },
  storage: new LibSQLStore({ id: 'app', url: mastraUrl }),
})
const run = await mastra.getWorkflow('payment').createRun()
await run.start({
  inputData: {
    operationId: `pay:${payment.id}`,
    question: `Pay €${payment.amount} to the supplier?`,
    type: 'confirm',
    approvers: { externalIds: ['cfo', 'controller', 'treasurer'], required: 2 },
    requestedBy: requester.id,
  },
})
// Suspended on three decisions; the dispatcher resumes it as each person answers.
// --- end of sample ---

export { client, mastra, payments, run, store }
