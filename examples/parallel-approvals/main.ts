/**
 * Many items at once: one workflow asks one person about several refunds in
 * parallel (the linear batch: one child run per item, the parent suspends
 * once), the answers are mixed, and only the approved items reach the
 * protected refund step.
 *
 *   npx tsx examples/parallel-approvals/main.ts                       # answers yes,no,yes,cancel,yes
 *   npx tsx examples/parallel-approvals/main.ts --answers yes,yes,no,no,yes
 *
 * The local decision service runs embedded on a temporary SQLite file; the
 * person's taps are sent through its API (a phone would send the same).
 * Prints a table item -> answer -> executed; exit 0 only when exactly the
 * approved items were refunded, each once.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { createClient } from '@libsql/client'
import { Mastra } from '@mastra/core/mastra'
import { createStep, createWorkflow } from '@mastra/core/workflows'
import { LibSQLStore } from '@mastra/libsql'
import {
  createPusharyApprovalWorkflow,
  createPusharyClient,
  createPusharyDevServer,
  createPusharyDispatcher,
  createSqliteReviewStore,
  type PusharyWorkflowReview,
  pusharyApprovalBatchStep,
  pusharyApprovalStepInputSchema,
  pusharyApprovedItemSchema,
  pusharyGateItems,
} from '@pushary/mastra'
import { waitForPusharyService } from '@pushary/mastra/testing'
import { z } from 'zod/v4'
import { linkSimulatedPhone } from '../shared/local-phone.js'

const CUSTOMER = 'customer_1'

// The business items: what the workflow receives and what a refund needs.
const orderSchema = z.object({ orderId: z.string(), amountMinor: z.number().int().positive() })
type Order = z.infer<typeof orderSchema>

function buildApp(input: { dir: string; client: ReturnType<typeof createPusharyClient> }) {
  const store = createSqliteReviewStore({ url: `file:${join(input.dir, 'reviews.sqlite')}` })
  const ledger = createClient({ url: `file:${join(input.dir, 'refunds.sqlite')}` })

  // The child workflow: one approval per item. Registered on Mastra under its ID.
  const itemApproval = createPusharyApprovalWorkflow(
    { client: input.client, store },
    { workflowId: 'refund-item-approval', externalId: CUSTOMER, requireReachable: true },
  )

  // Orders in, one approval question per order out (same order, same index).
  const toQuestions = createStep({
    id: 'to-questions',
    inputSchema: z.array(orderSchema),
    outputSchema: z.array(pusharyApprovalStepInputSchema),
    execute: async ({ inputData }) =>
      inputData.map((order) => ({
        operationId: `refund:${order.orderId}:v1`,
        question: `Refund ${(order.amountMinor / 100).toFixed(2)} EUR for ${order.orderId}?`,
        type: 'confirm' as const,
      })),
  })

  // The protected step. It receives `{ index, answer }` of an approved item
  // only, and maps the index back to the business item (the workflow input).
  const refund = createStep({
    id: 'refund-order',
    inputSchema: pusharyApprovedItemSchema,
    outputSchema: z.object({ orderId: z.string(), refunded: z.literal(true) }),
    execute: async ({ inputData, getInitData }) => {
      const order = z.array(orderSchema).parse(getInitData())[inputData.index]
      if (!order) throw new Error(`no order at index ${inputData.index}`)
      await ledger.execute({ sql: 'INSERT INTO refunds (order_id) VALUES (?)', args: [order.orderId] })
      return { orderId: order.orderId, refunded: true as const }
    },
  })

  const batch = createWorkflow({
    id: 'refund-batch',
    inputSchema: z.array(orderSchema),
    outputSchema: z.array(z.object({ orderId: z.string(), refunded: z.literal(true) })),
    // Package rule: never let Mastra's boot-time restart re-run a protected step.
    options: { autoRestartActiveRuns: false },
  })
    .then(toQuestions)
    .then(pusharyApprovalBatchStep({ childWorkflowId: 'refund-item-approval', store }))
    .then(pusharyGateItems())
    .foreach(refund)
    .commit()

  const mastra = new Mastra({
    workflows: { 'refund-item-approval': itemApproval, 'refund-batch': batch },
    storage: new LibSQLStore({ id: 'parallel-approvals', url: `file:${join(input.dir, 'mastra.sqlite')}` }),
    logger: false,
  })
  const dispatcher = createPusharyDispatcher({ mastra, client: input.client, store })
  return { mastra, store, ledger, dispatcher }
}

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { answers: { type: 'string', default: 'yes,no,yes,cancel,yes' } } })
  const answers = values.answers.split(',').map((answer) => answer.trim())
  if (answers.length === 0 || answers.some((answer) => !['yes', 'no', 'cancel'].includes(answer))) {
    process.stderr.write('--answers is a comma-separated list of yes, no or cancel\n')
    return 2
  }
  const dir = mkdtempSync(join(tmpdir(), 'pushary-parallel-'))
  const service = await createPusharyDevServer({
    callbackAddresses: { allowLoopback: true },
    dbPath: join(dir, 'service.sqlite'),
    port: 0,
    onError: () => {},
  })
  const client = createPusharyClient({ apiKey: service.apiKey, baseUrl: service.baseUrl })
  const app = buildApp({ dir, client })
  try {
    await waitForPusharyService(client, { timeoutMs: 30_000 })
    await app.ledger.execute('CREATE TABLE IF NOT EXISTS refunds (order_id TEXT NOT NULL)')
    await linkSimulatedPhone(client, CUSTOMER)
    const orders: Order[] = answers.map((_, index) => ({
      orderId: `order-${index + 1}`,
      amountMinor: 1000 * (index + 1),
    }))

    const run = await app.mastra.getWorkflow('refund-batch').createRun()
    const started = await run.start({ inputData: orders })
    if (started.status !== 'suspended')
      throw new Error(`the batch did not wait for answers (${started.status})`)

    // Each item is its own decision, found through its review's parent link.
    const reviews = (await app.store.listByState('pending', { limit: 1000 }))
      .filter((review): review is PusharyWorkflowReview => review.target === 'workflow-step')
      .filter((review) => review.parent?.runId === run.runId)
    const decisionOf = new Map(reviews.map((review) => [review.parent?.itemIndex, review.decisionId]))
    if (decisionOf.size !== orders.length)
      throw new Error(`expected ${orders.length} questions, found ${decisionOf.size}`)
    console.log(`Asked ${orders.length} questions at once (run ${run.runId}); the person answers:`)
    for (const [index, answer] of answers.entries()) {
      const decisionId = decisionOf.get(index)!
      if (answer === 'cancel') await client.decisions.cancel(decisionId)
      else await client.decisions.answer(decisionId, answer)
    }

    // No public callback URL here: reconcile resumes every answered item, and
    // the item that settles last resumes the parent once.
    let state = await app.mastra.getWorkflow('refund-batch').getWorkflowRunById(run.runId)
    for (let round = 0; round < 60 && state?.status !== 'success' && state?.status !== 'failed'; round++) {
      await app.dispatcher.reconcile({ limit: 100 })
      state = await app.mastra.getWorkflow('refund-batch').getWorkflowRunById(run.runId)
      if (state?.status !== 'success') await new Promise((resolve) => setTimeout(resolve, 250))
    }
    if (state?.status !== 'success') throw new Error(`the batch ended ${state?.status}`)

    const rows = (await app.ledger.execute('SELECT order_id FROM refunds')).rows.map((row) =>
      String(row.order_id),
    )
    console.log('')
    console.log('item      answer   executed')
    let ok = true
    for (const [index, order] of orders.entries()) {
      const executed = rows.filter((id) => id === order.orderId).length
      const expected = answers[index] === 'yes' ? 1 : 0
      ok &&= executed === expected
      console.log(
        `${order.orderId.padEnd(9)} ${String(answers[index]).padEnd(8)} ${executed === 1 ? 'yes' : executed === 0 ? 'no' : `${executed} times`}`,
      )
    }
    const approved = answers.filter((answer) => answer === 'yes').length
    console.log('')
    console.log(
      ok ? `OK: ${approved} of ${orders.length} refunded, each once; declined items never ran.` : 'MISMATCH',
    )
    return ok ? 0 : 1
  } finally {
    await app.store.close()
    app.ledger.close()
    await service.close()
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(
      `parallel-approvals failed: ${error instanceof Error ? error.message : String(error)}\n`,
    )
    process.exit(1)
  },
)
