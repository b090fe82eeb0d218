/**
 * One suspended agent run, found without listing every waiting one: the
 * entry is Mastra's own (the same as the full listing's), the open and the
 * resume ask Mastra for that run alone however many others wait, and every
 * case the narrow read cannot answer falls back to the full listing.
 */
import { mkdtempSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AGENT_REVIEW_WORKFLOW_ID, agentWorkflowBinding } from '../../src/agents/agent-binding.js'
import { agentRunCreatedAtOf } from '../../src/agents/agent-review-workflow.js'
import type { PusharyResumableAgent } from '../../src/agents/agent-shapes.js'
import { openPusharyAgentReview } from '../../src/agents/open-review.js'
import { resumePusharyAgentReview } from '../../src/agents/resume-review.js'
import { agentRunCreatedAt, findSuspendedRun } from '../../src/agents/suspended-run.js'
import { loadRunSnapshot } from '../../src/resume/run-position.js'
import type { PusharyReviewStore } from '../../src/store/review-store.js'
import { createSqliteReviewStore } from '../../src/store/sqlite-store.js'
import { createTestEnv, type TestEnv } from '../helpers/mastra.js'
import { buildAgents } from './support/agents.js'

const RESOURCE = 'customer_backlog'
const WAITING = 30

let env: TestEnv
let store: PusharyReviewStore
let built: ReturnType<typeof buildAgents>
let threads = 0
const others: string[] = []

async function suspend(): Promise<string> {
  threads++
  const output = await built.refunder.generate('Refund it', {
    memory: { thread: `thread-${threads}`, resource: RESOURCE },
  })
  if (output.finishReason !== 'suspended' || !output.runId) throw new Error(`ended ${output.finishReason}`)
  return output.runId
}

/** The agent as it is, with every listing it answers recorded (how many runs it read out). */
function observed(agent: PusharyResumableAgent) {
  const listings: { narrowed: boolean; runs: number }[] = []
  const listSuspendedRuns: PusharyResumableAgent['listSuspendedRuns'] = async (options) => {
    const listed = await agent.listSuspendedRuns(options)
    listings.push({ narrowed: options?.fromDate !== undefined, runs: listed.runs.length })
    return listed
  }
  return { watched: replacing(agent, { listSuspendedRuns }), listings }
}

