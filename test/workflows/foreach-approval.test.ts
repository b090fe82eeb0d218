import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isPusharyResumeError } from '../../src/resume/resume-error.js'
import { resumePusharyApproval } from '../../src/resume/resume-guard.js'
import { countEffects, createTestEnv, listEffects, runFixture, type TestEnv } from '../helpers/mastra.js'
import { buildApp, EXTERNAL_ID, type TestApp } from './fixtures/app.js'

let env: TestEnv
let app: TestApp

beforeAll(async () => {
  env = await createTestEnv('foreach')
  app = buildApp(env)
})

afterAll(async () => {
  await app?.close()
  await env?.close()
})

type RunView = { status: string; result?: unknown; resumeLabels?: Record<string, { foreachIndex?: number }> }

function workflow(id: string) {
  return app.mastra.getWorkflowById(id as never) as unknown as {
    createRun(): Promise<{ runId: string; start(p: { inputData: unknown }): Promise<{ status: string }> }>
    getWorkflowRunById(id: string): Promise<RunView | null>
  }
}

async function startRun(workflowId: string, items: unknown[]) {
  const run = await workflow(workflowId).createRun()
  expect((await run.start({ inputData: items })).status).toBe('suspended')
  return run.runId
}

/** decisionId by foreach index, read from the live resume labels. */
async function labelsByIndex(workflowId: string, runId: string): Promise<Map<number, string>> {
  const state = await workflow(workflowId).getWorkflowRunById(runId)
  const map = new Map<number, string>()
  for (const [label, target] of Object.entries(state?.resumeLabels ?? {})) {
    if (typeof target.foreachIndex === 'number') map.set(target.foreachIndex, label)
  }
  return map
}

async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise
  } catch (error) {
    if (isPusharyResumeError(error)) return error.code
    throw error
  }
  throw new Error('the resume was not refused')
}

const threeTypes = [
  { operationId: 'op-confirm', question: 'Refund order 1?', type: 'confirm' },
  { operationId: 'op-select', question: 'Which way?', type: 'select', options: ['yes', 'store credit'] },
  { operationId: 'op-input', question: 'Say yes', type: 'input' },
]

