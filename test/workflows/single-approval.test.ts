import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPusharyDispatcher } from '../../src/agents/dispatcher.js'
import { SIGNATURE_HEADER, signWebhookBody } from '../../src/pushary/callbacks.js'
import type { PusharyResumedEvent } from '../../src/resume/dispatch-types.js'
import { isPusharyDeclined } from '../../src/steps/gate-step.js'
import { countEffects, createTestEnv, runFixture, type TestEnv } from '../helpers/mastra.js'
import { buildApp, recoverAfterLease, type TestApp } from './fixtures/app.js'

let env: TestEnv
let app: TestApp

beforeAll(async () => {
  env = await createTestEnv('single')
  app = buildApp(env)
})

afterAll(async () => {
  await app?.close()
  await env?.close()
})

type RunView = { status: string; result?: unknown }

async function runState(workflowId: string, runId: string): Promise<RunView> {
  const workflow = app.mastra.getWorkflowById(workflowId as never) as unknown as {
    getWorkflowRunById(id: string): Promise<RunView | null>
  }
  const state = await workflow.getWorkflowRunById(runId)
  if (!state) throw new Error('run not found')
  return state
}

async function startSingle(input: Record<string, unknown>) {
  const workflow = app.mastra.getWorkflowById('refund-single' as never) as unknown as {
    createRun(): Promise<{ runId: string; start(p: { inputData: unknown }): Promise<{ status: string }> }>
  }
  const run = await workflow.createRun()
  const started = await run.start({ inputData: input })
  expect(started.status).toBe('suspended')
  const review = (await app.store.listByState('pending', { limit: 1000 })).find(
    (candidate) => candidate.runId === run.runId,
  )
  if (!review) throw new Error('no review saved')
  return { runId: run.runId, decisionId: review.decisionId }
}

function signedCallback(
  decisionId: string,
  status: string,
  answer: string | null,
  secret = env.webhookSecret,
) {
  const body = JSON.stringify({
    event: `decision.${status}`,
    correlationId: decisionId,
    decisionId,
    status,
    answer,
    value: answer,
    answeredAt: status === 'answered' ? new Date().toISOString() : null,
  })
  return new Request('http://127.0.0.1/pushary/callback', {
    method: 'POST',
    headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: signWebhookBody(body, secret) },
    body,
  })
}

