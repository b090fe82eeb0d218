// docs/permits.md "A permit for the action this run asked about", as written.
// Only the import of the application's values and the export at the end are
// added.
import { payments, reviewsUrl } from './app.js'

// --- sample ---
import { createWorkflow } from '@mastra/core/workflows'
import {
  createPusharyClient,
  createSqliteReviewStore,
  type PusharyApprovalStepInput,
  pusharyApprovalStep,
  pusharyGate,
  withPusharyPermit,
} from '@pushary/mastra'
import { z } from 'zod'

const client = createPusharyClient() // PUSHARY_API_KEY, PUSHARY_BASE_URL
const store = createSqliteReviewStore({ url: reviewsUrl })

// What your application starts the run with.
const refundRequest = z.object({ orderId: z.string(), amountMinor: z.number().int(), customerId: z.string() })

// The action, computed from the run's input: the question shows it, the permit is spent for it.
const refundAction = (request: z.infer<typeof refundRequest>) => ({
  toolName: 'refund.create',
  toolTarget: `order ${request.orderId}`,
  parameters: { amountMinor: request.amountMinor },
})

const refund = withPusharyPermit(
  { client, store },
  {
    id: 'refund',
    outputSchema: z.object({ refundId: z.string() }),
    initSchema: refundRequest, // types `initData` and checks it before the permit is spent
    action: ({ initData }) => refundAction(initData),
    execute: async ({ initData, permit }) => ({
      refundId: await payments.refund(initData.orderId, initData.amountMinor, permit.permitId),
    }),
  },
)

const refundWorkflow = createWorkflow({
  id: 'refund-from-request',
  inputSchema: refundRequest,
  outputSchema: z.unknown(),
  options: { autoRestartActiveRuns: false },
})
  .map(
    async ({ inputData }): Promise<PusharyApprovalStepInput> => ({
      operationId: `refund:${inputData.orderId}`,
      question: `Refund ${inputData.amountMinor / 100} EUR for order ${inputData.orderId}?`,
      type: 'confirm',
      externalId: inputData.customerId,
      subject: refundAction(inputData),
    }),
  )
  .then(pusharyApprovalStep({ client, store }))
  .then(pusharyGate())
  .then(refund)
  .commit()
// --- end of sample ---

export { client, refundWorkflow, store }
