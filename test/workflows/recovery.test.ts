/**
 * Exactly-once under crashes and recovery: real Mastra on LibSQL files, the
 * local decision service over loopback, child OS processes killed with
 * SIGKILL at chosen points, fresh processes recovering.
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPusharyDispatcher } from '../../src/agents/dispatcher.js'
import { whileHoldingClaim } from '../../src/resume/claim-lease.js'
import type { PusharyReview } from '../../src/store/review-schema.js'
import {
  countEffects,
  createTestEnv,
  listEffects,
  runFixture,
  type TestEnv,
  waitFor,
} from '../helpers/mastra.js'
import { buildApp, CLAIM_LEASE_MS, recoverAfterLease, type TestApp } from './fixtures/app.js'

let env: TestEnv
let app: TestApp

beforeAll(async () => {
  env = await createTestEnv('recovery')
  app = buildApp(env)
})

afterAll(async () => {
  await app?.close()
  await env?.close()
})

/** Trials for the cross-process races; raise with PUSHARY_TRIALS for a longer soak. */
const TRIALS = Number(process.env.PUSHARY_TRIALS ?? 5)

type RunView = { status: string; result?: unknown }
type Workflow = {
  createRun(o?: { runId?: string }): Promise<{
    runId: string
    start(p: { inputData: unknown }): Promise<{ status: string }>
    resume(p: { label?: string; step?: string; resumeData: unknown }): Promise<{ status: string }>
  }>
  getWorkflowRunById(id: string): Promise<RunView | null>
}

function workflow(id: string): Workflow {
  return app.mastra.getWorkflowById(id as never) as unknown as Workflow
}

async function reviewsOf(runId: string): Promise<PusharyReview[]> {
  const all: PusharyReview[] = []
  for (const state of ['pending', 'resuming', 'completed', 'uncertain', 'stale'] as const) {
    all.push(...(await app.store.listByState(state, { limit: 1000 })))
  }
  return all.filter((review) => review.runId === runId)
}

async function startIn(
  workflowId: string,
  input: unknown,
): Promise<{ runId: string; decisionIds: string[] }> {
  const run = await workflow(workflowId).createRun()
  expect((await run.start({ inputData: input })).status).toBe('suspended')
  const reviews = await reviewsOf(run.runId)
  const order = (review: PusharyReview) =>
    review.target === 'workflow-step' && Array.isArray(input)
      ? input.findIndex((item: { operationId: string }) => item.operationId === review.operationId)
      : 0
  return {
    runId: run.runId,
    decisionIds: reviews.sort((a, b) => order(a) - order(b)).map((r) => r.decisionId),
  }
}

function killed(args: string[], crash: Record<string, string>) {
  return expect(runFixture(args, { env: crash })).rejects.toThrow(/SIGKILL/)
}

async function lastReason(decisionId: string): Promise<string | null> {
  return (await app.store.history(decisionId)).at(-1)?.reason ?? null
}