describe('single approval workflow', () => {
  it('runs the refund exactly once when the person approves, resumed from another process', async () => {
    const started = await runFixture<{ runId: string; status: string }>([
      'start',
      env.dir,
      JSON.stringify({
        workflowId: 'refund-single',
        input: { operationId: 'refund:o-approve', question: 'Refund EUR 48 for order o-approve?' },
      }),
    ])
    expect(started.status).toBe('suspended')
    const review = (await app.store.listByState('pending', { limit: 1000 })).find(
      (r) => r.runId === started.runId,
    )
    expect(review).toBeDefined()
    await env.client.decisions.answer(review!.decisionId, 'yes')

    const report = await runFixture<{ resumed: number }>(['reconcile', env.dir, '{}'])
    expect(report.resumed).toBeGreaterThanOrEqual(1)
    const state = await runState('refund-single', started.runId)
    expect(state.status).toBe('success')
    expect(state.result).toEqual({ refunded: true, operationId: 'refund:o-approve' })
    expect((await app.store.get(review!.decisionId))?.state).toBe('completed')
    const again = await app.dispatcher.resumeDecision(review!.decisionId)
    expect(again.status).toBe('duplicate')
    expect(await countEffects(env.dir, 'refund')).toBe(1)
  })

  it('declines a denied approval instead of running the refund', async () => {
    const before = await countEffects(env.dir, 'refund')
    const { runId, decisionId } = await startSingle({
      operationId: 'refund:o-deny',
      question: 'Refund o-deny?',
    })
    await env.client.decisions.answer(decisionId, 'no')
    const result = await app.dispatcher.resumeDecision(decisionId)
    expect(result.status).toBe('resumed')
    const state = await runState('refund-single', runId)
    expect(state.status).toBe('success')
    expect(isPusharyDeclined(state.result)).toBe(true)
    expect(state.result).toMatchObject({ outcome: 'declined', reason: 'denied' })
    expect(await countEffects(env.dir, 'refund')).toBe(before)
  })

  it('declines a cancelled approval instead of running the refund', async () => {
    const before = await countEffects(env.dir, 'refund')
    const { runId, decisionId } = await startSingle({
      operationId: 'refund:o-cancel',
      question: 'Refund o-cancel?',
    })
    await env.client.decisions.cancel(decisionId)
    expect((await app.dispatcher.resumeDecision(decisionId)).status).toBe('resumed')
    expect((await runState('refund-single', runId)).result).toMatchObject({
      outcome: 'declined',
      reason: 'cancelled',
      answer: { status: 'cancelled', value: null, approved: false },
    })
    expect(await countEffects(env.dir, 'refund')).toBe(before)
  })

  it('treats a select answer of yes as data and never reaches the refund', async () => {
    const before = await countEffects(env.dir, 'refund')
    const { runId, decisionId } = await startSingle({
      operationId: 'refund:o-select',
      question: 'Which refund?',
      type: 'select',
      options: ['yes', 'store credit'],
    })
    await env.client.decisions.answer(decisionId, 'yes')
    expect((await app.dispatcher.resumeDecision(decisionId)).status).toBe('resumed')
    expect((await runState('refund-single', runId)).result).toMatchObject({
      outcome: 'declined',
      reason: 'not_approved',
      answer: { status: 'answered', value: 'yes', approved: false },
    })
    expect(await countEffects(env.dir, 'refund')).toBe(before)
  })

  it('treats an input answer of yes as data and never reaches the refund', async () => {
    const before = await countEffects(env.dir, 'refund')
    const { runId, decisionId } = await startSingle({
      operationId: 'refund:o-input',
      question: 'Type yes to refund',
      type: 'input',
    })
    await env.client.decisions.answer(decisionId, 'yes')
    expect((await app.dispatcher.resumeDecision(decisionId)).status).toBe('resumed')
    expect((await runState('refund-single', runId)).result).toMatchObject({
      outcome: 'declined',
      reason: 'not_approved',
      answer: { status: 'answered', value: 'yes', approved: false },
    })
    expect(await countEffects(env.dir, 'refund')).toBe(before)
  })

  it('leaves a still-pending decision suspended and reports pending', async () => {
    const { runId, decisionId } = await startSingle({
      operationId: 'refund:o-wait',
      question: 'Refund o-wait?',
    })
    expect((await app.dispatcher.resumeDecision(decisionId)).status).toBe('pending')
    expect((await runState('refund-single', runId)).status).toBe('suspended')
    expect((await app.store.get(decisionId))?.state).toBe('pending')
    await env.client.decisions.cancel(decisionId)
    await app.dispatcher.resumeDecision(decisionId)
  })

  it('lands a re-run of the first pass on the same decision and binding', async () => {
    const input = { operationId: 'refund:o-rerun', question: 'Refund o-rerun?' }
    const { runId, decisionId } = await startSingle(input)
    const workflow = app.mastra.getWorkflowById('refund-single' as never) as unknown as {
      createRun(o: { runId: string }): Promise<{ restart(): Promise<{ status: string }> }>
    }
    // Simulate a crash mid-first-pass: the run is left running, restart re-runs the step.
    const storage = await app.mastra.getStorage()!.getStore('workflows')
    await storage!.updateWorkflowState({ workflowName: 'refund-single', runId, opts: { status: 'running' } })
    const restarted = await (await workflow.createRun({ runId })).restart()
    expect(restarted.status).toBe('suspended')
    const reviews = (await app.store.listByState('pending', { limit: 1000 })).filter((r) => r.runId === runId)
    expect(reviews.map((r) => r.decisionId)).toEqual([decisionId])
    await env.client.decisions.cancel(decisionId)
    expect((await app.dispatcher.resumeDecision(decisionId)).status).toBe('resumed')
  })
})

