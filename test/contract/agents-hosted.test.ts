/**
 * Agents against a server that speaks only the hosted wire (`hosted-fake.ts`,
 * app in `hosted-app.ts`): the deferred question tool, the blocking ask
 * tool, and a `requireApproval` tool resolved inline
 * (`resolvePusharyApprovals`) or as a deferred review resumed by the
 * dispatcher from a signed hosted callback or from `reconcile()`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openPusharyAgentReview } from '../../src/agents/open-review.js'
import { resolvePusharyApprovals } from '../../src/agents/resolve-approvals.js'
import { toolResults } from '../agents/support/agent-env.js'
import { EXTERNAL_ID, type HostedApp, startHostedApp } from './hosted-app.js'

let app: HostedApp
let fake: HostedApp['fake']
let store: HostedApp['store']
let mastra: HostedApp['mastra']
let dispatcher: HostedApp['dispatcher']
let bridge: HostedApp['bridge']
let client: HostedApp['client']
let personAnswers: HostedApp['personAnswers']
let effects: HostedApp['effects']

beforeAll(async () => {
  app = await startHostedApp()
  ;({ fake, store, mastra, dispatcher, bridge, client, personAnswers, effects } = app)
})
afterAll(async () => {
  await app?.close()
})

/** Runs the asker until its question suspends and opens the phone review. */
async function askerSuspends(orderId: string) {
  const agent = mastra.getAgentById('asker')
  const output = await agent.generate(`Refund ${orderId}`, {
    memory: { thread: `asker-${orderId}`, resource: EXTERNAL_ID },
  })
  expect(output.finishReason).toBe('suspended')
  const review = await openPusharyAgentReview(
    { client },
    {
      agent,
      agentId: 'asker',
      runId: output.runId!,
      toolCallId: `ask-${orderId}`,
      externalId: EXTERNAL_ID,
      actionVersion: 'v1',
      store,
      callbackUrl: bridge.url,
    },
  )
  expect(review.kind).toBe('question')
  return review
}

describe('agent: deferred question tool against the hosted wire', () => {
  it.each([
    ['yes', 'callback', 1],
    [' approve ', 'reconcile', 1],
    ['no', 'callback', 0],
    ['maybe', 'reconcile', 0],
  ] as const)(
    'answered %j via %s, refunds %i time(s) and settles the review',
    async (value, via, refunds) => {
      const orderId = `ask-${via}-${value.trim()}`
      const review = await askerSuspends(orderId)
      const outcome = await personAnswers(review.decisionId, value, via)
      if (via === 'callback') expect(outcome).toMatchObject({ status: 'resumed' })
      expect((await store.get(review.decisionId))?.state).toBe('completed')
      expect((await dispatcher.resumeDecision(review.decisionId)).status).toBe('duplicate')
      expect(await effects('asker-refund', orderId)).toBe(refunds)
    },
  )
})

/** The refund agent suspends on its `requireApproval` tool. */
async function refunderSuspends(orderId: string) {
  const agent = mastra.getAgentById('refunder')
  const output = await agent.generate(`Refund ${orderId}`, {
    memory: { thread: `refunder-${orderId}`, resource: EXTERNAL_ID },
  })
  expect(output.finishReason).toBe('suspended')
  return { agent, runId: output.runId! }
}

const refunds = (orderId: string) => effects('agent-refund', orderId)

