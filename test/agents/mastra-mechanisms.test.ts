/**
 * Each Mastra agent-approval mechanism (seed 001) answered from the phone, on
 * real Agents: agent-level requireToolApproval on generate and on stream,
 * tools that suspend() resumed by resumeGenerate and resumeStream, resume
 * data checked before Mastra could consume a suspension, and
 * autoResumeSuspendedTools refused.
 */
import { mkdtempSync } from 'node:fs'
import { join } from 'node:path'
import { MockMemory } from '@mastra/core/memory'
import { createTool } from '@mastra/core/tools'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod/v4'
import { openPusharyAgentReview } from '../../src/agents/open-review.js'
import { resolvePusharyApprovals } from '../../src/agents/resolve-approvals.js'
import { resumePusharyAgentReview } from '../../src/agents/resume-review.js'
import type { PusharyReviewStore } from '../../src/store/review-store.js'
import { createSqliteReviewStore } from '../../src/store/sqlite-store.js'
import { createTestEnv, type TestEnv } from '../helpers/mastra.js'
import { answerNext } from './support/agent-env.js'
import { buildAgents } from './support/agents.js'
import { describeResults, type ScriptedTurn } from './support/scripted-model.js'

let env: TestEnv
let store: PusharyReviewStore
let n = 0

beforeAll(async () => {
  env = await createTestEnv('mechanisms')
  store = createSqliteReviewStore({ url: `file:${join(env.dir, 'reviews.db')}` })
})
afterAll(async () => {
  await store?.close()
  await env?.close()
})

function fresh(
  extra: Partial<Parameters<typeof buildAgents>[0]> & { calls?: Parameters<typeof buildAgents>[0]['calls'] },
) {
  const dir = mkdtempSync(join(env.dir, `m-${++n}-`))
  const externalId = `customer_${n}`
  const built = buildAgents({ dir, client: env.client, externalId, calls: [], ...extra })
  return { ...built, externalId, memory: { memory: { thread: `t${n}`, resource: externalId } } }
}

/** Reads every chunk type of a stream (its first consumer). */
async function chunkTypes(stream: { fullStream: AsyncIterable<{ type: string }> }): Promise<string[]> {
  const types: string[] = []
  for await (const chunk of stream.fullStream) types.push(chunk.type)
  return types
}

/** The final text of a generate output, or of a (settled, replayable) stream. */
async function textOf(output: unknown): Promise<string> {
  return String(await (output as { text: string | Promise<string> }).text)
}

const lookup = { toolCallId: 'l1', toolName: 'lookupOrder', input: { orderId: 'o1' } }
const question = { question: 'Which size?', type: 'input' }
const ask = { toolCallId: 'q1', toolName: 'askHuman', input: question }

describe('agent-level requireToolApproval answered from the phone', () => {
  it.each([
    ['generate', 'yes'],
    ['generate', 'no'],
    ['stream', 'yes'],
    ['stream', 'no'],
  ])('on %s, a customer answering %s approves or declines the unflagged tool', async (mode, answer) => {
    const s = fresh({ calls: [lookup] })
    const stream = mode === 'stream'
    if (stream) {
      const first = await s.refunder.stream('Look up o1', { ...s.memory, requireToolApproval: true })
      expect(await chunkTypes(first)).toContain('tool-call-approval')
      expect(await first.finishReason).toBe('suspended')
    } else {
      const first = await s.refunder.generate('Look up o1', { ...s.memory, requireToolApproval: true })
      expect(first.finishReason).toBe('suspended')
    }
    const { runs } = await s.refunder.listSuspendedRuns({ resourceId: s.externalId })
    expect(runs[0]?.toolCalls[0]).toMatchObject({ toolName: 'lookupOrder', requiresApproval: true })

    // approveToolCall / declineToolCall on stream, the ...Generate forms on generate.
    const [outcome] = await Promise.all([
      resolvePusharyApprovals(
        { client: env.client, externalId: s.externalId, policy: false },
        { agent: s.refunder, resourceId: s.externalId, stream },
      ),
      answerNext(env.client, s.externalId, answer),
    ])
    const approved = answer === 'yes'
    expect(outcome.resolved[0]).toMatchObject({ approved, toolName: 'lookupOrder', toolCallId: 'l1' })
    expect(s.lookups).toHaveLength(approved ? 1 : 0)
    const text = await textOf(outcome.resolved[0]!.output)
    expect(text).toContain(approved ? 'shipped' : 'The customer declined.')
    expect((await s.refunder.listSuspendedRuns({ resourceId: s.externalId })).runs).toEqual([])
  })
})