describe('recovery never restarts past a completed approval', () => {
  it('leaves the review uncertain when the process died after the refund ran, and never refunds twice', async () => {
    const op = `refund:after-${randomUUID()}`
    const { runId, decisionIds } = await startIn('refund-single', { operationId: op, question: 'Refund?' })
    const decisionId = decisionIds[0] as string
    await env.client.decisions.answer(decisionId, 'yes')
    await killed(['resume-decisions', env.dir, JSON.stringify([decisionId])], {
      PUSHARY_TEST_CRASH_AFTER_REFUND: op,
    })
    expect(await countEffects(env.dir, 'refund')).toBeGreaterThan(0)
    const before = (await listEffects(env.dir)).filter((effect) => effect.key === op).length
    expect(before).toBe(1)

    const [recovered] = await runFixture<{ status: string; reason?: string }[]>([
      'recover',
      env.dir,
      JSON.stringify([decisionId]),
    ])
    expect(recovered?.status).toBe('uncertain')
    expect(recovered?.reason).toMatch(/approval step completed/)
    expect((await app.store.get(decisionId))?.state).toBe('uncertain')
    expect((await workflow('refund-single').getWorkflowRunById(runId))?.status).toBe('running')
    // Mastra's boot-time restart does not re-drive it either (the workflow opts out).
    await runFixture(['restart-all', env.dir])
    expect((await listEffects(env.dir)).filter((effect) => effect.key === op)).toHaveLength(1)
  })

  it('leaves a foreach → gate → foreach(refund) run uncertain when it died inside the protected foreach', async () => {
    const tag = randomUUID()
    const items = [0, 1].map((index) => ({ operationId: `fe-${tag}-${index}`, question: `Refund ${index}?` }))
    const { decisionIds } = await startIn('foreach-gated', items)
    for (const id of decisionIds) await env.client.decisions.answer(id, 'yes')
    expect((await app.dispatcher.resumeDecision(decisionIds[0] as string)).status).toBe('resumed')
    await killed(['resume-decisions', env.dir, JSON.stringify([decisionIds[1]])], {
      PUSHARY_TEST_CRASH_AFTER_REFUND_ITEM: `fe-${tag}-0`,
    })
    const [recovered] = await runFixture<{ status: string }[]>([
      'recover',
      env.dir,
      JSON.stringify([decisionIds[1]]),
    ])
    expect(recovered?.status).toBe('uncertain')
    await runFixture(['restart-all', env.dir])
    const keys = (await listEffects(env.dir)).map((effect) => effect.key).filter((key) => key.includes(tag))
    expect(keys).toEqual([`fe-${tag}-0`])
  })
})

