/**
 * The application side of the demo: a Mastra workflow that asks one person
 * to approve a refund, gates on `approved`, and only then runs the protected
 * refund step. Refunds are rows in a SQLite table (no money moves).
 */
import { createClient } from '@libsql/client'
import { Mastra } from '@mastra/core/mastra'
import { createStep, createWorkflow } from '@mastra/core/workflows'
import { LibSQLStore } from '@mastra/libsql'
import {
  createPusharyDispatcher,
  type PusharyClient,
  type PusharyReviewStore,
  pusharyApprovalStep,
  pusharyApprovalStepInputSchema,
  pusharyApprovedAnswerSchema,
  pusharyDeclinedSchema,
  pusharyGate,
} from '@pushary/mastra'
import { z } from 'zod/v4'

export const refundOrderSchema = z.object({
  orderId: z.string().min(1),
  amountMinor: z.number().int().positive(),
  currency: z.string().regex(/^[A-Z]{3}$/),
  customerId: z.string().min(1),
  /** What the demo asks: a confirm (the default), or a choice or a text, which are data and never approve. */
  ask: z.enum(['confirm', 'select', 'input']).default('confirm'),
  /** Several approvers instead of the customer (`--approvers`): each is asked, `required` of them must approve. */
  approvers: z
    .object({ externalIds: z.array(z.string().min(1)).min(1), required: z.number().int().optional() })
    .optional(),
})
export type RefundOrder = z.infer<typeof refundOrderSchema>
const refundedSchema = z.object({ refunded: z.literal(true), orderId: z.string() })

/** The protected side effect: one row per executed refund. */
export function createRefundLedger(url: string) {
  const db = createClient({ url })
  const ready = db.execute(
    'CREATE TABLE IF NOT EXISTS refunds (order_id TEXT NOT NULL, amount_minor INTEGER NOT NULL, currency TEXT NOT NULL, at TEXT NOT NULL)',
  )
  return {
    async execute(order: RefundOrder): Promise<void> {
      await ready
      await db.execute({
        sql: 'INSERT INTO refunds (order_id, amount_minor, currency, at) VALUES (?, ?, ?, ?)',
        args: [order.orderId, order.amountMinor, order.currency, new Date().toISOString()],
      })
    },
    async count(orderId: string): Promise<number> {
      await ready
      const rows = await db.execute({
        sql: 'SELECT COUNT(*) AS n FROM refunds WHERE order_id = ?',
        args: [orderId],
      })
      return Number(rows.rows[0]?.n ?? 0)
    },
    close: () => db.close(),
  }
}
export type RefundLedger = ReturnType<typeof createRefundLedger>

/**
 * Builds Mastra with the refund workflow and the dispatcher that resumes it.
 *
 * @example
 * const app = createRefundApp({ client, store, ledger, storageUrl: 'file:.pushary/demo-mastra.db', webhookSecret, callbackUrl })
 */
export function createRefundApp(input: {
  client: PusharyClient
  store: PusharyReviewStore
  ledger: RefundLedger
  storageUrl: string
  webhookSecret: string
  callbackUrl?: string
  expiresInSeconds?: number
  requireReachable?: boolean
}) {
  const prepare = createStep({
    id: 'prepare-question',
    inputSchema: refundOrderSchema,
    outputSchema: pusharyApprovalStepInputSchema,
    execute: async ({ inputData }) => ({
      operationId: `refund:${inputData.orderId}`,
      question:
        inputData.ask === 'input'
          ? `Why should order ${inputData.orderId} be refunded?`
          : `Refund ${(inputData.amountMinor / 100).toFixed(2)} ${inputData.currency} for order ${inputData.orderId}?`,
      type: inputData.ask,
      ...(inputData.ask === 'select' ? { options: ['yes', 'store credit'] } : {}),
      ...(inputData.approvers ? { approvers: inputData.approvers } : { externalId: inputData.customerId }),
      subject: {
        toolName: 'refund.create',
        toolTarget: inputData.orderId,
        parameters: { orderId: inputData.orderId, amountMinor: inputData.amountMinor },
        presentation: {
          label: 'Refund',
          effect: 'Sends money back to the customer',
          changes: [
            {
              parameter: 'amountMinor',
              label: 'Amount',
              format: { kind: 'currency' as const, currency: inputData.currency },
            },
          ],
          risk: 'medium' as const,
        },
      },
    }),
  })

  const refund = createStep({
    id: 'issue-refund',
    // Only an approved answer fits: chaining this straight after the approval step fails to typecheck.
    inputSchema: pusharyApprovedAnswerSchema,
    outputSchema: refundedSchema,
    execute: async ({ getInitData }) => {
      const order = refundOrderSchema.parse(getInitData())
      await input.ledger.execute(order)
      return { refunded: true as const, orderId: order.orderId }
    },
  })

  const workflow = createWorkflow({
    id: 'refund-approval',
    inputSchema: refundOrderSchema,
    // A declined run also ends `success`, with the gate's declined result.
    outputSchema: z.union([refundedSchema, pusharyDeclinedSchema]),
    options: { autoRestartActiveRuns: false },
  })
    .then(prepare)
    .then(
      pusharyApprovalStep(
        { client: input.client, store: input.store },
        {
          id: 'approve-refund',
          agentName: 'Refund demo',
          ...(input.callbackUrl ? { callbackUrl: input.callbackUrl } : {}),
          ...(input.expiresInSeconds ? { expiresInSeconds: input.expiresInSeconds } : {}),
          ...(input.requireReachable ? { requireReachable: true } : {}),
        },
      ),
    )
    .then(pusharyGate())
    .then(refund)
    .commit()

  const mastra = new Mastra({
    storage: new LibSQLStore({ id: 'refund-demo', url: input.storageUrl }),
    workflows: { refundApproval: workflow },
    logger: false,
  })
  const dispatcher = createPusharyDispatcher({
    mastra,
    client: input.client,
    store: input.store,
    webhookSecret: input.webhookSecret,
  })
  return { mastra, workflow: mastra.getWorkflow('refundApproval'), dispatcher }
}