describe('a tool that suspend()s with suspendSchema/resumeSchema', () => {
  it.each([['generate'], ['stream']])('is resumed with the typed answer through resume%s', async (mode) => {
    const s = fresh({ calls: [ask] })
    const stream = mode === 'stream'
    if (stream) {
      const first = await s.refunder.stream('Ask the size', s.memory)
      expect(await chunkTypes(first)).toContain('tool-call-suspended')
      expect(await first.finishReason).toBe('suspended')
    } else {
      expect((await s.refunder.generate('Ask the size', s.memory)).finishReason).toBe('suspended')
    }
    const { runs } = await s.refunder.listSuspendedRuns({ resourceId: s.externalId })
    const review = await openPusharyAgentReview(
      { client: env.client },
      {
        agent: s.refunder,
        agentId: 'refunder',
        runId: runs[0]!.runId,
        toolCallId: 'q1',
        externalId: s.externalId,
        actionVersion: 'v1',
        store,
      },
    )
    await env.client.decisions.answer(review.decisionId, 'XL')
    const result = await resumePusharyAgentReview(
      { client: env.client },
      {
        agent: s.refunder,
        agentId: 'refunder',
        externalId: s.externalId,
        decisionId: review.decisionId,
        store,
        stream,
      },
    )
    expect(result.status).toBe('resumed')
    if (result.status !== 'resumed') return
    const text = await textOf(result.output)
    expect(text).toContain('"value":"XL"')
    expect(text).toContain('"approved":false')
  })

  it('shows the Mastra hazard: resumeGenerate with data failing resumeSchema consumes the suspension', async () => {
    const s = fresh({ calls: [ask] })
    const output = await s.refunder.generate('Ask the size', s.memory)
    await s.refunder.resumeGenerate({ decisionId: 42 }, { runId: output.runId!, toolCallId: 'q1' })
    const { runs } = await s.refunder.listSuspendedRuns({ resourceId: s.externalId })
    expect(runs.map((run) => run.runId)).not.toContain(output.runId)
  })

  it("checks the resume data against the agent's current tool before claiming, so a replaced tool cannot consume the suspension", async () => {
    const s = fresh({ calls: [ask] })
    const output = await s.refunder.generate('Ask the size', s.memory)
    const review = await openPusharyAgentReview(
      { client: env.client },
      {
        agent: s.refunder,
        agentId: 'refunder',
        runId: output.runId!,
        toolCallId: 'q1',
        externalId: s.externalId,
        actionVersion: 'v1',
        store,
      },
    )
    await env.client.decisions.answer(review.decisionId, 'XL')
    const tools = await s.refunder.listTools()
    // A deploy replaced the question tool with one that resumes on other data.
    s.refunder.__setTools({
      ...tools,
      askHuman: createTool({
        id: 'ask-human',
        description: 'Ask',
        inputSchema: z.object({ question: z.string(), type: z.string() }),
        resumeSchema: z.object({ approved: z.boolean() }),
        execute: async () => ({ ok: true }),
      }),
    } as never)
    const resume = () =>
      resumePusharyAgentReview(
        { client: env.client },
        {
          agent: s.refunder,
          agentId: 'refunder',
          externalId: s.externalId,
          decisionId: review.decisionId,
          store,
        },
      )
    await expect(resume()).rejects.toMatchObject({
      name: 'PusharyValidationError',
      code: 'invalid_options',
      field: 'agent.tools.askHuman.resumeSchema',
    })
    expect((await store.get(review.decisionId))?.state).toBe('pending')
    const { runs } = await s.refunder.listSuspendedRuns({ resourceId: s.externalId })
    expect(runs.map((run) => run.runId)).toContain(output.runId)

    s.refunder.__setTools(tools as never)
    expect((await resume()).status).toBe('resumed')
  })
})

describe('autoResumeSuspendedTools', () => {
  /** The model follows Mastra's auto-resume instruction: it builds the resume data itself. */
  function autoResumingModel(turn: ScriptedTurn) {
    if (turn.results.size > 0) return { text: describeResults(turn) }
    const system = turn.prompt.find((message) => message.role === 'system')?.content
    if (typeof system === 'string' && system.includes('Analyse the suspended tools')) {
      const input = {
        ...question,
        resumeData: { decisionId: 'made-up-by-the-model' },
        suspendedToolCallId: 'q1',
      }
      return { toolCalls: [{ toolCallId: 'q2', toolName: 'askHuman', input }] }
    }
    return { toolCalls: [ask] }
  }

  it('refuses to open or resume a call the model already auto-resumed, though Mastra still lists it suspended', async () => {
    const s = fresh({ script: autoResumingModel, memory: new MockMemory() })
    const first = await s.refunder.generate('Ask the size', s.memory)
    expect(first.finishReason).toBe('suspended')
    const target = {
      agent: s.refunder,
      agentId: 'refunder',
      runId: first.runId!,
      toolCallId: 'q1',
      externalId: s.externalId,
      actionVersion: 'v1',
      store,
    }
    const review = await openPusharyAgentReview({ client: env.client }, target)

    await s.refunder.generate('XL please', { ...s.memory, autoResumeSuspendedTools: true })
    // Mastra's behaviour: the original run is still listed as suspended.
    const { runs } = await s.refunder.listSuspendedRuns({ resourceId: s.externalId })
    expect(runs.map((run) => run.runId)).toContain(first.runId)

    const before = (await env.client.decisions.list({ limit: 100 })).decisions.length
    await expect(
      openPusharyAgentReview({ client: env.client }, { ...target, actionVersion: 'v2' }),
    ).rejects.toMatchObject({ name: 'PusharyValidationError', field: 'toolCallId' })
    expect((await env.client.decisions.list({ limit: 100 })).decisions.length).toBe(before)

    await env.client.decisions.answer(review.decisionId, 'XL')
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
    expect(result).toMatchObject({
      status: 'stale',
      reason: expect.stringContaining('autoResumeSuspendedTools'),
    })
    expect((await store.get(review.decisionId))?.state).toBe('stale')
    // Nothing was resumed: the original suspension is untouched.
    const after = await s.refunder.listSuspendedRuns({ resourceId: s.externalId })
    expect(after.runs.map((run) => run.runId)).toContain(first.runId)
  })
})
