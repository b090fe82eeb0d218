import { mkdtempSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPusharyDispatcher } from '../../src/agents/dispatcher.js'
import { openPusharyAgentReview } from '../../src/agents/open-review.js'
import { resumePusharyAgentReview } from '../../src/agents/resume-review.js'
import type { PusharyReviewStore } from '../../src/store/review-store.js'
import { createSqliteReviewStore } from '../../src/store/sqlite-store.js'
import { createTestEnv, type TestEnv } from '../helpers/mastra.js'
import { toolResults } from './support/agent-env.js'
import { buildAgents } from './support/agents.js'

let env: TestEnv
let store: PusharyReviewStore
let n = 0

beforeAll(async () => {
  env = await createTestEnv('deferred')
  store = createSqliteReviewStore({ url: `file:${join(env.dir, 'reviews.db')}` })
})
afterAll(async () => {
  await store?.close()
  await env?.close()
})

const refund = (id: string) => ({
  toolCallId: id,
  toolName: 'issueRefund',
  input: { orderId: 'o1', amount: 20 },
})
const ask = (id: string, input: Record<string, unknown>) => ({ toolCallId: id, toolName: 'askHuman', input })

async function suspended(calls: Parameters<typeof buildAgents>[0]['calls']) {
  const dir = mkdtempSync(join(env.dir, `d-${++n}-`))
  const externalId = ` customer_${n} `
  const built = buildAgents({ dir, client: env.client, externalId, calls })
  const output = await built.refunder.generate('Handle it', {
    memory: { thread: `t${n}`, resource: externalId },
  })
  expect(output.finishReason).toBe('suspended')
  const { runs } = await built.refunder.listSuspendedRuns({ resourceId: externalId })
  const run = runs.find((item) => item.runId === output.runId)!
  return { ...built, externalId, run, call: run.toolCalls[0]! }
}

async function open(s: Awaited<ReturnType<typeof suspended>>, extra: Record<string, unknown> = {}) {
  return openPusharyAgentReview(
    { client: env.client },
    {
      agent: s.refunder,
      agentId: 'refunder',
      runId: s.run.runId,
      toolCallId: s.call.toolCallId!,
      externalId: s.externalId,
      actionVersion: 'draft_1',
      store,
      ...extra,
    },
  )
}

const resume = (s: Awaited<ReturnType<typeof suspended>>, decisionId: string, version = 'draft_1') =>
  resumePusharyAgentReview(
    { client: env.client },
    {
      agent: s.refunder,
      agentId: 'refunder',
      externalId: s.externalId,
      decisionId,
      store,
      currentActionVersion: () => version,
    },
  )