describe('dispatcher callbacks', () => {
  it('resumes exactly once for duplicate, concurrent and replayed callbacks', async () => {
    const before = await countEffects(env.dir, 'refund')
    const { runId, decisionId } = await startSingle({
      operationId: 'refund:o-dup',
      question: 'Refund o-dup?',
    })
    await env.client.decisions.answer(decisionId, 'yes')
    const concurrent = await Promise.all(
      Array.from({ length: 6 }, () =>
        app.dispatcher.handleCallback(signedCallback(decisionId, 'answered', 'yes')),
      ),
    )
    expect(concurrent.every((response) => response.status === 200 || response.status === 503)).toBe(true)
    const bodies = await Promise.all(
      concurrent.map((response) => response.json() as Promise<{ status: string }>),
    )
    expect(bodies.filter((body) => body.status === 'resumed')).toHaveLength(1)
    const replay = await app.dispatcher.handleCallback(signedCallback(decisionId, 'answered', 'yes'))
    expect(replay.status).toBe(200)
    expect(((await replay.json()) as { status: string }).status).toBe('duplicate')
    expect((await runState('refund-single', runId)).status).toBe('success')
    expect(await countEffects(env.dir, 'refund')).toBe(before + 1)
    expect((await app.store.listReceipts(decisionId)).length).toBe(7)
  })

  it('answers 401 to a forged signature and changes nothing', async () => {
    const before = await countEffects(env.dir, 'refund')
    const { runId, decisionId } = await startSingle({
      operationId: 'refund:o-forged',
      question: 'Refund o-forged?',
    })
    await env.client.decisions.answer(decisionId, 'yes')
    const forged = await app.dispatcher.handleCallback(
      signedCallback(decisionId, 'answered', 'yes', 'not-the-secret'),
    )
    expect(forged.status).toBe(401)
    expect((await app.store.get(decisionId))?.state).toBe('pending')
    expect(await app.store.listReceipts(decisionId)).toEqual([])
    expect((await runState('refund-single', runId)).status).toBe('suspended')
    expect(await countEffects(env.dir, 'refund')).toBe(before)
    // The real answer is still applied later, by reconcile.
    await app.dispatcher.reconcile({ limit: 1000 })
    expect(await countEffects(env.dir, 'refund')).toBe(before + 1)
  })

  it('never takes the callback body as the answer: a "yes" callback for a denied decision declines', async () => {
    const before = await countEffects(env.dir, 'refund')
    const { runId, decisionId } = await startSingle({
      operationId: 'refund:o-lie',
      question: 'Refund o-lie?',
    })
    await env.client.decisions.answer(decisionId, 'no')
    const response = await app.dispatcher.handleCallback(signedCallback(decisionId, 'answered', 'yes'))
    expect(response.status).toBe(200)
    expect((await runState('refund-single', runId)).result).toMatchObject({
      outcome: 'declined',
      reason: 'denied',
    })
    expect(await countEffects(env.dir, 'refund')).toBe(before)
  })

  it('answers 503 without claiming while the run is not suspended yet, then resumes once it is', async () => {
    const before = await countEffects(env.dir, 'refund')
    const { runId, decisionId } = await startSingle({
      operationId: 'refund:o-race',
      question: 'Refund o-race?',
    })
    await env.client.decisions.answer(decisionId, 'yes')
    // The step saved its review and returned, but Mastra has not persisted the suspension yet.
    const storage = await app.mastra.getStorage()!.getStore('workflows')
    await storage!.updateWorkflowState({ workflowName: 'refund-single', runId, opts: { status: 'running' } })
    const early = await app.dispatcher.handleCallback(signedCallback(decisionId, 'answered', 'yes'))
    expect(early.status).toBe(503)
    expect(((await early.json()) as { status: string }).status).toBe('not_suspended_yet')
    expect((await app.store.get(decisionId))?.state).toBe('pending')
    await storage!.updateWorkflowState({
      workflowName: 'refund-single',
      runId,
      opts: { status: 'suspended' },
    })
    const retried = await app.dispatcher.handleCallback(signedCallback(decisionId, 'answered', 'yes'))
    expect(retried.status).toBe(200)
    expect((await runState('refund-single', runId)).status).toBe('success')
    expect(await countEffects(env.dir, 'refund')).toBe(before + 1)
  })

  it('answers 503 for a callback whose review is not saved yet, and for a pending decision', async () => {
    const unknown = await app.dispatcher.handleCallback(signedCallback('dec_not_saved', 'answered', 'yes'))
    expect(unknown.status).toBe(503)
    const { decisionId } = await startSingle({ operationId: 'refund:o-early', question: 'Refund o-early?' })
    const early = await app.dispatcher.handleCallback(signedCallback(decisionId, 'answered', 'yes'))
    expect(early.status).toBe(503)
    expect((await app.store.get(decisionId))?.state).toBe('pending')
    await env.client.decisions.cancel(decisionId)
    await app.dispatcher.resumeDecision(decisionId)
  })
})

