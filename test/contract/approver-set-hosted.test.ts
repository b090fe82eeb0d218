/**
 * Several approvers (issue 41) against a server that speaks only the hosted
 * wire (`hosted-fake.ts`, app in `hosted-app.ts`): one decision per approver
 * created with the hosted create, answers arriving as the hosted service
 * sends them (a signed callback into `dispatcher.handleCallback`, or none at
 * all so `reconcile()` must find them), and the still-open decisions of a
 * settled set withdrawn with the hosted `DELETE`. The protected step runs at
 * most once; every member review ends with the set in its record.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PusharyDispatchResult } from '../../src/resume/dispatch-types.js'
import { isPusharyDeclined } from '../../src/steps/gate-step.js'
import type { PusharyWorkflowReview } from '../../src/store/review-schema.js'
import { type HostedApp, startHostedApp } from './hosted-app.js'

let app: HostedApp

beforeAll(async () => {
  app = await startHostedApp()
})
afterAll(async () => {
  await app?.close()
})

type RunView = { status: string; result?: unknown; steps?: Record<string, { output?: unknown }> }
type SetWorkflow = {
  createRun(): Promise<{ runId: string; start(p: { inputData: unknown }): Promise<{ status: string }> }>
  getWorkflowRunById(id: string): Promise<RunView | null>
}
const KIND = 'approver-set-refund'

function setWorkflow(): SetWorkflow {
  return app.mastra.getWorkflow('approverSet') as unknown as SetWorkflow
}

async function reviewsOf(runId: string): Promise<PusharyWorkflowReview[]> {
  const all = []
  for (const state of ['pending', 'resuming', 'completed', 'stale', 'uncertain'] as const) {
    all.push(...(await app.store.listByState(state, { limit: 1000 })))
  }
  return all.filter(
    (review): review is PusharyWorkflowReview => review.target === 'workflow-step' && review.runId === runId,
  )
}

/** Starts one run of the set's workflow; `id(name)` is that approver's decision. */
async function start(op: string, approvers: Record<string, unknown>, requestedBy?: string) {
  const run = await setWorkflow().createRun()
  const started = await run.start({
    inputData: {
      operationId: op,
      question: `Refund ${op}?`,
      type: 'confirm',
      approvers,
      ...(requestedBy === undefined ? {} : { requestedBy }),
    },
  })
  const reviews = await reviewsOf(run.runId)
  const byApprover = new Map(reviews.map((review) => [review.externalId, review.decisionId]))
  const id = (externalId: string) => {
    const decisionId = byApprover.get(externalId)
    if (!decisionId) throw new Error(`no review for ${externalId}`)
    return decisionId
  }
  return { runId: run.runId, status: started.status, reviews, id }
}

async function runState(runId: string): Promise<RunView> {
  const state = await setWorkflow().getWorkflowRunById(runId)
  if (!state) throw new Error('run not found')
  return state
}

async function stateOf(decisionId: string): Promise<string | undefined> {
  return (await app.store.get(decisionId))?.state
}

async function lastReason(decisionId: string): Promise<string | undefined> {
  return (await app.store.history(decisionId)).at(-1)?.reason ?? undefined
}

/** The hosted `DELETE /decisions/{id}` requests the fake received for one decision. */
function deletesOf(decisionId: string): number {
  return app.fake.requests.filter(
    (request) => request.method === 'DELETE' && request.path === `/decisions/${decisionId}`,
  ).length
}

/** Replays one delivered callback, byte for byte with its signature, into the dispatcher. */
async function replayCallback(decisionId: string): Promise<{ status: number; body: PusharyDispatchResult }> {
  const sent = app.fake.callbacks.findLast((callback) => callback.decisionId === decisionId)
  if (!sent) throw new Error(`no callback was sent for ${decisionId}`)
  const response = await app.dispatcher.handleCallback(
    new Request(app.bridge.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-pushary-signature': sent.signature },
      body: sent.rawBody,
    }),
  )
  return { status: response.status, body: (await response.json()) as PusharyDispatchResult }
}