/** `agent` with some methods replaced; the others still run on the agent itself (its private fields). */
function replacing(agent: PusharyResumableAgent, methods: Partial<PusharyResumableAgent>) {
  return new Proxy(agent, {
    get(target, property, receiver) {
      if (property in methods) return methods[property as keyof PusharyResumableAgent]
      const value = Reflect.get(target, property, receiver)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}

/** The agent's methods alone: no `getMastraInstance`, so nothing can read the run's row. */
function withoutMastra(): PusharyResumableAgent {
  return {
    listSuspendedRuns: (options) => built.refunder.listSuspendedRuns(options),
    approveToolCallGenerate: (options) => built.refunder.approveToolCallGenerate(options),
    declineToolCallGenerate: (options) => built.refunder.declineToolCallGenerate(options),
    approveToolCall: (options) => built.refunder.approveToolCall(options),
    declineToolCall: (options) => built.refunder.declineToolCall(options),
    resumeGenerate: (data, options) => built.refunder.resumeGenerate(data, options),
    resumeStream: (data, options) => built.refunder.resumeStream(data, options),
  } as PusharyResumableAgent
}

beforeAll(async () => {
  env = await createTestEnv('suspended-run')
  store = createSqliteReviewStore({ url: `file:${join(env.dir, 'reviews.db')}` })
  built = buildAgents({
    dir: mkdtempSync(join(env.dir, 'agent-')),
    client: env.client,
    externalId: RESOURCE,
    calls: [{ toolCallId: 'refund-call', toolName: 'issueRefund', input: { orderId: 'o1', amount: 20 } }],
  })
  for (let index = 0; index < WAITING; index++) others.push(await suspend())
})

afterAll(async () => {
  await store?.close?.()
  await env?.close()
})

describe('one suspended agent run', () => {
  it("is Mastra's own entry for that run, the same as the full listing's", async () => {
    const runId = others[7] as string
    const full = (await built.refunder.listSuspendedRuns({ resourceId: RESOURCE })).runs
    expect(full).toHaveLength(WAITING)
    const found = await findSuspendedRun(built.refunder, runId, { resourceId: RESOURCE })
    expect(found).toEqual(full.find((run) => run.runId === runId))
    expect(found?.toolCalls).toEqual([
      expect.objectContaining({ toolCallId: 'refund-call', toolName: 'issueRefund', requiresApproval: true }),
    ])
  })

  it('is opened and resumed with Mastra asked for that run alone while others wait', async () => {
    const runId = await suspend()
    const { watched, listings } = observed(built.refunder)
    const config = { client: env.client }
    const target = { agent: watched, agentId: 'refunder', externalId: RESOURCE, store }
    const review = await openPusharyAgentReview(config, {
      ...target,
      runId,
      toolCallId: 'refund-call',
      actionVersion: 'v1',
    })
    await env.client.decisions.answer(review.decisionId, 'yes')
    const executed = built.executions.length
    const resumed = await resumePusharyAgentReview(config, {
      ...target,
      decisionId: review.decisionId,
      currentActionVersion: () => 'v1',
    })
    expect(resumed.status).toBe('resumed')
    expect(built.executions.length).toBe(executed + 1)
    // The open and the resume's "still suspended on this call?" check: one run each, never the backlog.
    expect(listings).toEqual([
      { narrowed: true, runs: 1 },
      { narrowed: true, runs: 1 },
    ])
  })

  it('falls back to the full listing for an agent shape without a Mastra, and finds the same run', async () => {
    const runId = others[3] as string
    const { watched, listings } = observed(withoutMastra())
    const found = await findSuspendedRun(watched, runId)
    expect(found?.runId).toBe(runId)
    expect(listings).toEqual([{ narrowed: false, runs: WAITING }])
  })

  it('falls back to the full listing when the narrowed one does not hold the run', async () => {
    const runId = others[5] as string
    // A storage that cannot filter on the exact instant answers the narrowed listing empty.
    const watched = replacing(built.refunder, {
      listSuspendedRuns: async (options) =>
        options?.fromDate ? { runs: [] } : built.refunder.listSuspendedRuns(options),
    })
    const found = await findSuspendedRun(watched, runId, { resourceId: RESOURCE })
    expect(found?.runId).toBe(runId)
  })

  it("keeps the run's creation time in the review run, so the resume narrows without reading the row", async () => {
    const runId = await suspend()
    const review = await openPusharyAgentReview(
      { client: env.client },
      {
        agent: built.refunder,
        agentId: 'refunder',
        externalId: RESOURCE,
        store,
        runId,
        toolCallId: 'refund-call',
        actionVersion: 'v1',
      },
    )
    const reviewRunId = agentWorkflowBinding(review, 'test').runId
    const snapshot = await loadRunSnapshot(built.mastra, AGENT_REVIEW_WORKFLOW_ID, reviewRunId)
    const kept = agentRunCreatedAtOf(snapshot?.context)
    expect(kept?.toISOString()).toBe((await agentRunCreatedAt(built.refunder, runId))?.toISOString())
    // An agent shape with no Mastra cannot read the row: the kept time alone narrows the listing.
    const { watched, listings } = observed(withoutMastra())
    expect((await findSuspendedRun(watched, runId, { resourceId: RESOURCE }, kept))?.runId).toBe(runId)
    expect(listings).toEqual([{ narrowed: true, runs: 1 }])
  })

  it('lists the full set when the kept creation time is wrong, and finds the same run', async () => {
    const runId = others[2] as string
    const { watched, listings } = observed(withoutMastra())
    const found = await findSuspendedRun(watched, runId, { resourceId: RESOURCE }, new Date(0))
    expect(found?.runId).toBe(runId)
    expect(listings).toEqual([
      { narrowed: true, runs: 0 },
      { narrowed: false, runs: expect.any(Number) },
    ])
  })

  it('is not found once the run is no longer suspended', async () => {
    const runId = others.pop() as string
    await built.refunder.approveToolCallGenerate({ runId, toolCallId: 'refund-call' })
    expect(await findSuspendedRun(built.refunder, runId)).toBeUndefined()
    expect(await findSuspendedRun(built.refunder, 'no-such-run')).toBeUndefined()
  })
})