describe('deferred agent reviews', () => {
  it('approves a requireApproval call once, reports a later resume as duplicate, and reopens idempotently', async () => {
    const s = await suspended([refund('r1')])
    const review = await open(s)
    expect(review).toMatchObject({
      kind: 'approval',
      state: 'pending',
      toolName: 'issueRefund',
      externalId: s.externalId,
    })
    expect((await open(s)).decisionId).toBe(review.decisionId)
    expect((await resume(s, review.decisionId)).status).toBe('pending')
    await env.client.decisions.answer(review.decisionId, 'yes')
    const result = await resume(s, review.decisionId)
    expect(result.status).toBe('resumed')
    expect(s.executions).toHaveLength(1)
    expect((await resume(s, review.decisionId)).status).toBe('duplicate')
    expect(s.executions).toHaveLength(1)
    expect((await store.get(review.decisionId))?.state).toBe('completed')
  })

  it.each([['no'], ['cancel']])('declines on %s and never runs the refund', async (answer) => {
    const s = await suspended([refund('r2')])
    const review = await open(s)
    if (answer === 'cancel') await env.client.decisions.cancel(review.decisionId)
    else await env.client.decisions.answer(review.decisionId, answer)
    const result = await resume(s, review.decisionId)
    expect(result.status).toBe('resumed')
    expect(s.executions).toHaveLength(0)
    if (result.status === 'resumed')
      expect((result.output as { text: string }).text).toMatch(/declined|cancelled/)
  })

  it('resumes the deferred question tool with a select answer of yes as data, never approval', async () => {
    const s = await suspended([
      ask('q1', { question: 'Which refund?', type: 'select', options: ['yes', 'credit'] }),
    ])
    const review = await open(s)
    expect(review.kind).toBe('question')
    await env.client.decisions.answer(review.decisionId, 'yes')
    const result = await resume(s, review.decisionId)
    expect(result.status).toBe('resumed')
    if (result.status !== 'resumed') return
    expect(toolResults(result.output as never).get('q1')).toEqual({
      status: 'answered',
      value: 'yes',
      approved: false,
    })
  })

  it('ends the review stale without resuming when the business version changed', async () => {
    const s = await suspended([refund('r3')])
    const review = await open(s)
    await env.client.decisions.answer(review.decisionId, 'yes')
    expect((await resume(s, review.decisionId, 'draft_2')).status).toBe('stale')
    expect(s.executions).toHaveLength(0)
  })

  it("refuses another customer's decision and a tampered binding, leaving the review pending and unclaimed", async () => {
    const s = await suspended([refund('r4')])
    const review = await open(s)
    await env.client.decisions.answer(review.decisionId, 'yes')
    await expect(
      resumePusharyAgentReview(
        { client: env.client },
        {
          agent: s.refunder,
          agentId: 'refunder',
          externalId: 'someone_else',
          decisionId: review.decisionId,
          store,
        },
      ),
    ).rejects.toMatchObject({ code: 'invalid_external_id' })
    // A decision of the same customer created outside the package has no binding.
    const other = await env.client.decisions.create({
      question: review.question.question,
      externalId: s.externalId,
      context: '{}',
    })
    const forged = createSqliteReviewStore({ url: `file:${join(env.dir, `forged-${n}.db`)}` })
    await forged.save({ ...review, decisionId: other.decisionId, correlationId: other.decisionId })
    await env.client.decisions.answer(other.decisionId, 'yes')
    await expect(
      resumePusharyAgentReview(
        { client: env.client },
        {
          agent: s.refunder,
          agentId: 'refunder',
          externalId: s.externalId,
          decisionId: other.decisionId,
          store: forged,
        },
      ),
    ).rejects.toMatchObject({ code: 'binding_mismatch' })
    expect((await forged.get(other.decisionId))?.state).toBe('pending')
    await forged.close()
    expect(s.executions).toHaveLength(0)
  })

  it('two resumers that do not share a review store race on one approved review: the tool runs once', async () => {
    const s = await suspended([refund('r-race')])
    const review = await open(s)
    // A second store that knows the same review (a host configured with another file).
    const other = createSqliteReviewStore({ url: `file:${join(env.dir, `other-${n}.db`)}` })
    try {
      await other.save(review)
      await env.client.decisions.answer(review.decisionId, 'yes')
      const resumeWith = (reviews: PusharyReviewStore) =>
        resumePusharyAgentReview(
          { client: env.client },
          {
            agent: s.refunder,
            agentId: 'refunder',
            externalId: s.externalId,
            decisionId: review.decisionId,
            store: reviews,
          },
        )
      const outcomes = await Promise.all([resumeWith(store), resumeWith(other)])
      expect(s.executions).toHaveLength(1)
      expect(outcomes.filter((outcome) => outcome.status === 'resumed')).toHaveLength(1)
      // The loser ran nothing and says so; neither review is left pending or claimed.
      const loser = outcomes.find((outcome) => outcome.status !== 'resumed')
      expect(loser?.status).not.toBe('uncertain')
      for (const reviews of [store, other]) {
        expect(['completed'], loser?.status).toContain((await reviews.get(review.decisionId))?.state)
      }
    } finally {
      await other.close()
    }
  })

  it('refuses bad input with a typed error before any request', async () => {
    const s = await suspended([refund('r5')])
    const before = (await env.client.decisions.list({ limit: 100 })).decisions.length
    await expect(open(s, { externalId: '   ' })).rejects.toMatchObject({
      code: 'invalid_external_id',
      field: 'externalId',
    })
    await expect(open(s, { externalId: 'x'.repeat(257) })).rejects.toMatchObject({
      code: 'invalid_external_id',
    })
    await expect(open(s, { toolCallId: '' })).rejects.toMatchObject({ field: 'toolCallId' })
    await expect(open(s, { toolCallId: 'not-suspended' })).rejects.toMatchObject({ field: 'toolCallId' })
    await expect(open(s, { actionVersion: 'v'.repeat(2100) })).rejects.toMatchObject({ field: 'context' })
    await expect(open(s, { subject: { parameters: { nested: { no: true } } } })).rejects.toMatchObject({
      field: expect.stringContaining('subject'),
    })
    expect((await env.client.decisions.list({ limit: 100 })).decisions.length).toBe(before)
  })

  it('is resumed by the dispatcher through handleCallback-free reconcile, the same path', async () => {
    const s = await suspended([refund('r6')])
    const review = await open(s)
    await env.client.decisions.answer(review.decisionId, 'yes')
    const dispatcher = createPusharyDispatcher({ mastra: s.mastra, client: env.client, store })
    const result = await dispatcher.resumeDecision(review.decisionId)
    expect(result.status).toBe('resumed')
    expect(s.executions).toHaveLength(1)
    expect((await dispatcher.resumeDecision(review.decisionId)).status).toBe('duplicate')
  })
})
