import { mkdtempSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PusharyApprovableAgent } from '../../src/agents/agent-shapes.js'
import { createPusharyDispatcher } from '../../src/agents/dispatcher.js'
import { openPusharyAgentReview } from '../../src/agents/open-review.js'
import { resolvePusharyApprovals } from '../../src/agents/resolve-approvals.js'
import { resumePusharyAgentReview } from '../../src/agents/resume-review.js'
import type { PusharyClient } from '../../src/pushary/client.js'
import type { PusharyAgentReview } from '../../src/store/review-schema.js'
import type { PusharyReviewStore } from '../../src/store/review-store.js'
import { createSqliteReviewStore } from '../../src/store/sqlite-store.js'
import { createTestEnv, startFetchServer, type TestEnv, waitFor } from '../helpers/mastra.js'
import { answerNext } from './support/agent-env.js'
import { buildAgents } from './support/agents.js'

let env: TestEnv
let store: PusharyReviewStore
let n = 0

beforeAll(async () => {
  env = await createTestEnv('refusals')
  store = createSqliteReviewStore({ url: `file:${join(env.dir, 'reviews.db')}` })
})
afterAll(async () => {
  await store?.close()
  await env?.close()
})

const refund = { toolCallId: 'r1', toolName: 'issueRefund', input: { orderId: 'o1', amount: 20 } }
const choice = {
  toolCallId: 'q1',
  toolName: 'askHuman',
  input: { question: 'Which refund?', type: 'select', options: ['card', 'credit'] },
}

async function suspended(
  call: { toolCallId: string; toolName: string; input: unknown },
  client = env.client,
) {
  const dir = mkdtempSync(join(env.dir, `r-${++n}-`))
  const externalId = `customer_${n}`
  const built = buildAgents({ dir, client: env.client, externalId, calls: [call] })
  const output = await built.refunder.generate('Handle it', {
    memory: { thread: `t${n}`, resource: externalId },
  })
  expect(output.finishReason).toBe('suspended')
  const { runs } = await built.refunder.listSuspendedRuns({ resourceId: externalId })
  const run = runs.find((item) => item.runId === output.runId)!
  const open = (extra: Record<string, unknown> = {}, agent: PusharyApprovableAgent = built.refunder) =>
    openPusharyAgentReview(
      { client },
      {
        agent,
        agentId: 'refunder',
        runId: run.runId,
        toolCallId: call.toolCallId,
        externalId,
        actionVersion: 'draft_1',
        store,
        mastra: built.mastra,
        ...extra,
      },
    )
  const resume = (decisionId: string, reviews: PusharyReviewStore = store) =>
    resumePusharyAgentReview(
      { client: env.client },
      { agent: built.refunder, agentId: 'refunder', externalId, decisionId, store: reviews },
    )
  return { ...built, externalId, run, open, resume }
}

const decisionCount = async () => (await env.client.decisions.list({ limit: 100 })).decisions.length

/** A second store holding the same review with one binding field changed, as a tampered table would. */
async function tampered(review: PusharyAgentReview, change: Partial<PusharyAgentReview>) {
  const other = createSqliteReviewStore({ url: `file:${join(env.dir, `tampered-${++n}.db`)}` })
  await other.save({ ...review, ...change })
  return other
}