describe('several approvers against the hosted wire', () => {
  it('2 of 3: one answer by callback, one found by reconcile; the refund runs once and the third decision is withdrawn', async () => {
    const op = 'set-2of3'
    const { runId, status, reviews, id } = await start(op, {
      externalIds: ['alice_h', 'bob_h', 'carol_h'],
      required: 2,
    })
    expect(status).toBe('suspended')
    expect(reviews).toHaveLength(3)
    // Each approver has a hosted decision of their own, with the card of the set.
    for (const name of ['alice_h', 'bob_h', 'carol_h']) {
      expect(app.fake.decisions.get(id(name))).toMatchObject({ externalId: name, status: 'pending' })
    }

    const first = await app.personAnswers(id('alice_h'), 'yes', 'callback')
    expect(first).toMatchObject({ status: 'resumed', runStatus: 'suspended' })
    expect(await app.effects(KIND, op)).toBe(0)
    expect(await stateOf(id('alice_h'))).toBe('completed')

    // Bob's callback is lost: only reconcile can find his answer.
    const callbacksBefore = app.bridge.results.length
    const report = await app.personAnswers(id('bob_h'), 'yes', 'reconcile')
    expect(app.bridge.results.length).toBe(callbacksBefore)
    expect('results' in report && report.results).toEqual(
      expect.arrayContaining([expect.objectContaining({ decisionId: id('bob_h'), status: 'resumed' })]),
    )
    expect(await app.effects(KIND, op)).toBe(1)
    const run = await runState(runId)
    expect(run.status).toBe('success')
    expect(run.result).toEqual({ refunded: true })
    expect(run.steps?.approve?.output).toMatchObject({
      approved: true,
      rule: { required: 2, veto: true },
      settledBy: [id('alice_h'), id('bob_h')],
    })

    // The third question was withdrawn with the hosted DELETE and is cancelled there.
    expect(deletesOf(id('carol_h'))).toBeGreaterThanOrEqual(1)
    expect(deletesOf(id('alice_h')) + deletesOf(id('bob_h'))).toBe(0)
    expect(app.fake.decisions.get(id('carol_h'))?.status).toBe('cancelled')

    // Every member review is terminal, and its reason names the set.
    expect(await stateOf(id('alice_h'))).toBe('completed')
    expect(await stateOf(id('bob_h'))).toBe('completed')
    expect(await stateOf(id('carol_h'))).toBe('stale')
    const settled = new RegExp(
      `the approvers' set was approved \\(2 of 3 required, one denial declines\\), settled by ${id('alice_h')} \\(alice_h\\), ${id('bob_h')} \\(bob_h\\)`,
    )
    expect(await lastReason(id('alice_h'))).toMatch(
      /waits on the other approvers \(1 of 2 approvals so far\)/,
    )
    expect(await lastReason(id('bob_h'))).toMatch(settled)
    expect(await lastReason(id('carol_h'))).toMatch(
      /the decision of carol_h is cancelled; withdrawn \(cancelled at the service\)/,
    )
    expect(await lastReason(id('carol_h'))).toMatch(settled)

    // Nothing more happens on another pass.
    await app.dispatcher.reconcile({ limit: 100 })
    expect(await app.effects(KIND, op)).toBe(1)
  })

  it('one denial vetoes: the refund never runs and the remaining decision is withdrawn', async () => {
    const op = 'set-veto'
    const { runId, id } = await start(op, { externalIds: ['alice_v', 'bob_v', 'carol_v'], required: 2 })
    const first = await app.personAnswers(id('alice_v'), 'yes', 'reconcile')
    expect('results' in first && first.results).toEqual(
      expect.arrayContaining([expect.objectContaining({ decisionId: id('alice_v'), status: 'resumed' })]),
    )
    const denied = await app.personAnswers(id('bob_v'), 'no', 'callback')
    expect(denied).toMatchObject({ status: 'resumed', actionOutcome: 'not_run' })

    const run = await runState(runId)
    expect(run.status).toBe('success')
    expect(isPusharyDeclined(run.result)).toBe(true)
    expect(run.result).toMatchObject({ outcome: 'declined', reason: 'denied' })
    expect(run.steps?.approve?.output).toMatchObject({ approved: false, settledBy: [id('bob_v')] })
    expect(app.fake.decisions.get(id('carol_v'))?.status).toBe('cancelled')
    expect(deletesOf(id('carol_v'))).toBeGreaterThanOrEqual(1)
    expect(await stateOf(id('bob_v'))).toBe('completed')
    expect(await stateOf(id('carol_v'))).toBe('stale')
    expect(await lastReason(id('carol_v'))).toMatch(/withdrawn.*the approvers' set was declined.*settled by/)

    await app.dispatcher.reconcile({ limit: 100 })
    expect(await app.effects(KIND, op)).toBe(0)
  })

  it('the requester is removed from the set: never asked, never counted', async () => {
    const creates = () =>
      app.fake.requests
        .filter((request) => request.route === 'create')
        .map((request) => (request.body as { externalId?: string }).externalId)

    // A requester who makes the quorum impossible: refused before any create.
    const before = creates().length
    const refused = await start(
      'set-self-refused',
      { externalIds: ['gus_s', 'hana_s'], required: 2 },
      'gus_s',
    )
    expect(refused.status).toBe('failed')
    expect(creates().length).toBe(before)

    const op = 'set-self'
    const { runId, reviews, id } = await start(
      op,
      { externalIds: ['dana_s', 'erin_s', 'finn_s'], required: 2 },
      'dana_s',
    )
    expect(reviews.map((review) => review.externalId).sort()).toEqual(['erin_s', 'finn_s'])
    // No decision for the requester was ever created at the hosted service.
    expect(creates()).not.toContain('dana_s')
    expect([...app.fake.decisions.values()].some((decision) => decision.externalId === 'dana_s')).toBe(false)
    // The card of each approver names only the other approver left in the set.
    const erinCreate = app.fake.requests.find(
      (request) =>
        request.route === 'create' && (request.body as { externalId?: string }).externalId === 'erin_s',
    )
    expect(
      (erinCreate?.body as { parameters?: Record<string, unknown> } | undefined)?.parameters,
    ).toMatchObject({
      'Approvals needed': '2 of 2, one denial declines',
      'Also asked': 'finn_s',
    })

    await app.personAnswers(id('erin_s'), 'yes', 'callback')
    expect(await app.effects(KIND, op)).toBe(0)
    await app.personAnswers(id('finn_s'), 'yes', 'callback')
    expect(await app.effects(KIND, op)).toBe(1)
    expect((await runState(runId)).steps?.approve?.output).toMatchObject({
      approved: true,
      rule: { externalIds: ['erin_s', 'finn_s'], required: 2 },
    })
  })

  it('a duplicate callback and an answer after the set settled change nothing; the late answer is recorded stale', async () => {
    const op = 'set-late'
    const { runId, id } = await start(op, { externalIds: ['ivy_l', 'jack_l', 'kim_l'], required: 2 })
    // The hosted DELETE fails twice (the step's withdrawal, then the member
    // ending's), so kim's question stays open on her phone after the set settled.
    app.fake.oddNext('cancel', { status: 503, body: { error: 'Service unavailable' } }, { count: 2 })
    await app.personAnswers(id('ivy_l'), 'yes', 'callback')
    const settled = await app.personAnswers(id('jack_l'), 'yes', 'callback')
    expect(settled).toMatchObject({ status: 'resumed', actionOutcome: 'ran' })
    expect(await app.effects(KIND, op)).toBe(1)
    expect(deletesOf(id('kim_l'))).toBe(2)
    expect(app.fake.decisions.get(id('kim_l'))?.status).toBe('pending')
    expect(await stateOf(id('kim_l'))).toBe('pending')

    // The hosted service delivers jack's callback again.
    const duplicate = await replayCallback(id('jack_l'))
    expect(duplicate.status).toBe(200)
    expect(duplicate.body).toMatchObject({ status: 'duplicate', decisionId: id('jack_l') })
    expect(await app.effects(KIND, op)).toBe(1)

    // Kim answers the question still on her phone: late, recorded, changes nothing.
    const late = await app.personAnswers(id('kim_l'), 'no', 'callback')
    expect(late).toMatchObject({ status: 'stale', decisionId: id('kim_l') })
    expect(await stateOf(id('kim_l'))).toBe('stale')
    const lateHistory = (await app.store.history(id('kim_l'))).length
    expect(await lastReason(id('kim_l'))).toMatch(
      /kim_l answered "no" at .* after the approvers' set was approved .*; the late answer changes nothing/,
    )
    // Delivered again: the review is already settled, so the replay is answered with its state.
    const again = await replayCallback(id('kim_l'))
    expect(again.status).toBe(200)
    expect(again.body).toMatchObject({ status: 'stale', decisionId: id('kim_l') })
    expect(await app.store.history(id('kim_l'))).toHaveLength(lateHistory)
    await app.dispatcher.reconcile({ limit: 100 })

    expect(await app.effects(KIND, op)).toBe(1)
    const run = await runState(runId)
    expect(run.result).toEqual({ refunded: true })
    expect(run.steps?.approve?.output).toMatchObject({
      approved: true,
      settledBy: [id('ivy_l'), id('jack_l')],
    })
    expect(await stateOf(id('ivy_l'))).toBe('completed')
    expect(await stateOf(id('jack_l'))).toBe('completed')
  })

  it('escalation: the next tier is asked once, after the delay, by reconcile alone; its approval decides', async () => {
    const op = 'set-escalation'
    const decisionsOf = (externalId: string) =>
      [...app.fake.decisions.values()].filter((decision) => decision.externalId === externalId)
    const { runId, id } = await start(op, {
      externalIds: ['ann_e'],
      escalation: [{ afterSeconds: 1, externalIds: ['ben_e'] }],
    })
    await app.dispatcher.reconcile({ limit: 1000 })
    expect(decisionsOf('ben_e')).toHaveLength(0)
    await new Promise((resolve) => setTimeout(resolve, 1_200))
    await app.dispatcher.reconcile({ limit: 1000 })
    await app.dispatcher.reconcile({ limit: 1000 })
    expect(decisionsOf('ben_e')).toHaveLength(1)
    expect(decisionsOf('ben_e')[0]).toMatchObject({ status: 'pending' })
    const ben = (await reviewsOf(runId)).find((review) => review.externalId === 'ben_e')
    if (!ben) throw new Error('no review for the escalated approver')

    const settled = await app.personAnswers(ben.decisionId, 'yes', 'callback')
    expect(settled).toMatchObject({ status: 'resumed', actionOutcome: 'ran' })
    expect(await app.effects(KIND, op)).toBe(1)
    expect(deletesOf(id('ann_e'))).toBeGreaterThanOrEqual(1)
    expect(app.fake.decisions.get(id('ann_e'))?.status).toBe('cancelled')
    expect(await stateOf(id('ann_e'))).toBe('stale')
    expect(await stateOf(ben.decisionId)).toBe('completed')
    await app.dispatcher.reconcile({ limit: 1000 })
    expect(await app.effects(KIND, op)).toBe(1)
    expect(decisionsOf('ben_e')).toHaveLength(1)
  })

  it('used only contract endpoints and no local-only extras', () => {
    expect(app.fake.count('cancel')).toBeGreaterThan(0)
    const offContract = app.fake.requests.filter(
      (request) => request.route === 'unknown' || request.query.status !== undefined,
    )
    expect(offContract).toEqual([])
  })
})
