/**
 * Issue 41: several approvers on the agent paths. Real parts: a Mastra agent
 * with the scripted model and a `requireApproval` refund tool on a LibSQL
 * file, the SQLite review store, the local decision service over loopback
 * HTTP, the dispatcher, and separate OS processes for the race. One decision
 * and one review per approver; the native resume happens once, when the set
 * settles; the other questions are withdrawn.
 */
import { mkdirSync, mkdtempSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPusharyDispatcher } from '../../src/agents/dispatcher.js'
import { openPusharyAgentReview } from '../../src/agents/open-review.js'
import { resolvePusharyApprovals } from '../../src/agents/resolve-approvals.js'
import { resumePusharyAgentReview } from '../../src/agents/resume-review.js'
import { createPostgresReviewStore } from '../../src/store/postgres-store.js'
import type { PusharyAgentReview } from '../../src/store/review-schema.js'
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
import { dropSchema, ensurePostgres, type TestPostgres, uniqueSchema } from '../store/support/postgres.js'
import { pendingDecisionOf } from './support/agent-env.js'
import { buildAgents } from './support/agents.js'

let env: TestEnv
let postgres: TestPostgres
let n = 0
const stores: PusharyReviewStore[] = []
const schemas: string[] = []

beforeAll(async () => {
  env = await createTestEnv('agent-approvers')
  postgres = await ensurePostgres()
})
afterAll(async () => {
  for (const store of stores) await store.close()
  for (const schema of schemas) await dropSchema(postgres.connectionString, schema)
  await postgres?.stop()
  await env?.close()
})

/** A fresh agent, Mastra file and review store (SQLite, or a PostgreSQL schema of its own); approvers are named per case. */
function fresh(kind: 'sqlite' | 'postgres' = 'sqlite') {
  const dir = mkdtempSync(join(env.dir, `case-${++n}-`))
  const requester = `requester_${n}`
  const schema = uniqueSchema('agent_set')
  if (kind === 'postgres') schemas.push(schema)
  const store =
    kind === 'postgres'
      ? createPostgresReviewStore({ connectionString: postgres.connectionString, schema })
      : createSqliteReviewStore({ url: `file:${join(dir, 'reviews.db')}` })
  stores.push(store)
  const built = buildAgents({
    dir,
    client: env.client,
    externalId: requester,
    calls: [{ toolCallId: `call_${n}`, toolName: 'issueRefund', input: { orderId: `o${n}`, amount: 20 } }],
  })
  const names = (...who: string[]) => who.map((name) => `${name}_${n}`)
  return { ...built, dir, requester, store, names }
}

type Fresh = ReturnType<typeof fresh>

async function suspend(c: Fresh) {
  const output = await c.refunder.generate('Refund it', { memory: { thread: 't1', resource: c.requester } })
  expect(output.finishReason).toBe('suspended')
  const { runs } = await c.refunder.listSuspendedRuns({ resourceId: c.requester })
  return runs.find((run) => run.runId === output.runId)!
}

async function openSet(c: Fresh, approvers: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const run = await suspend(c)
  const review = await openPusharyAgentReview(
    { client: env.client },
    {
      agent: c.refunder,
      agentId: 'refunder',
      runId: run.runId,
      toolCallId: run.toolCalls[0]!.toolCallId!,
      approvers: approvers as never,
      requestedBy: c.requester,
      actionVersion: 'v1',
      store: c.store,
      ...extra,
    },
  )
  const members = await Promise.all(
    (review.approverSet?.decisionIds ?? []).map(async (id) => (await c.store.get(id)) as PusharyAgentReview),
  )
  const id = (externalId: string) => members.find((member) => member.externalId === externalId)!.decisionId
  return { run, review, members, id }
}

async function decisionsOf(externalId: string): Promise<number> {
  return (await env.client.decisions.list({ externalId, limit: 100 })).decisions.length
}