describe('recovery of a crash before anything past the approval ran', () => {
  it('reports recovery_needed for a crash-left claim, then recovery applies the answer once', async () => {
    const op = `refund:claim-${randomUUID()}`
    const { decisionIds } = await startIn('refund-single', { operationId: op, question: 'Refund?' })
    const decisionId = decisionIds[0] as string
    await env.client.decisions.answer(decisionId, 'yes')
    await killed(['resume-decisions', env.dir, JSON.stringify([decisionId])], {
      PUSHARY_TEST_CRASH_AFTER_CLAIM: '1',
    })
    expect((await app.store.get(decisionId))?.state).toBe('resuming')
    // Busy while the claim might still be alive; once its lease ran out the
    // dispatcher says recovery is needed, so a retry loop stops spinning.
    const settled = await waitFor(async () => {
      const result = await app.dispatcher.resumeDecision(decisionId)
      return result.status === 'busy' ? undefined : result
    })
    expect(settled.status).toBe('recovery_needed')
    expect((await app.store.get(decisionId))?.state).toBe('resuming')
    const [recovered] = await runFixture<{ status: string }[]>([
      'recover',
      env.dir,
      JSON.stringify([decisionId]),
    ])
    expect(recovered?.status).toBe('resumed')
    expect((await listEffects(env.dir)).filter((effect) => effect.key === op)).toHaveLength(1)
    expect((await app.dispatcher.recover(decisionId)).status).toBe('duplicate')
  })

  it(`lets exactly one of several simultaneous recoverers act (${TRIALS} trials, 3 processes each)`, async () => {
    const outcomes: string[][] = []
    for (let trial = 0; trial < TRIALS; trial++) {
      const op = `refund:race-${trial}-${randomUUID()}`
      const { runId, decisionIds } = await startIn('refund-single', { operationId: op, question: 'Refund?' })
      const decisionId = decisionIds[0] as string
      await env.client.decisions.answer(decisionId, 'yes')
      // Killed inside the approval step's own resume pass (after Mastra's
      // resume claim): the run is left `running`, the review `resuming`.
      await killed(['resume-decisions', env.dir, JSON.stringify([decisionId])], {
        PUSHARY_TEST_CRASH_IN_RESUME: '1',
      })
      expect((await workflow('refund-single').getWorkflowRunById(runId))?.status).toBe('running')
      const results = await Promise.all(
        [0, 1, 2].map(() =>
          runFixture<{ status: string }[]>(['recover', env.dir, JSON.stringify([decisionId])]),
        ),
      )
      outcomes.push(results.map((result) => result[0]?.status ?? 'none'))
      expect((await listEffects(env.dir)).filter((effect) => effect.key === op)).toHaveLength(1)
      expect((await app.store.get(decisionId))?.state).toBe('completed')
    }
    for (const trial of outcomes) expect(trial.filter((status) => status === 'resumed')).toHaveLength(1)
  }, 600_000)

  it('never takes over a claim whose holder keeps it alive, and takes it over once the holder is gone', async () => {
    const op = `refund:live-${randomUUID()}`
    const { decisionIds } = await startIn('refund-single', { operationId: op, question: 'Refund?' })
    const decisionId = decisionIds[0] as string
    await env.client.decisions.answer(decisionId, 'yes')
    const review = await app.store.get(decisionId)
    expect(await app.store.claim(decisionId, review?.runId as string)).toBe('claimed')
    // A live holder, slow but alive, for three leases.
    const holding = whileHoldingClaim(app.store, decisionId, CLAIM_LEASE_MS, async () => {
      const attempts = []
      for (let index = 0; index < 6; index++) {
        await new Promise((resolve) => setTimeout(resolve, CLAIM_LEASE_MS / 2))
        attempts.push(await app.dispatcher.recover(decisionId))
      }
      return attempts
    })
    const attempts = await holding
    expect(attempts.map((attempt) => attempt.status)).toEqual(Array(6).fill('busy'))
    expect((await app.store.history(decisionId)).map((entry) => entry.event)).toEqual([null, 'CLAIM'])
    // The holder is gone without finishing (as after a crash): once the lease
    // runs out, exactly one recovery takes over and applies the answer once.
    expect((await recoverAfterLease(app, decisionId)).status).toBe('resumed')
    expect((await listEffects(env.dir)).filter((effect) => effect.key === op)).toHaveLength(1)
  })

  it('returns a review whose step could not re-read its decision to pending, and the next round resumes it', async () => {
    // The steps read through a client object of their own, so they verify
    // the answer themselves (the dispatcher's read is not handed to them);
    // their first read fails.
    const flaky = buildApp(env, { stepFailGets: [1] })
    try {
      const op = `refund:flaky-${randomUUID()}`
      const run = await (
        flaky.mastra.getWorkflowById('refund-single' as never) as unknown as Workflow
      ).createRun()
      expect((await run.start({ inputData: { operationId: op, question: 'Refund?' } })).status).toBe(
        'suspended',
      )
      const [review] = await reviewsOf(run.runId)
      const decisionId = review?.decisionId as string
      await env.client.decisions.answer(decisionId, 'yes')
      const first = await flaky.dispatcher.resumeDecision(decisionId)
      expect(first).toMatchObject({ status: 'pending', reason: expect.stringMatching(/still suspended/) })
      expect((await app.store.get(decisionId))?.state).toBe('pending')
      const history = await app.store.history(decisionId)
      expect(history.at(-1)).toMatchObject({ from: 'resuming', to: 'pending', event: 'NOT_APPLIED' })
      const report = await flaky.dispatcher.reconcile({ limit: 1000 })
      expect(report.results).toContainEqual(expect.objectContaining({ decisionId, status: 'resumed' }))
      expect((await listEffects(env.dir)).filter((effect) => effect.key === op)).toHaveLength(1)
    } finally {
      await flaky.close()
    }
  })

  it('finishes a foreach after a crash mid-resume without asking an approved item again', async () => {
    const tag = randomUUID()
    const items = [0, 1, 2].map((index) => ({
      operationId: `mid-${tag}-${index}`,
      question: `Refund ${index}?`,
    }))
    const { runId, decisionIds } = await startIn('foreach-gated', items)
    for (const id of decisionIds) await env.client.decisions.answer(id, 'yes')
    expect((await app.dispatcher.resumeDecision(decisionIds[0] as string)).status).toBe('resumed')
    await killed(['resume-decisions', env.dir, JSON.stringify([decisionIds[1]])], {
      PUSHARY_TEST_CRASH_IN_RESUME: '1',
    })
    expect((await recoverAfterLease(app, decisionIds[1] as string)).status).toBe('resumed')
    expect((await app.dispatcher.resumeDecision(decisionIds[2] as string)).status).toBe('resumed')
    expect((await workflow('foreach-gated').getWorkflowRunById(runId))?.status).toBe('success')
    const keys = (await listEffects(env.dir)).map((effect) => effect.key).filter((key) => key.includes(tag))
    expect(keys.sort()).toEqual(items.map((item) => item.operationId))
    const reviews = await reviewsOf(runId)
    expect(reviews.map((review) => review.state)).toEqual(['completed', 'completed', 'completed'])
  })

  it('restarts a run killed after creating its decision but before saving the review', async () => {
    const op = `refund:unsaved-${randomUUID()}`
    const runId = randomUUID()
    await killed(
      [
        'start',
        env.dir,
        JSON.stringify({
          workflowId: 'refund-single',
          input: { operationId: op, question: 'Refund?' },
          runId,
        }),
      ],
      { PUSHARY_TEST_CRASH_BEFORE_SAVE: '1' },
    )
    expect(await reviewsOf(runId)).toEqual([])
    const { decisions } = await env.client.decisions.list({ status: 'pending' })
    const decision = decisions.find((candidate) => candidate.context?.includes(runId))
    expect(decision).toBeDefined()
    const decisionId = decision?.decisionId as string
    await env.client.decisions.answer(decisionId, 'yes')
    expect((await app.dispatcher.resumeDecision(decisionId)).status).toBe('unknown')
    const [recovered] = await runFixture<{ status: string }[]>([
      'recover',
      env.dir,
      JSON.stringify([decisionId]),
    ])
    expect(recovered?.status).toBe('resumed')
    expect((await listEffects(env.dir)).filter((effect) => effect.key === op)).toHaveLength(1)
  })

  it('restarts a run killed after saving its review but before Mastra persisted the suspension', async () => {
    const op = `refund:unsuspended-${randomUUID()}`
    const runId = randomUUID()
    await killed(
      [
        'start',
        env.dir,
        JSON.stringify({
          workflowId: 'refund-single',
          input: { operationId: op, question: 'Refund?' },
          runId,
        }),
      ],
      { PUSHARY_TEST_CRASH_AFTER_SAVE: '1' },
    )
    const [review] = await reviewsOf(runId)
    const decisionId = review?.decisionId as string
    await env.client.decisions.answer(decisionId, 'yes')
    expect((await app.dispatcher.resumeDecision(decisionId)).status).toBe('not_suspended_yet')
    expect((await app.dispatcher.recover(decisionId)).status).toBe('resumed')
    expect((await listEffects(env.dir)).filter((effect) => effect.key === op)).toHaveLength(1)
  })
})

