/**
 * Issue 24: what the agent entry points say matches what happened. Each case
 * is one of the six a new user hit: a missing store (open, resume), a Mastra
 * without storage, a native approve before the person answered, a resolve
 * aimed at the sub-agent, and two store-less resolvers racing on one thread.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { Agent } from '@mastra/core/agent'
import { Mastra } from '@mastra/core/mastra'
import { createTool } from '@mastra/core/tools'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod/v4'
import { openPusharyAgentReview } from '../../src/agents/open-review.js'
import { resolvePusharyApprovals } from '../../src/agents/resolve-approvals.js'
import { resumePusharyAgentReview } from '../../src/agents/resume-review.js'
import type { PusharyAgentReviewStore } from '../../src/store/agent-review-store.js'
import type { PusharyReviewStore } from '../../src/store/review-store.js'
import { createSqliteReviewStore } from '../../src/store/sqlite-store.js'
import {
  countEffects,
  createTestEnv,
  runFixture,
  type TestEnv,
  waitFor,
  writeEnvFile,
} from '../helpers/mastra.js'
import { pendingDecisionOf } from './support/agent-env.js'
import { buildAgents } from './support/agents.js'
import { callsOnce, scriptedModel } from './support/scripted-model.js'

let env: TestEnv
let store: PusharyReviewStore
let n = 0

beforeAll(async () => {
  env = await createTestEnv('reasons')
  store = createSqliteReviewStore({ url: `file:${join(env.dir, 'reviews.db')}` })
})
afterAll(async () => {
  await store?.close()
  await env?.close()
})

const refundCall = { toolCallId: 'r1', toolName: 'issueRefund', input: { orderId: 'o1', amount: 20 } }

/** A refunder suspended on its `requireApproval` refund, on a LibSQL-backed Mastra. */
async function suspendedRefund() {
  const dir = mkdtempSync(join(env.dir, `case-${++n}-`))
  const externalId = `customer_${n}`
  const built = buildAgents({ dir, client: env.client, externalId, calls: [refundCall] })
  const output = await built.refunder.generate('Refund o1', {
    memory: { thread: `t${n}`, resource: externalId },
  })
  expect(output.finishReason).toBe('suspended')
  const { runs } = await built.refunder.listSuspendedRuns({ resourceId: externalId })
  const run = runs.find((item) => item.runId === output.runId)!
  const target = {
    agent: built.refunder,
    agentId: 'refunder',
    runId: run.runId,
    toolCallId: refundCall.toolCallId,
    externalId,
    actionVersion: 'draft_1',
    store,
  }
  return { ...built, externalId, run, target }
}

const decisionsOf = async (externalId: string) =>
  (await env.client.decisions.list({ externalId, limit: 100 })).decisions

describe('agent entry points refuse an incomplete configuration before anyone is asked', () => {
  it('openPusharyAgentReview without a store throws a typed error naming store, and no decision exists on the service', async () => {
    const s = await suspendedRefund()
    const { store: _omitted, ...withoutStore } = s.target
    await expect(
      openPusharyAgentReview(
        { client: env.client },
        withoutStore as unknown as Parameters<typeof openPusharyAgentReview>[1],
      ),
    ).rejects.toMatchObject({ name: 'PusharyValidationError', code: 'invalid_options', field: 'store' })
    expect(await decisionsOf(s.externalId)).toEqual([])
    expect(s.executions).toHaveLength(0)
  })

  it('resumePusharyAgentReview without a store throws a typed error naming store, before reading the decision', async () => {
    const s = await suspendedRefund()
    const review = await openPusharyAgentReview({ client: env.client }, s.target)
    await env.client.decisions.answer(review.decisionId, 'yes')
    await expect(
      resumePusharyAgentReview({ client: env.client }, {
        agent: s.refunder,
        agentId: 'refunder',
        externalId: s.externalId,
        decisionId: review.decisionId,
      } as unknown as Parameters<typeof resumePusharyAgentReview>[1]),
    ).rejects.toMatchObject({ name: 'PusharyValidationError', code: 'invalid_options', field: 'store' })
    await expect(
      resumePusharyAgentReview(
        { client: env.client },
        {
          agent: s.refunder,
          agentId: 'refunder',
          externalId: s.externalId,
          decisionId: review.decisionId,
          store: { get: async () => null } as unknown as PusharyAgentReviewStore,
        },
      ),
    ).rejects.toMatchObject({ code: 'invalid_options', field: 'store.save' })
    expect((await store.get(review.decisionId))?.state).toBe('pending')
    expect(s.executions).toHaveLength(0)
  })

  it('refuses an agent whose Mastra has no storage (streamed suspension) at open, resolve and resume, asking nobody', async () => {
    const externalId = `customer_nostorage_${++n}`
    const executions: unknown[] = []
    const issueRefund = createTool({
      id: 'issue-refund',
      description: 'Refund an order',
      inputSchema: z.object({ orderId: z.string(), amount: z.number() }),
      requireApproval: true,
      execute: async (args) => {
        executions.push(args)
        return { refunded: true }
      },
    })
    const agent = new Agent({
      id: 'refunder',
      name: 'refunder',
      instructions: 'Refund when asked.',
      model: scriptedModel(callsOnce([refundCall])),
      tools: { issueRefund },
    })
    // No `storage`: Mastra falls back to its in-memory store.
    new Mastra({ agents: { refunder: agent }, logger: false })
    const stream = await agent.stream('Refund o1', { memory: { thread: 't-mem', resource: externalId } })
    expect(await stream.finishReason).toBe('suspended')
    const { runs } = await agent.listSuspendedRuns({ resourceId: externalId })
    expect(runs).toHaveLength(1)
    const field = 'agent.mastra.storage'
    await expect(
      openPusharyAgentReview(
        { client: env.client },
        {
          agent,
          agentId: 'refunder',
          runId: runs[0]!.runId,
          toolCallId: 'r1',
          externalId,
          actionVersion: 'draft_1',
          store,
        },
      ),
    ).rejects.toMatchObject({ name: 'PusharyValidationError', code: 'invalid_options', field })
    await expect(
      resolvePusharyApprovals(
        { client: env.client, externalId, policy: false },
        { agent, threadId: 't-mem', stream: true },
      ),
    ).rejects.toMatchObject({ code: 'invalid_options', field })
    await expect(
      resumePusharyAgentReview(
        { client: env.client },
        { agent, agentId: 'refunder', externalId, decisionId: 'dec_unknown', store, stream: true },
      ),
    ).rejects.toMatchObject({ code: 'invalid_options', field })
    expect(await decisionsOf(externalId)).toEqual([])
    expect(executions).toHaveLength(0)
  })
})