/** The statuses of the agent's review runs; none when the review workflow was never registered. */
async function reviewRuns(c: Fresh): Promise<string[]> {
  let workflow: ReturnType<typeof c.mastra.getWorkflowById>
  try {
    workflow = c.mastra.getWorkflowById('pushary-agent-review')
  } catch {
    return []
  }
  const listed = await workflow.listWorkflowRuns()
  return listed.runs.map((run: { snapshot: unknown }) => (run.snapshot as { status: string }).status)
}

describe('several approvers on a deferred agent review', () => {
  it('runs the refund once when 2 of 3 approve, and withdraws the third question', async () => {
    const c = fresh()
    const [alice, bob, carol] = c.names('alice', 'bob', 'carol')
    const { review, members, id } = await openSet(c, { externalIds: [alice, bob, carol], required: 2 })
    expect(review.approverSet).toMatchObject({ required: 2, veto: true, externalIds: [alice, bob, carol] })
    expect(members.map((member) => member.externalId)).toEqual([alice, bob, carol])
    // Each card says how many are needed and who else is asked.
    const card = await env.client.decisions.get(id(alice!))
    expect(card.question).toContain('issueRefund')
    expect(card.parameters).toMatchObject({
      'Approvals needed': '2 of 3, one denial declines',
      'Also asked': `${bob}, ${carol}`,
    })
    const dispatcher = createPusharyDispatcher({ mastra: c.mastra, client: env.client, store: c.store })

    await env.client.decisions.answer(id(alice!), 'yes')
    const first = await dispatcher.resumeDecision(id(alice!))
    expect(first).toMatchObject({ status: 'pending', reasonCode: 'awaiting_approvers' })
    expect(c.executions).toHaveLength(0)
    expect((await c.store.get(id(alice!)))?.state).toBe('completed')
    expect(await reviewRuns(c)).toEqual(['suspended'])

    await env.client.decisions.answer(id(bob!), 'yes')
    const second = await resumePusharyAgentReview(
      { client: env.client },
      { agent: c.refunder, agentId: 'refunder', externalId: bob!, decisionId: id(bob!), store: c.store },
    )
    expect(second.status).toBe('resumed')
    if (second.status !== 'resumed') return
    expect(second.answer).toMatchObject({ status: 'answered', approved: true })
    expect(second.actionOutcome).toBe('ran')
    expect(second.settledBy).toEqual([id(alice!), id(bob!)])
    expect(second.approvers?.map((a) => [a.externalId, a.status, a.approved])).toEqual([
      [alice, 'answered', true],
      [bob, 'answered', true],
      [carol, 'pending', false],
    ])
    expect(second.approvers?.[0]?.answeredAt).toEqual(expect.any(String))
    expect((second.output as { text: string }).text).toContain('refunded')
    expect(c.executions).toHaveLength(1)

    // The third question left carol's phone; her review says why.
    expect((await env.client.decisions.get(id(carol!))).status).toBe('cancelled')
    expect((await c.store.get(id(carol!)))?.state).toBe('stale')
    expect((await c.store.history(id(carol!))).at(-1)?.reason).toMatch(/withdrawn.*approved.*settled by/)
    expect((await c.store.get(id(bob!)))?.state).toBe('completed')
    expect(await reviewRuns(c)).toEqual(['success'])

    // Nothing runs twice: duplicates, a late answer and reconcile change nothing.
    await expect(env.client.decisions.answer(id(carol!), 'yes')).rejects.toThrow()
    expect(await dispatcher.resumeDecision(id(bob!))).toMatchObject({ status: 'duplicate' })
    expect(await dispatcher.resumeDecision(id(alice!))).toMatchObject({ status: 'duplicate' })
    await dispatcher.reconcile({ limit: 100 })
    expect(c.executions).toHaveLength(1)
  })

  it('runs the refund once on the PostgreSQL review store when 2 of 3 approve, and withdraws the third', async () => {
    const c = fresh('postgres')
    const [alice, bob, carol] = c.names('alice', 'bob', 'carol')
    const { id } = await openSet(c, { externalIds: [alice, bob, carol], required: 2 })
    const dispatcher = createPusharyDispatcher({ mastra: c.mastra, client: env.client, store: c.store })
    await env.client.decisions.answer(id(alice!), 'yes')
    expect(await dispatcher.resumeDecision(id(alice!))).toMatchObject({
      status: 'pending',
      reasonCode: 'awaiting_approvers',
    })
    await env.client.decisions.answer(id(bob!), 'yes')
    expect(await dispatcher.resumeDecision(id(bob!))).toMatchObject({
      status: 'resumed',
      actionOutcome: 'ran',
    })
    expect(c.executions).toHaveLength(1)
    expect((await env.client.decisions.get(id(carol!))).status).toBe('cancelled')
    expect((await c.store.get(id(carol!)))?.state).toBe('stale')
    expect((await c.store.get(id(alice!)))?.state).toBe('completed')
    expect((await c.store.get(id(bob!)))?.state).toBe('completed')
    expect(await reviewRuns(c)).toEqual(['success'])
    // Duplicates and reconcile change nothing.
    expect(await dispatcher.resumeDecision(id(bob!))).toMatchObject({ status: 'duplicate' })
    await dispatcher.reconcile({ limit: 100 })
    expect(c.executions).toHaveLength(1)
  })

  it('declines on one denial (veto): the refund never runs and the open question is withdrawn', async () => {
    const c = fresh()
    const [alice, bob, carol] = c.names('alice', 'bob', 'carol')
    const { id } = await openSet(c, { externalIds: [alice, bob, carol], required: 2 })
    const dispatcher = createPusharyDispatcher({ mastra: c.mastra, client: env.client, store: c.store })
    // A reconcile with no callbacks at all counts alice's yes.
    await env.client.decisions.answer(id(alice!), 'yes')
    const swept = await dispatcher.reconcile({ limit: 100 })
    expect(swept.results.find((result) => result.decisionId === id(alice!))).toMatchObject({
      status: 'pending',
      reasonCode: 'awaiting_approvers',
    })
    expect((await c.store.get(id(alice!)))?.state).toBe('completed')
    await env.client.decisions.answer(id(bob!), 'no')
    const denied = await dispatcher.resumeDecision(id(bob!))
    expect(denied).toMatchObject({
      status: 'resumed',
      answer: { approved: false },
      actionOutcome: 'not_run',
    })
    const text = (denied as { agent?: { output?: { text?: string } } }).agent?.output?.text
    expect(text).toContain('The approvers declined (1 of 2 required approvals; one said no).')
    expect(c.executions).toHaveLength(0)
    expect((await env.client.decisions.get(id(carol!))).status).toBe('cancelled')
    expect((await c.store.get(id(carol!)))?.state).toBe('stale')
    await dispatcher.reconcile({ limit: 100 })
    expect(c.executions).toHaveLength(0)
  })
})

