/**
 * Mastra's DurableAgent (its tool approvals suspend a durable workflow): the
 * blocking resolver and deferred reviews work with it as with Agent.
 */
import { mkdtempSync } from 'node:fs'
import { join } from 'node:path'
import { Agent } from '@mastra/core/agent'
import { createDurableAgent } from '@mastra/core/agent/durable'
import { Mastra } from '@mastra/core/mastra'
import { createTool } from '@mastra/core/tools'
import { LibSQLStore } from '@mastra/libsql'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod/v4'
import type { PusharyResumableAgent } from '../../src/agents/agent-shapes.js'
import { createPusharyDeferredAskTool } from '../../src/agents/deferred-ask-tool.js'
import { isDurableAgent } from '../../src/agents/durable-approvals.js'
import { openPusharyAgentReview } from '../../src/agents/open-review.js'
import { resolvePusharyApprovals } from '../../src/agents/resolve-approvals.js'
import { resumePusharyAgentReview } from '../../src/agents/resume-review.js'
import type { PusharyReviewStore } from '../../src/store/review-store.js'
import { createSqliteReviewStore } from '../../src/store/sqlite-store.js'
import { createTestEnv, type TestEnv, waitFor } from '../helpers/mastra.js'
import { answerNext, toolResults } from './support/agent-env.js'
import { callsOnce, type ScriptedToolCall, scriptedModel } from './support/scripted-model.js'

let env: TestEnv
let store: PusharyReviewStore
let n = 0

beforeAll(async () => {
  env = await createTestEnv('durable')
  store = createSqliteReviewStore({ url: `file:${join(env.dir, 'reviews.db')}` })
})
afterAll(async () => {
  await store?.close()
  await env?.close()
})

function durableRefunder(calls: ScriptedToolCall[]) {
  const externalId = `customer_${++n}`
  const executions: { orderId: string; amount: number }[] = []
  const issueRefund = createTool({
    id: 'issue-refund',
    description: 'Refund an order',
    inputSchema: z.object({ orderId: z.string(), amount: z.number().positive() }),
    outputSchema: z.object({ refunded: z.boolean() }),
    requireApproval: true,
    execute: async (args) => {
      executions.push(args)
      return { refunded: true }
    },
  })
  const askHuman = createPusharyDeferredAskTool({ client: env.client }, { externalId })
  const agent = new Agent({
    id: 'refunder',
    name: 'refunder',
    instructions: 'Refund when asked.',
    model: scriptedModel(callsOnce(calls)),
    tools: { issueRefund, askHuman },
  })
  const durable = createDurableAgent({ agent })
  const mastra = new Mastra({
    agents: { refunder: durable },
    storage: new LibSQLStore({
      id: 'durable',
      url: `file:${join(mkdtempSync(join(env.dir, 'd-')), 'mastra.db')}`,
    }),
    logger: false,
  })
  const typed: PusharyResumableAgent = durable
  return {
    durable: typed,
    raw: durable,
    mastra,
    executions,
    externalId,
    memory: { memory: { thread: `t${n}`, resource: externalId } },
  }
}

const refund = { toolCallId: 'r1', toolName: 'issueRefund', input: { orderId: 'o1', amount: 20 } }