describe('agent: requireApproval tool against the hosted wire', () => {
  it.each([
    ['yes', 'callback', 1],
    ['Yes', 'reconcile', 1],
    ['no', 'callback', 0],
    ['maybe', 'reconcile', 0],
  ] as const)(
    'as a deferred review answered %j via %s, runs the tool %i time(s)',
    async (value, via, expected) => {
      const orderId = `rv-${via}-${value}`
      const { agent, runId } = await refunderSuspends(orderId)
      const review = await openPusharyAgentReview(
        { client },
        {
          agent,
          agentId: 'refunder',
          runId,
          toolCallId: `call-${orderId}`,
          externalId: EXTERNAL_ID,
          actionVersion: 'v1',
          store,
          callbackUrl: bridge.url,
        },
      )
      const outcome = await personAnswers(review.decisionId, value, via)
      if (via === 'callback') expect(outcome).toMatchObject({ status: 'resumed' })
      expect((await store.get(review.decisionId))?.state).toBe('completed')
      expect((await dispatcher.resumeDecision(review.decisionId)).status).toBe('duplicate')
      expect(await refunds(orderId)).toBe(expected)
    },
  )

  it.each([
    ['OK', true, 1],
    ['maybe', false, 0],
  ] as const)(
    'resolved inline by resolvePusharyApprovals, %j approves: %s',
    async (value, approved, expected) => {
      const orderId = `inline-${value}`
      const { agent, runId } = await refunderSuspends(orderId)
      const { runs } = await agent.listSuspendedRuns({ resourceId: EXTERNAL_ID })
      const before = fake.pages
      const answering = (async () => {
        while (fake.pages === before) await new Promise((resolve) => setTimeout(resolve, 20))
        await new Promise((resolve) => setTimeout(resolve, 50))
        await fake.answer([...fake.decisions.keys()].at(-1)!, value)
      })()
      const [outcome] = await Promise.all([
        resolvePusharyApprovals(
          { client, externalId: EXTERNAL_ID, policy: false, timeoutMs: 20_000 },
          { agent, runs: runs.filter((run) => run.runId === runId) },
        ),
        answering,
      ])
      expect(outcome.allApproved).toBe(approved)
      expect(outcome.resolved).toHaveLength(1)
      expect(outcome.resolved[0]).toMatchObject({ approved, toolCallId: `call-${orderId}` })
      // Settled by the answer, not by an error on the way.
      expect(outcome.resolved[0]?.reviewError).toBeUndefined()
      expect(outcome.resolved[0]?.resumeError).toBeUndefined()
      expect(fake.pages).toBe(before + 1)
      expect(await refunds(orderId)).toBe(expected)
    },
  )
})

describe('agent: a deferred review whose decision the hosted service forgot', () => {
  it('before its expiry stays pending; after it, settles as expired and never runs the tool', async () => {
    const orderId = 'rv-forgotten'
    const { agent, runId } = await refunderSuspends(orderId)
    const review = await openPusharyAgentReview(
      { client },
      {
        agent,
        agentId: 'refunder',
        runId,
        toolCallId: `call-${orderId}`,
        externalId: EXTERNAL_ID,
        actionVersion: 'v1',
        store,
        callbackUrl: bridge.url,
        expiresInSeconds: 2,
      },
    )
    expect(review.expiresAt).toEqual(expect.any(String))
    fake.forget(review.decisionId)
    // A 404 before the reported expiry is an error, never a verdict.
    await dispatcher.reconcile({ limit: 100 })
    expect((await store.get(review.decisionId))?.state).toBe('pending')
    const expiresAt = Date.parse(review.expiresAt ?? '')
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt - Date.now()) + 50))
    await dispatcher.reconcile({ limit: 100 })
    expect((await store.get(review.decisionId))?.state).toBe('completed')
    expect((await dispatcher.resumeDecision(review.decisionId)).status).toBe('duplicate')
    expect(await refunds(orderId)).toBe(0)
  })
})

describe('agent: blocking ask tool against the hosted wire', () => {
  it.each([
    ['OK', 1],
    ['maybe', 0],
  ] as const)('answered %j, refunds %i time(s) without a throw', async (value, expected) => {
    const orderId = `blocking-${value}`
    const before = fake.pages
    const answering = (async () => {
      while (fake.pages === before) await new Promise((resolve) => setTimeout(resolve, 20))
      await new Promise((resolve) => setTimeout(resolve, 50))
      await fake.answer([...fake.decisions.keys()].at(-1)!, value)
    })()
    const [output] = await Promise.all([
      mastra.getAgentById('blocking-asker').generate(`Refund ${orderId}`, {
        memory: { thread: `blocking-${orderId}`, resource: EXTERNAL_ID },
      }),
      answering,
    ])
    expect(output.finishReason).not.toBe('suspended')
    expect(output.text).toBe(expected === 1 ? 'Refunded.' : 'Not refunded: the customer did not agree.')
    // The tool returned the answer as given (no tool error standing in for a decline).
    expect(toolResults(output).get(`ask-${orderId}`)).toEqual({
      status: 'answered',
      value,
      approved: expected === 1,
      decisionId: [...fake.decisions.keys()].at(-1),
    })
    expect(await effects('blocking-asker-refund', orderId)).toBe(expected)
    expect(fake.pages).toBe(before + 1)
  })
})

describe('what the package asked of the hosted API in this file', () => {
  it('used only contract endpoints and no local-only extras (delivery list, list status filter)', () => {
    expect(fake.requests.length).toBeGreaterThan(0)
    const offContract = fake.requests.filter(
      (request) => request.route === 'unknown' || request.query.status !== undefined,
    )
    expect(offContract).toEqual([])
  })
})