describe('several approvers on resolvePusharyApprovals', () => {
  it('waits for the set: 2 of 3 approve, the refund runs once and the third question is withdrawn', async () => {
    const c = fresh()
    const [alice, bob, carol] = c.names('alice', 'bob', 'carol')
    const run = await suspend(c)
    const answering = (async () => {
      const a = await pendingDecisionOf(env.client, alice!)
      await env.client.decisions.answer(a.decisionId, 'yes')
      const b = await pendingDecisionOf(env.client, bob!)
      await env.client.decisions.answer(b.decisionId, 'yes')
      return pendingDecisionOf(env.client, carol!)
    })()
    const [outcome, third] = await Promise.all([
      resolvePusharyApprovals(
        {
          client: env.client,
          approvers: { externalIds: [alice!, bob!, carol!], required: 2 },
          requestedBy: c.requester,
          policy: false,
          store: c.store,
        },
        { agent: c.refunder, runs: [run] },
      ),
      answering,
    ])
    expect(outcome.allApproved).toBe(true)
    expect(outcome.resolved).toHaveLength(1)
    expect(outcome.resolved[0]).toMatchObject({ approved: true, toolName: 'issueRefund' })
    expect(outcome.resolved[0]!.approvers?.filter((a) => a.approved).map((a) => a.externalId)).toEqual([
      alice,
      bob,
    ])
    expect(outcome.resolved[0]!.settledBy).toHaveLength(2)
    expect(c.executions).toHaveLength(1)
    expect((await env.client.decisions.get(third.decisionId)).status).toBe('cancelled')
    expect((await c.store.get(third.decisionId))?.state).toBe('stale')
  })

  it('declines on a denial (veto) without running the refund, the model reading why', async () => {
    const c = fresh()
    const [alice, bob, carol] = c.names('alice', 'bob', 'carol')
    const answering = (async () => {
      const a = await pendingDecisionOf(env.client, alice!)
      await env.client.decisions.answer(a.decisionId, 'no')
    })()
    await suspend(c)
    const [outcome] = await Promise.all([
      resolvePusharyApprovals(
        {
          client: env.client,
          approvers: () => ({ externalIds: [alice!, bob!, carol!], required: 2 }),
          policy: false,
          store: c.store,
        },
        { agent: c.refunder, resourceId: c.requester },
      ),
      answering,
    ])
    expect(outcome.allApproved).toBe(false)
    expect(outcome.resolved[0]).toMatchObject({ approved: false, reason: 'The approvers declined.' })
    expect(outcome.resolved[0]!.approvers?.map((a) => [a.externalId, a.status])).toEqual([
      [alice, 'answered'],
      [bob, 'pending'],
      [carol, 'pending'],
    ])
    expect((outcome.resolved[0]!.output as { text: string }).text).toContain('The approvers declined')
    expect(c.executions).toHaveLength(0)
    for (const who of [bob!, carol!]) {
      const { decisions } = await env.client.decisions.list({ externalId: who, limit: 10 })
      expect(decisions.map((decision) => decision.status)).toEqual(['cancelled'])
    }
  })

  it('declines when the local wait ends before the quorum, withdrawing every open question', async () => {
    const c = fresh()
    const [alice, bob] = c.names('alice', 'bob')
    const run = await suspend(c)
    const outcome = await resolvePusharyApprovals(
      { client: env.client, approvers: { externalIds: [alice!, bob!] }, policy: false, timeoutMs: 400 },
      { agent: c.refunder, runs: [run] },
    )
    expect(outcome.resolved[0]).toMatchObject({ approved: false, reason: 'The approvers declined.' })
    expect(c.executions).toHaveLength(0)
    for (const who of [alice!, bob!]) {
      const { decisions } = await env.client.decisions.list({ externalId: who, limit: 10 })
      expect(decisions.map((decision) => decision.status)).toEqual(['cancelled'])
    }
  })
})