describe('agent results name the actual cause', () => {
  it('a native approveToolCall before the person answered ends the review stale with reasonCode resumed_outside, running nothing more', async () => {
    const s = await suspendedRefund()
    const review = await openPusharyAgentReview({ client: env.client }, s.target)
    // The package is bypassed: Mastra's own approve runs the tool.
    await s.refunder.approveToolCallGenerate({ runId: s.run.runId, toolCallId: 'r1' })
    expect(s.executions).toHaveLength(1)
    await env.client.decisions.answer(review.decisionId, 'yes')
    const result = await resumePusharyAgentReview(
      { client: env.client },
      {
        agent: s.refunder,
        agentId: 'refunder',
        externalId: s.externalId,
        decisionId: review.decisionId,
        store,
      },
    )
    expect(result).toMatchObject({ status: 'stale', reasonCode: 'resumed_outside' })
    expect(result.status === 'stale' && result.reason).toMatch(/resumed outside the package/)
    expect(s.executions).toHaveLength(1)
    expect((await store.get(review.decisionId))?.state).toBe('stale')
  })

  it('a resolve aimed at the sub-agent reports found: 0 and not allApproved, pointing at the supervisor that stays suspended', async () => {
    const dir = mkdtempSync(join(env.dir, `case-${++n}-`))
    const externalId = `customer_${n}`
    const built = buildAgents({
      dir,
      client: env.client,
      externalId,
      calls: [refundCall],
      supervisorCalls: [{ toolCallId: 'sup_1', toolName: 'agent-refunder', input: { prompt: 'refund o1' } }],
    })
    const memory = { memory: { thread: 't-sup', resource: externalId } }
    expect((await built.supervisor.generate('Refund o1', memory)).finishReason).toBe('suspended')
    const outcome = await resolvePusharyApprovals(
      { client: env.client, externalId, policy: false },
      { agent: built.refunder, threadId: 't-sup' },
    )
    expect(outcome).toMatchObject({ found: 0, allApproved: false, reasonCode: 'nothing_found' })
    expect(outcome.reason).toMatch(/"supervisor".*resolve at its supervisor/)
    expect((await built.supervisor.listSuspendedRuns({ threadId: 't-sup' })).runs).toHaveLength(1)
    expect(await decisionsOf(externalId)).toEqual([])
    expect(built.executions).toHaveLength(0)
  })

  it('two store-less resolvers racing on one thread in separate processes both report the approval that ran once', async () => {
    const dir = join(env.dir, `race-${++n}`)
    mkdirSync(dir, { recursive: true })
    writeEnvFile({ dir, baseUrl: env.baseUrl, apiKey: env.apiKey, webhookSecret: env.webhookSecret })
    const script = 'test/agents/fixtures/agent-run.ts'
    const suspended = await runFixture<{ finishReason: string }>(['suspend', dir], { script })
    expect(suspended.finishReason).toBe('suspended')
    type Resolved = {
      allApproved: boolean
      found: number
      resolved: { approved: boolean; reasonCode?: string; resumeError?: string }[]
    }
    const racing = [
      runFixture<Resolved>(['resolve', dir], { script }),
      runFixture<Resolved>(['resolve', dir], { script }),
    ]
    // Both resolvers listed the suspended run before anyone answers.
    await waitFor(
      async () =>
        readdirSync(dir).filter((name) => name.startsWith('ready-')).length === 2 ? true : undefined,
      60_000,
    )
    const decision = await pendingDecisionOf(env.client, 'customer_1')
    // Let the later of the two reach its wait for the answer too.
    await new Promise((resolve) => setTimeout(resolve, 1_500))
    await env.client.decisions.answer(decision.decisionId, 'yes')
    const outcomes = await Promise.all(racing)
    expect(await countEffects(dir, 'refund')).toBe(1)
    for (const outcome of outcomes) {
      expect(outcome.found).toBe(1)
      expect(outcome.resolved).toHaveLength(1)
      expect(outcome.resolved[0]).toMatchObject({ approved: true })
      expect(outcome.resolved[0]!.resumeError).toBeUndefined()
      expect(outcome.allApproved).toBe(true)
    }
    // Exactly one of them resumed it; the other reports the winner's verdict as such.
    expect(
      outcomes.filter((outcome) => outcome.resolved[0]!.reasonCode === 'resumed_elsewhere'),
    ).toHaveLength(1)
    expect(existsSync(join(dir, 'effects.db'))).toBe(true)
  }, 180_000)
})