describe('what a review records', () => {
  it('records completed, not stale, when a verified direct resume won the race', async () => {
    const op = `refund:direct-${randomUUID()}`
    const { runId, decisionIds } = await startIn('refund-single', { operationId: op, question: 'Refund?' })
    const decisionId = decisionIds[0] as string
    await env.client.decisions.answer(decisionId, 'yes')
    const run = await workflow('refund-single').createRun({ runId })
    await run.resume({ label: decisionId, resumeData: { answer: 'yes', status: 'answered' } })
    const result = await app.dispatcher.resumeDecision(decisionId)
    expect(result).toMatchObject({
      status: 'duplicate',
      reason: expect.stringMatching(/outside the dispatcher/),
    })
    expect((await app.store.get(decisionId))?.state).toBe('completed')
    expect(await lastReason(decisionId)).toMatch(/outside the dispatcher/)
    expect((await listEffects(env.dir)).filter((effect) => effect.key === op)).toHaveLength(1)
  })

  it('keeps an answer pending when this process lacks the workflow, answers the callback 503, and a correct worker resumes it', async () => {
    const op = `refund:misconfigured-${randomUUID()}`
    const { decisionIds } = await startIn('refund-single', { operationId: op, question: 'Refund?' })
    const decisionId = decisionIds[0] as string
    await env.client.decisions.answer(decisionId, 'yes')
    const { Mastra } = await import('@mastra/core/mastra')
    const bare = new Mastra({ storage: app.mastra.getStorage(), workflows: {}, logger: false })
    const wrong = createPusharyDispatcher({ mastra: bare, client: env.client, store: app.store })
    const result = await wrong.resumeDecision(decisionId)
    expect(result).toMatchObject({ status: 'misconfigured', reason: expect.stringMatching(/refund-single/) })
    expect((await app.store.get(decisionId))?.state).toBe('pending')
    expect((await app.dispatcher.resumeDecision(decisionId)).status).toBe('resumed')
    expect((await listEffects(env.dir)).filter((effect) => effect.key === op)).toHaveLength(1)
  })

  it('lets an operator reopen a review that was wrongly ended stale, with the reason kept', async () => {
    const op = `refund:reopen-${randomUUID()}`
    const { decisionIds } = await startIn('refund-single', { operationId: op, question: 'Refund?' })
    const decisionId = decisionIds[0] as string
    await env.client.decisions.answer(decisionId, 'yes')
    expect(await app.store.claim(decisionId, (await app.store.get(decisionId))?.runId as string)).toBe(
      'claimed',
    )
    await app.store.finish(decisionId, 'stale', 'an old worker had no such workflow')
    expect((await app.dispatcher.resumeDecision(decisionId)).status).toBe('stale')
    await app.store.recover(
      decisionId,
      'pending',
      'ticket 42: the worker was misconfigured; the run still waits',
    )
    expect((await app.dispatcher.resumeDecision(decisionId)).status).toBe('resumed')
    const events = (await app.store.history(decisionId)).map((entry) => entry.event)
    expect(events).toEqual([null, 'CLAIM', 'STALE_DETECTED', 'OPERATOR_REOPENED', 'CLAIM', 'RESUMED'])
    expect((await listEffects(env.dir)).filter((effect) => effect.key === op)).toHaveLength(1)
  })
})