describe('who may approve', () => {
  it('removes the requester from the set: only the others are asked, and all of them by default', async () => {
    const c = fresh()
    const [alice, bob] = c.names('alice', 'bob')
    const { review } = await openSet(c, { externalIds: [c.requester, alice, bob] })
    expect(review.approverSet).toMatchObject({
      externalIds: [alice, bob],
      required: 2,
      requestedBy: c.requester,
    })
    expect(await decisionsOf(c.requester)).toBe(0)
    expect(await decisionsOf(alice!)).toBe(1)
    expect(await decisionsOf(bob!)).toBe(1)
  })

  it.each([
    [
      'both externalId and approvers',
      { externalId: 'x_both', approvers: { externalIds: ['y_both'] } },
      'approvers',
    ],
    ['neither externalId nor approvers', {}, 'externalId'],
    [
      'a quorum the set cannot reach',
      { approvers: { externalIds: ['a_quorum', 'b_quorum'], required: 3 } },
      'approvers.required',
    ],
    [
      'a quorum the requester makes impossible',
      { approvers: { externalIds: ['self_q', 'b_self_q'], required: 2 }, requestedBy: 'self_q' },
      'approvers.required',
    ],
    [
      'the requester as the only approver',
      { approvers: { externalIds: ['solo'] }, requestedBy: 'solo' },
      'requestedBy',
    ],
    ['the requester as the one externalId', { externalId: 'same', requestedBy: 'same' }, 'requestedBy'],
    [
      'an escalating set',
      { approvers: { externalIds: ['e_1'], escalation: [{ afterSeconds: 60, externalIds: ['e_2'] }] } },
      'approvers.escalation',
    ],
  ])('refuses %s with a typed error naming the field, before anyone is asked', async (_name, who, field) => {
    const c = fresh()
    const run = await suspend(c)
    const target = {
      agent: c.refunder,
      agentId: 'refunder',
      runId: run.runId,
      toolCallId: run.toolCalls[0]!.toolCallId!,
      actionVersion: 'v1',
      store: c.store,
      ...who,
    }
    await expect(openPusharyAgentReview({ client: env.client }, target as never)).rejects.toMatchObject({
      name: 'PusharyValidationError',
      operation: 'openPusharyAgentReview',
      field,
    })
    const { requestedBy: _r, externalId: _e, approvers: _a, ...rest } = who as Record<string, unknown>
    const config = { client: env.client, policy: false, ...rest }
    await expect(
      resolvePusharyApprovals({ ...config, ...(who as object) } as never, { agent: c.refunder, runs: [run] }),
    ).rejects.toMatchObject({
      operation: 'resolvePusharyApprovals',
      field: field === 'externalId' ? 'config.externalId' : `config.${field}`,
    })
    const named = JSON.stringify(who).match(/"[a-z_]+"/g) ?? []
    for (const quoted of named) expect(await decisionsOf(JSON.parse(quoted) as string)).toBe(0)
    expect(await reviewRuns(c)).toEqual([])
  })
})

