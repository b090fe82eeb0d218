/**
 * Types at the edges: what a user imports from `@pushary/mastra` (resolved to
 * src/index.ts through the tsconfig path) composes with Mastra's own types
 * without casts. `npm run typecheck` checks these assertions; the runtime
 * part only proves the names exist.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createStep, createWorkflow } from '@mastra/core/workflows'
import {
  createPusharyClient,
  createSqliteReviewStore,
  type Decision,
  isPusharyDeclined,
  type PusharyAnswer,
  type PusharyApprovedAnswer,
  type PusharyClient,
  type PusharyDispatchResult,
  type PusharyPendingDecision,
  type PusharyReview,
  type PusharyReviewStore,
  pusharyAnswerSchema,
  pusharyApprovalStep,
  pusharyApprovalStepInputSchema,
  pusharyApprovedAnswerSchema,
  pusharyGate,
  pusharyPendingDecisions,
  type ReviewClaimResult,
  type ReviewState,
  readPusharyPendingDecisions,
  withPusharyPermit,
} from '@pushary/mastra'
import { describe, expect, expectTypeOf, it } from 'vitest'
import { z } from 'zod/v4'

/** Exhaustive by construction: adding a status without handling it fails typecheck. */
function retryLater(result: PusharyDispatchResult): boolean {
  switch (result.status) {
    case 'unknown':
    case 'busy':
    case 'pending':
    case 'not_suspended_yet':
    case 'misconfigured':
      return true
    case 'resumed':
    case 'duplicate':
    case 'stale':
    case 'uncertain':
    case 'mismatch':
    case 'invalid_answer':
    case 'parent':
    case 'recovery_needed':
      return false
    default: {
      const unreachable: never = result
      return unreachable
    }
  }
}

describe('public types', () => {
  it('types the step so a gate and a protected step chain onto it without casts', async () => {
    const client = createPusharyClient({
      apiKey: 'pk_types.sk_types',
      baseUrl: 'http://127.0.0.1:1/api/v1/server',
    })
    const store = createSqliteReviewStore({
      url: `file:${join(mkdtempSync(join(tmpdir(), 'pushary-types-')), 'reviews.db')}`,
    })
    const step = pusharyApprovalStep({ client, store }, { externalId: 'customer_1' })
    const workflow = createWorkflow({
      id: 'typed-refund',
      inputSchema: pusharyApprovalStepInputSchema,
      outputSchema: pusharyAnswerSchema,
    })
      .then(step)
      .then(pusharyGate())
      .commit()
    expect(workflow.id).toBe('typed-refund')
    expectTypeOf(client).toEqualTypeOf<PusharyClient>()
    expectTypeOf(store).toEqualTypeOf<PusharyReviewStore>()
    await store.close()
  })

  it('refuses to typecheck a protected step chained straight after the approval step, and accepts it after the gate', async () => {
    const client = createPusharyClient({
      apiKey: 'pk_types.sk_types',
      baseUrl: 'http://127.0.0.1:1/api/v1/server',
    })
    const refund = createStep({
      id: 'refund',
      inputSchema: pusharyApprovedAnswerSchema,
      outputSchema: z.object({ refunded: z.literal(true) }),
      execute: async () => ({ refunded: true as const }),
    })
    const ask = pusharyApprovalStep({ client }, { externalId: 'customer_1' })
    const gated = createWorkflow({
      id: 'gated',
      inputSchema: pusharyApprovalStepInputSchema,
      outputSchema: z.unknown(),
    })
      .then(ask)
      .then(pusharyGate())
      .then(refund)
      .commit()
    const ungated = createWorkflow({
      id: 'ungated',
      inputSchema: pusharyApprovalStepInputSchema,
      outputSchema: z.unknown(),
    })
      .then(ask)
      // @ts-expect-error a denial would reach the refund: the approval step's answer is not an approved answer
      .then(refund)
    expect(gated.id).toBe('gated')
    expect(ungated).toBeDefined()
    expectTypeOf<z.infer<typeof pusharyApprovedAnswerSchema>>().toEqualTypeOf<PusharyApprovedAnswer>()
    expectTypeOf<Omit<PusharyApprovedAnswer, 'pusharyGate()'>>().toEqualTypeOf<{
      status: 'answered'
      value: string
      approved: true
    }>()
  })

  it('infers answers, decisions and store results as closed unions', () => {
    expectTypeOf<z.infer<typeof pusharyAnswerSchema>>().toEqualTypeOf<PusharyAnswer>()
    expectTypeOf<PusharyAnswer['status']>().toEqualTypeOf<'answered' | 'expired' | 'cancelled' | 'unknown'>()
    expectTypeOf<PusharyAnswer['value']>().toEqualTypeOf<string | null>()
    expectTypeOf<Decision['status']>().toEqualTypeOf<
      'pending' | 'answered' | 'expired' | 'cancelled' | 'unknown'
    >()
    expectTypeOf<ReviewClaimResult>().toEqualTypeOf<'claimed' | 'busy' | 'settled'>()
    expectTypeOf<ReviewState>().toEqualTypeOf<'pending' | 'resuming' | 'completed' | 'stale' | 'uncertain'>()
    expectTypeOf<PusharyReview['target']>().toEqualTypeOf<'agent' | 'workflow-step' | 'batch-parent'>()
    expectTypeOf<PusharyClient['decisions']['get']>().returns.resolves.toEqualTypeOf<Decision>()
    expectTypeOf(isPusharyDeclined).guards.toHaveProperty('reason')
  })

  it('reads the decisions a Mastra run result waits on without casts, and types a permit action from initSchema', () => {
    const client = createPusharyClient({
      apiKey: 'pk_types.sk_types',
      baseUrl: 'http://127.0.0.1:1/api/v1/server',
    })
    const workflow = createWorkflow({
      id: 'typed-pending',
      inputSchema: pusharyApprovalStepInputSchema,
      outputSchema: pusharyAnswerSchema,
    })
      .then(pusharyApprovalStep({ client }, { externalId: 'customer_1' }))
      .commit()
    // Type-level only: a native run's start() result is accepted as is.
    const pendingOf = async (run: Awaited<ReturnType<typeof workflow.createRun>>) =>
      pusharyPendingDecisions(
        await run.start({ inputData: { operationId: 'op-1', question: 'Ship?', type: 'confirm' } }),
      )
    expectTypeOf(pendingOf).returns.resolves.toEqualTypeOf<PusharyPendingDecision[]>()
    expectTypeOf(readPusharyPendingDecisions).returns.resolves.toEqualTypeOf<PusharyPendingDecision[]>()
    expectTypeOf<PusharyPendingDecision['itemIndex']>().toEqualTypeOf<number | null>()

    const refund = withPusharyPermit(
      { client },
      {
        id: 'refund',
        outputSchema: z.object({ refunded: z.string() }),
        initSchema: z.object({ orderId: z.string() }),
        action: ({ initData }) => {
          expectTypeOf(initData).toEqualTypeOf<{ orderId: string }>()
          return { toolName: 'refund.create', toolTarget: `order ${initData.orderId}` }
        },
        execute: async ({ initData }) => ({ refunded: initData.orderId }),
      },
    )
    expect(refund.id).toBe('refund')
  })

  it('lets a caller consume dispatch results exhaustively', () => {
    expect(retryLater({ status: 'busy', decisionId: 'd1' })).toBe(true)
    expect(retryLater({ status: 'duplicate', decisionId: 'd1' })).toBe(false)
  })
})
