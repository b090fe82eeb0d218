/**
 * `withPusharyPermit` in real Mastra runs against the local decision service
 * over loopback HTTP: the action runs only on a permit for exactly the
 * approved action, its outcome becomes the permit's receipt, and every
 * refusal is a typed result with the action not run.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Mastra } from '@mastra/core/mastra'
import { createWorkflow } from '@mastra/core/workflows'
import { LibSQLStore } from '@mastra/libsql'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod/v4'
import { isPusharyValidationError } from '../../src/pushary/errors.js'
import { pusharyApprovalStepInputSchema } from '../../src/steps/approval-schemas.js'
import { pusharyApprovalStep } from '../../src/steps/approval-step.js'
import { pusharyGate } from '../../src/steps/gate-step.js'
import { isPusharyPermitRefused, withPusharyPermit } from '../../src/steps/permit-step.js'
import type { PusharyReviewStore } from '../../src/store/review-store.js'
import { createSqliteReviewStore } from '../../src/store/sqlite-store.js'
import { createTestEnv, type TestEnv } from '../helpers/mastra.js'

let env: TestEnv
let store: PusharyReviewStore
let mastra: Mastra
const ran: string[] = []

function permitWorkflow(id: string, toolTarget: string, fail = false) {
  return createWorkflow({
    id,
    inputSchema: pusharyApprovalStepInputSchema,
    outputSchema: z.unknown(),
    options: { autoRestartActiveRuns: false },
  })
    .then(pusharyApprovalStep({ client: env.client, store }, { id: 'approve' }))
    .then(pusharyGate())
    .then(
      withPusharyPermit(
        { client: env.client, store },
        {
          id: 'refund',
          approvalStepId: 'approve',
          outputSchema: z.object({ refunded: z.literal(true) }),
          action: { toolName: 'refund.create', toolTarget },
          execute: async ({ runId }) => {
            ran.push(runId)
            if (fail) throw new Error('card declined')
            return { refunded: true as const }
          },
        },
      ),
    )
    .commit()
}

beforeAll(async () => {
  env = await createTestEnv('permit-step')
  const dir = mkdtempSync(join(tmpdir(), 'pushary-permit-step-'))
  store = createSqliteReviewStore({ url: `file:${join(dir, 'reviews.db')}` })
  mastra = new Mastra({
    storage: new LibSQLStore({ id: 'permit-step', url: `file:${join(dir, 'mastra.db')}` }),
    workflows: {
      exact: permitWorkflow('refund-exact', 'order o-1'),
      other: permitWorkflow('refund-other-target', 'order o-999'),
      failing: permitWorkflow('refund-failing', 'order o-1', true),
    },
    logger: false,
  })
}, 60_000)

afterAll(async () => {
  await store?.close()
  await env?.close()
})

async function approvedRun(workflow: 'exact' | 'other' | 'failing') {
  const run = await mastra.getWorkflow(workflow).createRun()
  await run.start({
    inputData: {
      operationId: `refund:${run.runId}`,
      question: 'Refund order o-1?',
      externalId: 'customer_1',
      subject: { toolName: 'refund.create', toolTarget: 'order o-1' },
    },
  })
  const review = (await store.listByState('pending', { limit: 100 })).find((r) => r.runId === run.runId)
  if (!review) throw new Error('no review')
  await env.client.decisions.answer(review.decisionId, 'yes')
  const result = await run.resume({
    step: 'approve',
    label: review.decisionId,
    resumeData: { answer: 'yes' },
  })
  return { run, result, decisionId: review.decisionId }
}

describe('withPusharyPermit', () => {
  it('runs the action on a permit for the approved action and records it on the review; the approval cannot be spent again', async () => {
    const { run, result, decisionId } = await approvedRun('exact')
    expect(result.status).toBe('success')
    expect(result.status === 'success' && result.result).toEqual({ refunded: true })
    expect(ran).toContain(run.runId)
    const permit = await store.permitOf(decisionId)
    expect(permit?.action).toEqual({
      toolName: 'refund.create',
      toolTarget: 'order o-1',
      externalId: 'customer_1',
    })
    const again = await env.client.consumeAuthorization({
      authorizationId: decisionId,
      ...permit?.action,
    } as never)
    expect(again).toMatchObject({
      status: 'refused',
      refusal: 'already_consumed',
      executionState: 'succeeded',
    })
  })

  it('refuses an action that differs from the approved one (action_mismatch) and never runs it', async () => {
    const { run, result, decisionId } = await approvedRun('other')
    expect(result.status).toBe('success')
    const refused = result.status === 'success' ? result.result : undefined
    expect(isPusharyPermitRefused(refused)).toBe(true)
    expect(refused).toMatchObject({ outcome: 'refused', refusal: 'action_mismatch', decisionId })
    expect(ran).not.toContain(run.runId)
    expect(await store.permitOf(decisionId)).toBeNull()
  })

  it('records a failed receipt when the action throws, and the run fails', async () => {
    const { run, result, decisionId } = await approvedRun('failing')
    expect(result.status).toBe('failed')
    expect(ran).toContain(run.runId)
    const permit = await store.permitOf(decisionId)
    const again = await env.client.consumeAuthorization({
      authorizationId: decisionId,
      ...permit?.action,
    } as never)
    expect(again).toMatchObject({ refusal: 'already_consumed', executionState: 'failed' })
  })

  it('refuses a malformed action in the factory, naming the field, before any request', () => {
    let caught: unknown
    try {
      withPusharyPermit(
        { client: env.client },
        {
          id: 'refund',
          outputSchema: z.unknown(),
          action: { toolName: '', actor: 'x'.repeat(500) },
          execute: async () => undefined,
        },
      )
    } catch (error) {
      caught = error
    }
    expect(isPusharyValidationError(caught)).toBe(true)
    expect(isPusharyValidationError(caught) && caught.field).toMatch(/^opts\.action\./)
  })
})