describe('several approvers across processes', () => {
  it('gives one native resume when two approvers answer at once and two processes resume them', async () => {
    const dir = join(env.dir, 'race')
    mkdirSync(dir, { recursive: true })
    writeEnvFile({ dir, baseUrl: env.baseUrl, apiKey: env.apiKey, webhookSecret: env.webhookSecret })
    const run = <T>(phase: string, arg: unknown = {}) =>
      runFixture<T>([phase, dir, JSON.stringify(arg)], { script: 'test/agents/fixtures/approver-set-run.ts' })
    const started = await run<{ members: { externalId: string; decisionId: string }[] }>('start')
    expect(started.members.map((member) => member.externalId)).toEqual(['alice_x', 'bob_x', 'carol_x'])
    const [alice, bob, carol] = started.members
    await Promise.all([
      env.client.decisions.answer(alice!.decisionId, 'yes'),
      env.client.decisions.answer(bob!.decisionId, 'yes'),
    ])
    const results = await Promise.all([
      run<{ status: string }>('resume', alice),
      run<{ status: string }>('resume', bob),
    ])
    const statuses = results.map((result) => result.status)
    expect(statuses.filter((status) => status === 'resumed')).toHaveLength(1)
    expect(statuses.filter((status) => !['resumed', 'busy', 'duplicate'].includes(status))).toEqual([])
    expect(await countEffects(dir, 'refund')).toBe(1)
    // The loser's retry, and a resume of the withdrawn third, change nothing.
    for (const member of [alice, bob]) {
      expect((await run<{ status: string }>('resume', member)).status).toBe('duplicate')
    }
    expect((await run<{ status: string }>('resume', carol)).status).toMatch(/^(duplicate|stale)$/)
    await waitFor(async () =>
      (await env.client.decisions.get(carol!.decisionId)).status === 'cancelled' ? true : undefined,
    )
    expect(await countEffects(dir, 'refund')).toBe(1)
  }, 240_000)
})
