/**
 * `withPusharyPermit` whose action is computed from the run's own input
 * (`initData`), in real Mastra runs against the local decision service over
 * loopback HTTP: each run spends its approval for its own action, a run
 * whose computed action is not what the person approved is refused by the
 * service, and an input that does not fit `initSchema` spends nothing.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Mastra } from '@mastra/core/mastra'
import { createWorkflow } from '@mastra/core/workflows'
import { LibSQLStore } from '@mastra/libsql'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod/v4'
import {
  isPusharyPermitRefused,
  type PusharyApprovalStepInput,
  pusharyApprovalStep,
  pusharyApprovalStepInputSchema,
  pusharyGate,
  pusharyPendingDecisions,
  withPusharyPermit,
} from '../../src/index.js'
import type { PusharyReviewStore } from '../../src/store/review-store.js'
import { createSqliteReviewStore } from '../../src/store/sqlite-store.js'
import { createTestEnv, type TestEnv } from '../helpers/mastra.js'

let env: TestEnv
let store: PusharyReviewStore
let mastra: Mastra
/** What each protected step saw of its run's input, by run. */
const ran = new Map<string, { orderId: string; amountMinor: number }>()

// The run is started with the question as asked and, beside it, the order
// the application will act on; the permit's action is computed from the latter.
const runInput = z.object({
  approval: pusharyApprovalStepInputSchema,
  orderId: z.string(),
  amountMinor: z.number().int().positive(),
})

function refundWorkflow() {
  return createWorkflow({
    id: 'refund-from-input',
    inputSchema: z.object({ approval: z.unknown(), orderId: z.string(), amountMinor: z.number() }),
    outputSchema: z.unknown(),
    options: { autoRestartActiveRuns: false },
  })
    .map(async ({ inputData }) => inputData.approval as PusharyApprovalStepInput)
    .then(pusharyApprovalStep({ client: env.client, store }, { id: 'approve' }))
    .then(pusharyGate())
    .then(
      withPusharyPermit(
        { client: env.client, store },
        {
          id: 'refund',
          approvalStepId: 'approve',
          outputSchema: z.object({ refunded: z.string() }),
          initSchema: runInput,
          action: ({ initData }) => ({
            toolName: 'refund.create',
            toolTarget: `order ${initData.orderId}`,
            parameters: { amountMinor: initData.amountMinor },
          }),
          execute: async ({ initData, runId }) => {
            ran.set(runId, { orderId: initData.orderId, amountMinor: initData.amountMinor })
            return { refunded: initData.orderId }
          },
        },
      ),
    )
    .commit()
}

beforeAll(async () => {
  env = await createTestEnv('permit-from-input')
  const dir = mkdtempSync(join(tmpdir(), 'pushary-permit-input-'))
  store = createSqliteReviewStore({ url: `file:${join(dir, 'reviews.db')}` })
  mastra = new Mastra({
    storage: new LibSQLStore({ id: 'permit-from-input', url: `file:${join(dir, 'mastra.db')}` }),
    workflows: { refund: refundWorkflow() },
    logger: false,
  })
}, 60_000)

afterAll(async () => {
  await store?.close()
  await env?.close()
})

/** Starts a run, the person approves what it asked, and the run is resumed. */
async function approvedRun(input: {
  orderId: string
  amountMinor: number
  asked: { orderId: string; amountMinor: number }
}) {
  const run = await mastra.getWorkflow('refund').createRun()
  const started = await run.start({
    inputData: {
      orderId: input.orderId,
      amountMinor: input.amountMinor,
      approval: {
        operationId: `refund:${input.orderId}`,
        question: `Refund order ${input.asked.orderId}?`,
        externalId: 'customer_1',
        subject: {
          toolName: 'refund.create',
          toolTarget: `order ${input.asked.orderId}`,
          parameters: { amountMinor: input.asked.amountMinor },
        },
      },
    },
  })
  const [pending] = pusharyPendingDecisions(started)
  if (!pending) throw new Error(`the run did not ask: ${started.status}`)
  await env.client.decisions.answer(pending.decisionId, 'yes')
  const result = await run.resume({
    step: 'approve',
    label: pending.decisionId,
    resumeData: { answer: 'yes' },
  })
  return { runId: run.runId, result, decisionId: pending.decisionId }
}

describe('withPusharyPermit with an action computed from the run input', () => {
  it('spends each run’s approval for the action computed from that run’s own input, and hands the input to the action', async () => {
    const first = await approvedRun({
      orderId: 'o-1',
      amountMinor: 4800,
      asked: { orderId: 'o-1', amountMinor: 4800 },
    })
    const second = await approvedRun({
      orderId: 'o-2',
      amountMinor: 990,
      asked: { orderId: 'o-2', amountMinor: 990 },
    })

    expect(first.result.status === 'success' && first.result.result).toEqual({ refunded: 'o-1' })
    expect(second.result.status === 'success' && second.result.result).toEqual({ refunded: 'o-2' })
    expect(ran.get(first.runId)).toEqual({ orderId: 'o-1', amountMinor: 4800 })
    expect(ran.get(second.runId)).toEqual({ orderId: 'o-2', amountMinor: 990 })
    expect((await store.permitOf(first.decisionId))?.action).toEqual({
      toolName: 'refund.create',
      toolTarget: 'order o-1',
      parameters: { amountMinor: 4800 },
      externalId: 'customer_1',
    })
    expect((await store.permitOf(second.decisionId))?.action).toMatchObject({
      toolTarget: 'order o-2',
      parameters: { amountMinor: 990 },
    })
  })

  it('refuses (action_mismatch) a run whose computed action is not what the person approved, and never runs it', async () => {
    // Asked about order o-1; the run's own input says o-3.
    const { runId, result, decisionId } = await approvedRun({
      orderId: 'o-3',
      amountMinor: 4800,
      asked: { orderId: 'o-1', amountMinor: 4800 },
    })
    expect(result.status).toBe('success')
    const refused = result.status === 'success' ? result.result : undefined
    expect(isPusharyPermitRefused(refused)).toBe(true)
    expect(refused).toMatchObject({ outcome: 'refused', refusal: 'action_mismatch', decisionId })
    expect(ran.has(runId)).toBe(false)
    expect(await store.permitOf(decisionId)).toBeNull()
  })

  it('refuses a run input that does not fit initSchema, naming the field, before the approval is spent', async () => {
    const { runId, result, decisionId } = await approvedRun({
      orderId: 'o-4',
      amountMinor: -5,
      asked: { orderId: 'o-4', amountMinor: -5 },
    })
    expect(result.status).toBe('failed')
    const error = result.status === 'failed' ? result.error : undefined
    // Mastra keeps the step's error as a plain object in the run result.
    expect(error).toMatchObject({
      name: 'PusharyValidationError',
      code: 'invalid_permit_input',
      field: 'initData.amountMinor',
    })
    expect(ran.has(runId)).toBe(false)
    // Nothing was spent: the approval is still good for exactly what was asked.
    const permit = await env.client.consumeAuthorization({
      authorizationId: decisionId,
      externalId: 'customer_1',
      toolName: 'refund.create',
      toolTarget: 'order o-4',
      parameters: { amountMinor: -5 },
    })
    expect(permit.status).toBe('permitted')
  })
})