describe('one read of the answer per resume', () => {
  type Resumable = {
    resume(p: { label: string; resumeData: unknown }): Promise<{ status: string }>
  }
  const resumeDirectly = async (runId: string, label: string, resumeData: unknown) => {
    const workflow = app.mastra.getWorkflowById('refund-single' as never) as unknown as {
      createRun(o: { runId: string }): Promise<Resumable>
    }
    return (await workflow.createRun({ runId })).resume({ label, resumeData })
  }

  it("resumes with the dispatcher's own verified read: a step whose read would fail is never asked to read", async () => {
    // Read #1 is the dispatcher's; a second read of this answer would throw.
    const once = buildApp(env, { failGets: [2] })
    try {
      const before = await countEffects(env.dir, 'refund')
      const { runId, decisionId } = await startSingle({ operationId: 'refund:o-once', question: 'Refund?' })
      await env.client.decisions.answer(decisionId, 'yes')
      expect(await once.dispatcher.resumeDecision(decisionId)).toMatchObject({
        status: 'resumed',
        runStatus: 'success',
      })
      expect((await runState('refund-single', runId)).result).toEqual({
        refunded: true,
        operationId: 'refund:o-once',
      })
      expect(await countEffects(env.dir, 'refund')).toBe(before + 1)
    } finally {
      await once.close()
    }
  })

  it("refuses resume data copied from a dispatcher's resume and replayed through run.resume: the service holds no such answer", async () => {
    const before = await countEffects(env.dir, 'refund')
    const real = await startSingle({ operationId: 'refund:o-copied', question: 'Refund o-copied?' })
    await env.client.decisions.answer(real.decisionId, 'yes')
    expect((await app.dispatcher.resumeDecision(real.decisionId)).status).toBe('resumed')
    // What the dispatcher sent, as Mastra persisted it: the verified yes and its proof.
    const snapshot = await (await app.mastra.getStorage()!.getStore('workflows'))!.loadWorkflowSnapshot({
      workflowName: 'refund-single',
      runId: real.runId,
    })
    const context = (snapshot?.context ?? {}) as Record<string, { resumePayload?: Record<string, unknown> }>
    const copied = context.approve?.resumePayload
    expect(copied).toMatchObject({ answer: 'yes', status: 'answered', proof: expect.any(String) })
    expect(await countEffects(env.dir, 'refund')).toBe(before + 1)

    const victim = await startSingle({ operationId: 'refund:o-victim', question: 'Refund o-victim?' })
    // Not answered yet: the copy (proof included) is refused, the step keeps waiting.
    const label = victim.decisionId
    expect((await resumeDirectly(victim.runId, label, copied)).status).toBe('suspended')
    // Denied on the phone: a replayed yes is still refused.
    await env.client.decisions.answer(victim.decisionId, 'no')
    expect((await resumeDirectly(victim.runId, label, copied)).status).toBe('suspended')
    expect(await countEffects(env.dir, 'refund')).toBe(before + 1)
    // The real answer still goes through, once, as a decline.
    expect((await app.dispatcher.resumeDecision(victim.decisionId)).status).toBe('resumed')
    expect((await runState('refund-single', victim.runId)).result).toMatchObject({
      outcome: 'declined',
      reason: 'denied',
    })
    expect(await countEffects(env.dir, 'refund')).toBe(before + 1)
  })
})

describe('dispatcher hook', () => {
  it('tells onResumed about each resumed decision once; a throwing hook does not undo the resume', async () => {
    const events: PusharyResumedEvent[] = []
    const dispatcher = createPusharyDispatcher({
      mastra: app.mastra,
      client: env.client,
      store: app.store,
      onResumed: (event) => {
        events.push(event)
        throw new Error('hook failed')
      },
    })
    const { decisionId } = await startSingle({ operationId: 'refund:o-hook', question: 'Refund o-hook?' })
    await env.client.decisions.answer(decisionId, 'yes')
    const result = await dispatcher.resumeDecision(decisionId)
    expect(result).toMatchObject({ status: 'resumed', hookError: 'hook failed', runStatus: 'success' })
    expect((await dispatcher.resumeDecision(decisionId)).status).toBe('duplicate')
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({
      review: { decisionId, operationId: 'refund:o-hook' },
      answer: { approved: true },
      runResult: { refunded: true, operationId: 'refund:o-hook' },
    })
    expect((await app.store.get(decisionId))?.state).toBe('completed')
  })
})

describe('crash recovery', () => {
  it('never restarts a run that died inside the protected step: the review ends uncertain for the operator', async () => {
    const before = await countEffects(env.dir, 'refund')
    const { runId, decisionId } = await startSingle({
      operationId: 'refund:o-crash',
      question: 'Refund o-crash?',
    })
    await env.client.decisions.answer(decisionId, 'yes')
    await expect(
      runFixture(['resume-decisions', env.dir, JSON.stringify([decisionId])], {
        env: { PUSHARY_TEST_CRASH_IN_REFUND: 'refund:o-crash' },
      }),
    ).rejects.toThrow(/SIGKILL/)
    // The claim is visible and the run is stuck: nothing retries it automatically.
    expect((await app.store.get(decisionId))?.state).toBe('resuming')
    expect((await runState('refund-single', runId)).status).toBe('running')
    expect((await app.dispatcher.resumeDecision(decisionId)).status).toBe('busy')

    // The approval had returned, so the refund may have run: recovery refuses to guess.
    const recovered = await recoverAfterLease(app, decisionId)
    expect(recovered).toMatchObject({
      status: 'uncertain',
      reason: expect.stringMatching(/approval step completed/),
    })
    expect((await runState('refund-single', runId)).status).toBe('running')
    expect((await app.store.get(decisionId))?.state).toBe('uncertain')
    expect(await countEffects(env.dir, 'refund')).toBe(before)
    // The operator checks the business system (no refund receipt) and closes it.
    await app.store.recover(decisionId, 'stale', 'no refund receipt for o-crash; run cancelled')
    expect((await app.dispatcher.recover(decisionId)).status).toBe('stale')
    expect(await countEffects(env.dir, 'refund')).toBe(before)
  })
})