describe("Mastra's boot-time restart", () => {
  it('is opted out of by every workflow the package builds', async () => {
    const {
      createPusharyApprovalWorkflow,
      createPusharyForeachApprovalWorkflow,
      createPusharyBatchApprovalWorkflow,
    } = await import('../../src/workflows/approval-workflows.js')
    const config = { client: env.client, store: app.store }
    for (const built of [
      createPusharyApprovalWorkflow(config, { workflowId: 'opt-out-single' }),
      createPusharyForeachApprovalWorkflow(config, { workflowId: 'opt-out-foreach' }),
      createPusharyBatchApprovalWorkflow({
        workflowId: 'opt-out-batch',
        childWorkflowId: 'opt-out-single',
        store: app.store,
      }),
    ]) {
      expect(
        (built as unknown as { options: { autoRestartActiveRuns?: boolean } }).options.autoRestartActiveRuns,
      ).toBe(false)
    }
  })

  it('refuses the first run of a workflow with an approval step that does not opt out, naming the fix', async () => {
    const { Mastra } = await import('@mastra/core/mastra')
    const { ConsoleLogger } = await import('@mastra/core/logger')
    const { createWorkflow } = await import('@mastra/core/workflows')
    const { pusharyApprovalStep } = await import('../../src/steps/approval-step.js')
    const { pusharyApprovalStepInputSchema } = await import('../../src/steps/approval-schemas.js')
    const { z } = await import('zod/v4')
    const warnings: string[] = []
    class Capture extends ConsoleLogger {
      override warn(message: string): void {
        warnings.push(message)
      }
    }
    const unsafe = createWorkflow({
      id: 'unsafe-restart',
      inputSchema: pusharyApprovalStepInputSchema,
      outputSchema: z.unknown(),
    })
      .then(pusharyApprovalStep({ client: env.client, store: app.store }, { externalId: 'customer_1' }))
      .commit()
    const mastra = new Mastra({
      storage: app.mastra.getStorage(),
      workflows: { unsafe },
      logger: new Capture(),
    })
    const run = await (mastra.getWorkflowById('unsafe-restart' as never) as unknown as Workflow).createRun()
    const result = (await run.start({
      inputData: { operationId: `warn-${randomUUID()}`, question: 'Refund?' },
    })) as { status: string; error?: { message?: string } }
    expect(result.status).toBe('failed')
    expect(result.error?.message).toMatch(/unsafe-restart.*autoRestartActiveRuns: false/s)
    expect(warnings.join('\n')).not.toMatch(/restartAllActiveWorkflowRuns/)
  })
})
