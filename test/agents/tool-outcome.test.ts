/**
 * Issue 37, finding 2: an approved agent tool that fails, or that refuses its
 * input, is never recorded `completed`. Mastra hands the tool's error to the
 * model as the tool result and the review run ends `success`; the review
 * reads the tool's own result for the approved call instead. Real Mastra
 * agents on a LibSQL file, the local decision service over loopback HTTP, a
 * SQLite review store, and `dispatcher.recover` reading the same evidence.
 */
import { mkdtempSync } from 'node:fs'
import { join } from 'node:path'
import { Agent } from '@mastra/core/agent'
import { Mastra } from '@mastra/core/mastra'
import { createTool } from '@mastra/core/tools'
import { LibSQLStore } from '@mastra/libsql'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod/v4'
import { createPusharyDispatcher } from '../../src/agents/dispatcher.js'
import { openPusharyAgentReview } from '../../src/agents/open-review.js'
import { resumePusharyAgentReview } from '../../src/agents/resume-review.js'
import type { PusharyReviewStore } from '../../src/store/review-store.js'
import { createSqliteReviewStore } from '../../src/store/sqlite-store.js'
import { createTestEnv, type TestEnv } from '../helpers/mastra.js'
import { callsOnce, scriptedModel } from './support/scripted-model.js'

let env: TestEnv
let store: PusharyReviewStore
let n = 0

beforeAll(async () => {
  env = await createTestEnv('tool-outcome')
  store = createSqliteReviewStore({ url: `file:${join(env.dir, 'reviews.db')}` })
})
afterAll(async () => {
  await store?.close()
  await env?.close()
})

const call = { toolCallId: 'r1', toolName: 'issueRefund', input: { orderId: 'o1', amount: 20 } }

/** A refunder on a LibSQL file; `maxAmount` is the deployed tool's input rule. */
function refunderOn(dir: string, behaviour: { maxAmount?: number; fails?: boolean }) {
  const executions: unknown[] = []
  const issueRefund = createTool({
    id: 'issue-refund',
    description: 'Refund an order',
    inputSchema: z.object({ orderId: z.string(), amount: z.number().max(behaviour.maxAmount ?? 1000) }),
    requireApproval: true,
    execute: async (args) => {
      if (behaviour.fails) throw new Error('SQLITE_BUSY: database is locked')
      executions.push(args)
      return { refunded: true }
    },
  })
  const refunder = new Agent({
    id: 'refunder',
    name: 'refunder',
    instructions: 'Refund when asked.',
    model: scriptedModel(callsOnce([call])),
    tools: { issueRefund },
  })
  const mastra = new Mastra({
    agents: { refunder },
    storage: new LibSQLStore({ id: 'agents', url: `file:${join(dir, 'mastra.db')}` }),
    logger: false,
  })
  return { mastra, refunder: mastra.getAgent('refunder'), executions }
}

/** Suspends the refund, opens its review and answers it. */
async function answered(answer: string, behaviour: { maxAmount?: number; fails?: boolean }) {
  const dir = mkdtempSync(join(env.dir, `case-${++n}-`))
  const externalId = `customer_${n}`
  const app = refunderOn(dir, behaviour)
  const output = await app.refunder.generate('Refund o1', {
    memory: { thread: `t${n}`, resource: externalId },
  })
  expect(output.finishReason).toBe('suspended')
  const review = await openPusharyAgentReview(
    { client: env.client },
    {
      agent: app.refunder,
      agentId: 'refunder',
      runId: String(output.runId),
      toolCallId: call.toolCallId,
      externalId,
      actionVersion: 'v1',
      store,
    },
  )
  await env.client.decisions.answer(review.decisionId, answer)
  return { dir, externalId, app, decisionId: review.decisionId }
}

function resume(agent: unknown, decisionId: string, externalId: string) {
  return resumePusharyAgentReview(
    { client: env.client },
    { agent: agent as never, agentId: 'refunder', externalId, decisionId, store },
  )
}

describe('an approved agent tool is completed only when it ran', () => {
  it('records an approved tool that throws as uncertain with the action failed, and recover keeps it so', async () => {
    const s = await answered('yes', { fails: true })
    const outcome = await resume(s.app.refunder, s.decisionId, s.externalId)
    expect(outcome).toMatchObject({ status: 'uncertain', reasonCode: 'tool_failed', actionOutcome: 'failed' })
    expect((await store.get(s.decisionId))?.state).toBe('uncertain')
    expect(await store.actionOf(s.decisionId)).toMatchObject({ outcome: 'failed' })
    expect((await store.actionOf(s.decisionId))?.reason).toMatch(/SQLITE_BUSY/)
    // Recovery reads the same evidence from the review run's result.
    const dispatcher = createPusharyDispatcher({ mastra: s.app.mastra, client: env.client, store })
    const recovered = await dispatcher.recover(s.decisionId)
    expect(recovered).toMatchObject({ status: 'uncertain', actionOutcome: 'failed' })
    expect((await store.get(s.decisionId))?.state).toBe('uncertain')
  })

  it('records an approved call whose redeployed tool refuses the input as stale with the action refused', async () => {
    const s = await answered('yes', {})
    // The resuming worker runs a newer deploy whose tool refuses amount 20.
    const redeployed = refunderOn(s.dir, { maxAmount: 5 })
    const outcome = await resume(redeployed.refunder, s.decisionId, s.externalId)
    expect(outcome).toMatchObject({
      status: 'stale',
      reasonCode: 'tool_input_refused',
      actionOutcome: 'refused',
    })
    expect(redeployed.executions).toHaveLength(0)
    expect((await store.get(s.decisionId))?.state).toBe('stale')
    expect(await store.actionOf(s.decisionId)).toMatchObject({ outcome: 'refused' })
  })

  it('records a tool that ran as completed with the action ran', async () => {
    const s = await answered('yes', {})
    const outcome = await resume(s.app.refunder, s.decisionId, s.externalId)
    expect(outcome).toMatchObject({ status: 'resumed', actionOutcome: 'ran' })
    expect(s.app.executions).toHaveLength(1)
    expect((await store.get(s.decisionId))?.state).toBe('completed')
    expect(await store.actionOf(s.decisionId)).toMatchObject({ outcome: 'ran' })
  })

  it('records a declined call as completed with the action not run', async () => {
    const s = await answered('no', {})
    const outcome = await resume(s.app.refunder, s.decisionId, s.externalId)
    expect(outcome).toMatchObject({ status: 'resumed', actionOutcome: 'not_run' })
    expect(s.app.executions).toHaveLength(0)
    expect(await store.actionOf(s.decisionId)).toMatchObject({ outcome: 'not_run' })
  })
})