describe('DurableAgent', () => {
  it('is told apart from Agent by its class chain (subclasses too), not by instanceof of one @mastra/core copy', () => {
    const { raw } = durableRefunder([])
    const plain = new Agent({
      id: 'plain',
      name: 'plain',
      instructions: 'x',
      model: scriptedModel(callsOnce([])),
    })
    class AuditedDurable extends (raw.constructor as new (...args: never[]) => object) {}
    const sub = Object.create(AuditedDurable.prototype) as object
    expect(isDurableAgent(raw)).toBe(true)
    expect(isDurableAgent(sub)).toBe(true)
    expect(isDurableAgent(plain)).toBe(false)
    expect(isDurableAgent({ resumeGenerate: () => undefined })).toBe(false)
  })

  it.each([
    ['yes', 1],
    ['no', 0],
  ])(
    'resolvePusharyApprovals: a requireApproval call answered %s runs the refund %i time(s)',
    async (answer, count) => {
      const d = durableRefunder([refund])
      const first = await d.raw.generate('Refund o1', d.memory)
      expect(first.finishReason).toBe('suspended')
      const [outcome, decision] = await Promise.all([
        resolvePusharyApprovals(
          { client: env.client, externalId: d.externalId, policy: false },
          { agent: d.durable, resourceId: d.externalId },
        ),
        answerNext(env.client, d.externalId, answer),
      ])
      // The binding carries the exact arguments, restored from the durable loop's snapshot;
      // the person sees them as labelled parameters, not JSON in the question.
      expect(decision.question).toBe('Approve issueRefund?')
      expect(decision.parameters).toMatchObject({ orderId: 'o1' })
      expect(outcome.resolved).toHaveLength(1)
      expect(outcome.resolved[0]).toMatchObject({ approved: answer === 'yes', toolName: 'issueRefund' })
      expect(outcome.pending).toEqual([])
      expect(d.executions).toHaveLength(count)
    },
  )

  it('resolves a durable stream suspension with a stream back (approveToolCall), running the refund once', async () => {
    const d = durableRefunder([refund])
    // A DurableAgent's suspending stream never settles its finishReason (Mastra 1.71); the
    // suspension is persisted once the approval chunk is out, which listSuspendedRuns shows.
    await d.raw.stream('Refund o1', d.memory)
    await waitFor(async () =>
      (await d.durable.listSuspendedRuns({ resourceId: d.externalId })).runs[0] ? true : undefined,
    )
    const [outcome] = await Promise.all([
      resolvePusharyApprovals(
        { client: env.client, externalId: d.externalId, policy: false },
        { agent: d.durable, resourceId: d.externalId, stream: true },
      ),
      answerNext(env.client, d.externalId, 'yes'),
    ])
    expect(outcome.allApproved).toBe(true)
    expect(await (outcome.resolved[0]!.output as { text: Promise<string> }).text).toContain('"refunded":true')
    expect(d.executions).toHaveLength(1)
  })

  it('deferred approval review: opened after the durable suspension, resumed once, then duplicate', async () => {
    const d = durableRefunder([refund])
    const first = await d.raw.generate('Refund o1', d.memory)
    const review = await openPusharyAgentReview(
      { client: env.client },
      {
        agent: d.durable,
        agentId: 'refunder',
        runId: first.runId!,
        toolCallId: 'r1',
        externalId: d.externalId,
        actionVersion: 'v1',
        store,
      },
    )
    expect(review).toMatchObject({ kind: 'approval', toolName: 'issueRefund' })
    await env.client.decisions.answer(review.decisionId, 'yes')
    const target = {
      agent: d.durable,
      agentId: 'refunder',
      externalId: d.externalId,
      decisionId: review.decisionId,
      store,
    }
    expect((await resumePusharyAgentReview({ client: env.client }, target)).status).toBe('resumed')
    expect(d.executions).toHaveLength(1)
    expect((await resumePusharyAgentReview({ client: env.client }, target)).status).toBe('duplicate')
    expect(d.executions).toHaveLength(1)
  })

  it('deferred question review: the deferred ask tool is resumed through the durable resumeGenerate with the answer as data', async () => {
    const d = durableRefunder([
      { toolCallId: 'q1', toolName: 'askHuman', input: { question: 'Which size?', type: 'input' } },
    ])
    const first = await d.raw.generate('Ask the size', d.memory)
    expect(first.finishReason).toBe('suspended')
    const review = await openPusharyAgentReview(
      { client: env.client },
      {
        agent: d.durable,
        agentId: 'refunder',
        runId: first.runId!,
        toolCallId: 'q1',
        externalId: d.externalId,
        actionVersion: 'v1',
        store,
      },
    )
    expect(review.kind).toBe('question')
    await env.client.decisions.answer(review.decisionId, 'yes')
    const result = await resumePusharyAgentReview(
      { client: env.client },
      {
        agent: d.durable,
        agentId: 'refunder',
        externalId: d.externalId,
        decisionId: review.decisionId,
        store,
      },
    )
    expect(result.status).toBe('resumed')
    if (result.status !== 'resumed') return
    expect(toolResults(result.output as never).get('q1')).toEqual({
      status: 'answered',
      value: 'yes',
      approved: false,
    })
  })
})