describe('foreach over the approval step', () => {
  it('keeps confirm, select and input distinct across processes: approvals [true, false, false] for three yes answers', async () => {
    const started = await runFixture<{ runId: string; status: string }>([
      'start',
      env.dir,
      JSON.stringify({ workflowId: 'foreach-plain', input: threeTypes }),
    ])
    expect(started.status).toBe('suspended')
    const labels = await labelsByIndex('foreach-plain', started.runId)
    const decisionIds = [0, 1, 2].map((index) => labels.get(index))
    expect(new Set(decisionIds).size).toBe(3)
    for (const id of decisionIds) await env.client.decisions.answer(id!, 'yes')
    const before = (await env.client.decisions.list({ externalId: EXTERNAL_ID, limit: 100 })).decisions.length

    const report = await runFixture<{ resumed: number }>(['reconcile', env.dir, '{}'])
    expect(report.resumed).toBe(3)
    const state = await workflow('foreach-plain').getWorkflowRunById(started.runId)
    expect(state?.status).toBe('success')
    expect(state?.result).toEqual([
      { status: 'answered', value: 'yes', approved: true },
      { status: 'answered', value: 'yes', approved: false },
      { status: 'answered', value: 'yes', approved: false },
    ])
    const after = (await env.client.decisions.list({ externalId: EXTERNAL_ID, limit: 100 })).decisions.length
    expect(after).toBe(before)
    for (const id of decisionIds) expect((await app.store.get(id!))?.state).toBe('completed')
  })

  it('refuses an unnamed iteration, an unknown label, and unstarted or out-of-range indexes', async () => {
    const items = [0, 1, 2, 3, 4].map((index) => ({
      operationId: `guard-${index}`,
      question: `Code for item ${index}?`,
      type: 'input',
    }))
    const runId = await startRun('foreach-plain', items)
    const base = { mastra: app.mastra, workflowId: 'foreach-plain', runId }
    const data = { answer: 'x', status: 'answered' }
    expect(await refusal(resumePusharyApproval({ ...base, step: 'approve', resumeData: data }))).toBe(
      'ambiguous_iteration',
    )
    expect(await refusal(resumePusharyApproval({ ...base, label: 'dec_unknown', resumeData: data }))).toBe(
      'unknown_label',
    )
    // Concurrency 3: items 3 and 4 were never shown to anyone.
    expect(
      await refusal(resumePusharyApproval({ ...base, step: 'approve', forEachIndex: 3, resumeData: data })),
    ).toBe('iteration_not_suspended')
    expect(
      await refusal(resumePusharyApproval({ ...base, step: 'approve', forEachIndex: 9, resumeData: data })),
    ).toBe('iteration_not_suspended')
    const labels = await labelsByIndex('foreach-plain', runId)
    expect(
      await refusal(
        resumePusharyApproval({ ...base, label: labels.get(0)!, forEachIndex: 1, resumeData: data }),
      ),
    ).toBe('label_mismatch')
    expect((await workflow('foreach-plain').getWorkflowRunById(runId))?.status).toBe('suspended')

    // Each item gets its own answer, in any order; none ever sees another's.
    const answered = new Map<number, string>()
    for (const index of [2, 0, 4, 1, 3]) {
      const current = await labelsByIndex('foreach-plain', runId)
      const label = current.get(index)
      expect(label).toBeDefined()
      // The label is the decision ID; the step only accepts what the service holds.
      await env.client.decisions.answer(label!, `code-${index}`)
      const outcome = await resumePusharyApproval({
        ...base,
        label: label!,
        resumeData: { answer: `code-${index}`, status: 'answered' },
      })
      expect(outcome.target.forEachIndex).toBe(index)
      answered.set(index, label!)
      // A finished iteration is refused by label and by index.
      expect(await refusal(resumePusharyApproval({ ...base, label: label!, resumeData: data }))).toMatch(
        /unknown_label|run_not_suspended/,
      )
      expect(
        await refusal(
          resumePusharyApproval({ ...base, step: 'approve', forEachIndex: index, resumeData: data }),
        ),
      ).toMatch(/iteration_not_suspended|run_not_suspended/)
    }
    const state = await workflow('foreach-plain').getWorkflowRunById(runId)
    expect(state?.status).toBe('success')
    expect(state?.result).toEqual(
      [0, 1, 2, 3, 4].map((index) => ({ status: 'answered', value: `code-${index}`, approved: false })),
    )
  })

  it('keeps a confirm iteration suspended when resumed with an answer that is neither yes nor no', async () => {
    const runId = await startRun('foreach-plain', [{ operationId: 'maybe-1', question: 'Refund?' }])
    const labels = await labelsByIndex('foreach-plain', runId)
    const outcome = await resumePusharyApproval({
      mastra: app.mastra,
      workflowId: 'foreach-plain',
      runId,
      label: labels.get(0)!,
      resumeData: { answer: 'maybe', status: 'answered' },
    })
    expect(outcome.stillSuspended).toBe(true)
    expect((await workflow('foreach-plain').getWorkflowRunById(runId))?.status).toBe('suspended')
    await env.client.decisions.answer(labels.get(0)!, 'no')
    const done = await resumePusharyApproval({
      mastra: app.mastra,
      workflowId: 'foreach-plain',
      runId,
      label: labels.get(0)!,
      resumeData: { answer: 'no' },
    })
    expect(done.result.status).toBe('success')
    expect(done.result.result).toEqual([{ status: 'answered', value: 'no', approved: false }])
  })

  it('refuses resume data the service does not hold: a forged yes keeps the item waiting', async () => {
    const runId = await startRun('foreach-plain', [
      { operationId: 'forged-1', question: 'Delete account 7?' },
    ])
    const label = (await labelsByIndex('foreach-plain', runId)).get(0)!
    const forge = (resumeData: { answer: string | null; status?: 'answered' | 'expired' | 'cancelled' }) =>
      resumePusharyApproval({ mastra: app.mastra, workflowId: 'foreach-plain', runId, label, resumeData })

    // Straight through Mastra's resume API while the person has not answered.
    expect((await forge({ answer: 'yes', status: 'answered' })).stillSuspended).toBe(true)
    await env.client.decisions.answer(label, 'no')
    // The person said no: a resume claiming yes is still refused.
    expect((await forge({ answer: 'yes' })).stillSuspended).toBe(true)
    expect((await forge({ answer: null, status: 'expired' })).stillSuspended).toBe(true)
    const done = await forge({ answer: 'no', status: 'answered' })
    expect(done.result.result).toEqual([{ status: 'answered', value: 'no', approved: false }])
  })

  it('lets only approved items reach the protected step, answered in any order from two processes', async () => {
    const items = [0, 1, 2].map((index) => ({
      operationId: `gated-${index}`,
      question: `Refund item ${index}?`,
    }))
    const runId = await startRun('foreach-gated', items)
    const labels = await labelsByIndex('foreach-gated', runId)
    await env.client.decisions.answer(labels.get(2)!, 'yes')
    await env.client.decisions.answer(labels.get(0)!, 'no')
    await env.client.decisions.cancel(labels.get(1)!)
    // Two processes race on different iterations of one run; the package serializes them.
    const results = await Promise.all([
      runFixture<{ status: string }[]>(['resume-decisions', env.dir, JSON.stringify([labels.get(2)])]),
      runFixture<{ status: string }[]>(['resume-decisions', env.dir, JSON.stringify([labels.get(0)])]),
    ])
    const statuses = results.flat().map((result) => result.status)
    // The loser sees the run held by the other process (busy, or running = not suspended yet): retry later.
    expect(statuses.every((status) => ['resumed', 'busy', 'not_suspended_yet'].includes(status))).toBe(true)
    // Anything refused for now is picked up by reconcile.
    for (let round = 0; round < 5; round++) await app.dispatcher.reconcile({ limit: 1000 })
    const state = await workflow('foreach-gated').getWorkflowRunById(runId)
    expect(state?.status).toBe('success')
    expect((await listEffects(env.dir)).filter((effect) => effect.key.startsWith('gated-'))).toEqual([
      { kind: 'refund-item', key: 'gated-2' },
    ])
    for (const index of [0, 1, 2]) expect((await app.store.get(labels.get(index)!))?.state).toBe('completed')
    expect(await countEffects(env.dir, 'refund-item')).toBe(1)
  })

  it('serializes concurrent resumes of two iterations of one run inside one process', async () => {
    const items = [0, 1].map((index) => ({ operationId: `inproc-${index}`, question: `Refund ${index}?` }))
    const runId = await startRun('foreach-gated', items)
    const labels = await labelsByIndex('foreach-gated', runId)
    await env.client.decisions.answer(labels.get(0)!, 'yes')
    await env.client.decisions.answer(labels.get(1)!, 'yes')
    const results = await Promise.all([
      app.dispatcher.resumeDecision(labels.get(0)!),
      app.dispatcher.resumeDecision(labels.get(1)!),
    ])
    expect(results.map((result) => result.status)).toEqual(['resumed', 'resumed'])
    expect((await workflow('foreach-gated').getWorkflowRunById(runId))?.status).toBe('success')
    const keys = (await listEffects(env.dir))
      .map((effect) => effect.key)
      .filter((key) => key.startsWith('inproc-'))
    expect(keys.sort()).toEqual(['inproc-0', 'inproc-1'])
  })
})
