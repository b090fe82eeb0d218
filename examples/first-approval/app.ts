import { appendFileSync } from 'node:fs'
import { Mastra } from '@mastra/core/mastra'
import { createStep, createWorkflow } from '@mastra/core/workflows'
import { LibSQLStore } from '@mastra/libsql'
import {
  createPusharyClient,
  createPusharyDispatcher,
  createSqliteReviewStore,
  isPusharyDeclined,
  pusharyApprovalStep,
  pusharyApprovalStepInputSchema,
  pusharyApprovedAnswerSchema,
  pusharyDeclinedSchema,
  pusharyGate,
  pusharyPendingDecisions,
} from '@pushary/mastra'
import { z } from 'zod'

const client = createPusharyClient() // reads PUSHARY_API_KEY and PUSHARY_BASE_URL
const store = createSqliteReviewStore({ url: 'file:./reviews.db' })

// The action. Its input schema fits only an approved answer, so nothing else can reach it.
const refund = createStep({
  id: 'refund',
  inputSchema: pusharyApprovedAnswerSchema,
  outputSchema: z.object({ refunded: z.literal(true) }),
  execute: async () => {
    appendFileSync('refunds.log', `refunded EUR 48 on order_1001 at ${new Date().toISOString()}\n`)
    console.log('Action ran: refunded EUR 48 on order_1001')
    return { refunded: true as const }
  },
})

const refundWorkflow = createWorkflow({
  id: 'refund',
  inputSchema: pusharyApprovalStepInputSchema,
  // A declined run also ends `success`, with the gate's declined result.
  outputSchema: z.union([z.object({ refunded: z.literal(true) }), pusharyDeclinedSchema]),
  options: { autoRestartActiveRuns: false },
})
  .then(pusharyApprovalStep({ client, store }, { externalId: 'customer_1', requireReachable: true }))
  .then(pusharyGate()) // continues only when the answer approves
  .then(refund)
  .commit()

const mastra = new Mastra({
  workflows: { refund: refundWorkflow },
  storage: new LibSQLStore({ id: 'first-approval', url: 'file:./mastra.db' }),
})
// No webhook secret: this app asks the service for the answer instead of receiving a callback.
const dispatcher = createPusharyDispatcher({ mastra, client, store })

const run = await mastra.getWorkflow('refund').createRun()
const started = await run.start({
  inputData: { operationId: 'refund:order_1001', question: 'Refund EUR 48 on order_1001?', type: 'confirm' },
})
const [asked] = pusharyPendingDecisions(started)
if (asked === undefined) {
  throw new Error(
    `the run is not waiting for an answer: ${started.status === 'failed' ? started.error.message : started.status}`,
  )
}
console.log(`Asked ${asked.externalId}: ${asked.question}`)
console.log(`Tap Approve or Deny on the linked phone, or open ${asked.link}`)

// Resume once the decision is answered: the dispatcher re-reads it, claims the review and resumes the run once.
let result = await dispatcher.resumeDecision(asked.decisionId)
while (result.status === 'pending') {
  await client.decisions.get(asked.decisionId, { wait: 25 }) // returns as soon as it is answered
  result = await dispatcher.resumeDecision(asked.decisionId)
}
const state = await mastra.getWorkflow('refund').getWorkflowRunById(run.runId)
if (isPusharyDeclined(state?.result)) console.log(`Not refunded: ${state.result.reason}`)
console.log(`Run ${run.runId} ended ${state?.status} (${result.status})`)
await store.close()