describe('agent review refusals', () => {
  it('refuses a saved review whose question was changed, naming decision.question, and claims nothing', async () => {
    const s = await suspended(refund)
    const review = await s.open()
    await env.client.decisions.answer(review.decisionId, 'yes')
    const other = await tampered(review, {
      question: { type: 'confirm', question: 'Approve a smaller refund?' },
    })
    await expect(s.resume(review.decisionId, other)).rejects.toMatchObject({
      name: 'PusharyValidationError',
      code: 'binding_mismatch',
      field: 'decision.question',
    })
    expect((await other.get(review.decisionId))?.state).toBe('pending')
    expect(await other.history(review.decisionId)).toHaveLength(1)
    await other.close()
    expect(s.executions).toHaveLength(0)
  })

  it('refuses a saved review whose options were changed, naming decision.options, and claims nothing', async () => {
    const s = await suspended(choice)
    const review = await s.open()
    expect(review.kind).toBe('question')
    await env.client.decisions.answer(review.decisionId, 'card')
    const other = await tampered(review, {
      question: { type: 'select', question: 'Which refund?', options: ['card', 'cash'] },
    })
    await expect(s.resume(review.decisionId, other)).rejects.toMatchObject({
      code: 'binding_mismatch',
      field: 'decision.options',
    })
    expect((await other.get(review.decisionId))?.state).toBe('pending')
    expect(await other.history(review.decisionId)).toHaveLength(1)
    await other.close()
  })

  const cyclic: Record<string, unknown> = { orderId: 'o1' }
  cyclic.self = cyclic
  it.each([
    ['a bigint', { orderId: 'o1', amount: 10n }, 'args.amount'],
    ['a cycle', cyclic, 'args.self'],
    ['a Date', { orderId: 'o1', at: new Date(0) }, 'args.at'],
    ['a non-finite number', { orderId: 'o1', amount: Number.NaN }, 'args.amount'],
  ])('refuses tool arguments holding %s, naming %s, before any request', async (_name, args, field) => {
    const s = await suspended(refund)
    const withArgs = [{ ...s.run, toolCalls: s.run.toolCalls.map((call) => ({ ...call, args })) }]
    // An agent (or a caller's own listing) reporting arguments that are not JSON.
    const agent: PusharyApprovableAgent = {
      listSuspendedRuns: async () => ({ runs: withArgs }),
      approveToolCallGenerate: (o) => s.refunder.approveToolCallGenerate(o),
      declineToolCallGenerate: (o) => s.refunder.declineToolCallGenerate(o),
      approveToolCall: (o) => s.refunder.approveToolCall(o),
      declineToolCall: (o) => s.refunder.declineToolCall(o),
    }
    const before = await decisionCount()
    await expect(s.open({}, agent)).rejects.toMatchObject({
      name: 'PusharyValidationError',
      code: 'invalid_decision_input',
      operation: 'openPusharyAgentReview',
      field,
    })
    // The blocking resolver reports it per call, as docs/agents.md says, and asks nothing.
    const outcome = await resolvePusharyApprovals(
      { client: env.client, externalId: s.externalId },
      { agent: s.refunder, runs: withArgs },
    )
    expect(outcome.resolved[0]?.reviewError).toContain(`"${field}"`)
    expect(outcome.pending).toHaveLength(1)
    expect(await decisionCount()).toBe(before)
    expect(s.executions).toHaveLength(0)
  })
})

describe('agent review resumes that ran nothing, and callbacks', () => {
  it('releases the claim when the approval step cannot re-read its decision, so the answer is retried and runs the refund once', async () => {
    let failing = false
    // The review workflow's approval step reads decisions through the client it was registered with.
    const faulty: PusharyClient = {
      ...env.client,
      decisions: {
        ...env.client.decisions,
        get: async (id, call) => {
          if (failing) throw new Error('injected read failure')
          return env.client.decisions.get(id, call)
        },
      },
    }
    const s = await suspended(refund, faulty)
    const review = await s.open()
    await env.client.decisions.answer(review.decisionId, 'yes')

    failing = true
    const first = await s.resume(review.decisionId)
    expect(first).toMatchObject({ status: 'pending', reason: expect.stringContaining('still suspended') })
    expect((await store.get(review.decisionId))?.state).toBe('pending')
    expect((await store.history(review.decisionId)).at(-1)).toMatchObject({
      from: 'resuming',
      to: 'pending',
      reason: expect.stringContaining('nothing ran'),
    })
    expect(s.executions).toHaveLength(0)

    failing = false
    expect((await s.resume(review.decisionId)).status).toBe('resumed')
    expect(s.executions).toHaveLength(1)
    expect((await s.resume(review.decisionId)).status).toBe('duplicate')
    expect(s.executions).toHaveLength(1)
  })

  it('resumes an agent review from the signed callback through dispatcher.handleCallback, once', async () => {
    const s = await suspended(refund)
    const dispatcher = createPusharyDispatcher({
      mastra: s.mastra,
      client: env.client,
      store,
      webhookSecret: env.webhookSecret,
    })
    const statuses: number[] = []
    const callbacks = await startFetchServer(async (request) => {
      const response = await dispatcher.handleCallback(request)
      statuses.push(response.status)
      return response
    })
    try {
      const review = await s.open({ callbackUrl: `${callbacks.url}/pushary` })
      await answerNext(env.client, s.externalId, 'yes')
      await waitFor(async () =>
        (await store.get(review.decisionId))?.state === 'completed' ? true : undefined,
      )
      expect(s.executions).toHaveLength(1)
      expect(statuses).toContain(200)
      const forged = await dispatcher.handleCallback(
        new Request('http://127.0.0.1/pushary', {
          method: 'POST',
          headers: { 'x-pushary-signature': 'sha256=00' },
          body: JSON.stringify({ decisionId: review.decisionId, correlationId: review.decisionId }),
        }),
      )
      expect(forged.status).toBe(401)
      expect((await dispatcher.resumeDecision(review.decisionId)).status).toBe('duplicate')
      expect(s.executions).toHaveLength(1)
    } finally {
      await callbacks.close()
    }
  })
})
