/**
 * The resume guard on real Mastra runs (LibSQL file storage), in process:
 * which target it picks when none is named, and each refusal it raises
 * before anything runs.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Mastra } from '@mastra/core/mastra'
import { createStep, createWorkflow } from '@mastra/core/workflows'
import { LibSQLStore } from '@mastra/libsql'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod/v4'
import { isPusharyResumeError } from '../../src/resume/resume-error.js'
import { resumePusharyApproval } from '../../src/resume/resume-guard.js'
import { loadRunSnapshot, type PusharyResumeRequest } from '../../src/resume/run-position.js'

const answerSchema = z.object({ answer: z.string() })
const resultSchema = z.object({ name: z.string(), answer: z.string() })

/** Suspends until resumed with an answer; the answer `again` suspends it once more. */
function askStep(id: string) {
  return createStep({
    id,
    inputSchema: z.object({}).passthrough(),
    outputSchema: resultSchema,
    resumeSchema: answerSchema,
    execute: async ({ resumeData, suspend }) => {
      if (resumeData === undefined || resumeData.answer === 'again') {
        return suspend({ asked: id }, { resumeLabel: `label-${id}` })
      }
      return { name: id, answer: resumeData.answer }
    },
  })
}

const itemSchema = z.object({ name: z.string(), wait: z.boolean() })

/** A foreach item that suspends only when `wait` is set; the others finish at once. */
const askItem = createStep({
  id: 'ask-item',
  inputSchema: itemSchema,
  outputSchema: resultSchema,
  resumeSchema: answerSchema,
  execute: async ({ inputData, resumeData, suspend }) => {
    if (inputData.wait && resumeData === undefined) {
      return suspend({ asked: inputData.name }, { resumeLabel: `item-${inputData.name}` })
    }
    return { name: inputData.name, answer: resumeData?.answer ?? 'none' }
  },
})

/** The gate the slow step waits on; each test that uses it opens a fresh one first. */
function openGate() {
  let resolve: () => void = () => {}
  const promise = new Promise<void>((done) => {
    resolve = done
  })
  return { promise, resolve }
}
let gate = openGate()
const release = () => gate.resolve()

/** After the answer, holds the run `running` until the test releases it. */
const slowStep = createStep({
  id: 'slow',
  inputSchema: resultSchema,
  outputSchema: resultSchema,
  execute: async ({ inputData }) => {
    await gate.promise
    return inputData
  },
})

const empty = z.object({}).passthrough()
const single = createWorkflow({ id: 'guard-single', inputSchema: empty, outputSchema: resultSchema })
  .then(askStep('ask'))
  .commit()
const parallel = createWorkflow({ id: 'guard-parallel', inputSchema: empty, outputSchema: empty })
  .parallel([askStep('ask-a'), askStep('ask-b')])
  .commit()
const foreach = createWorkflow({
  id: 'guard-foreach',
  inputSchema: z.array(itemSchema),
  outputSchema: z.array(resultSchema),
})
  .foreach(askItem, { concurrency: 5 })
  .commit()
const blocking = createWorkflow({ id: 'guard-blocking', inputSchema: empty, outputSchema: resultSchema })
  .then(askStep('ask'))
  .then(slowStep)
  .commit()

let dir: string
let mastra: Mastra

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'pushary-resume-guard-'))
  mastra = new Mastra({
    storage: new LibSQLStore({ id: 'resume-guard', url: `file:${join(dir, 'mastra.db')}` }),
    workflows: { single, parallel, foreach, blocking },
    logger: false,
  })
})

afterAll(() => {
  rmSync(dir, { recursive: true, force: true })
})

type RunHandle = {
  runId: string
  start(p: { inputData: unknown }): Promise<{ status: string }>
}

async function start(workflowId: string, inputData: unknown): Promise<string> {
  const workflow = mastra.getWorkflowById(workflowId as never) as unknown as {
    createRun(): Promise<RunHandle>
  }
  const run = await workflow.createRun()
  expect((await run.start({ inputData })).status).toBe('suspended')
  return run.runId
}

async function runStatus(workflowId: string, runId: string): Promise<string | undefined> {
  const workflow = mastra.getWorkflowById(workflowId as never) as unknown as {
    getWorkflowRunById(id: string): Promise<{ status: string } | null>
  }
  return (await workflow.getWorkflowRunById(runId))?.status
}

async function refusal(
  request: Omit<PusharyResumeRequest, 'mastra'>,
): Promise<{ code: string; field: string; message: string }> {
  try {
    await resumePusharyApproval({ mastra, ...request })
  } catch (error) {
    if (isPusharyResumeError(error)) return { code: error.code, field: error.field, message: error.message }
    throw error
  }
  throw new Error('the resume was not refused')
}

const answer = (text: string) => ({ answer: text })

describe('resumePusharyApproval picks the one live target', () => {
  it('resumes the only suspended step when no step or label is named', async () => {
    const runId = await start('guard-single', {})
    const outcome = await resumePusharyApproval({
      mastra,
      workflowId: 'guard-single',
      runId,
      resumeData: answer('yes'),
    })
    expect(outcome.target).toEqual({ stepId: 'ask', forEachIndex: null })
    expect(outcome.result.status).toBe('success')
    expect(outcome.result.result).toEqual({ name: 'ask', answer: 'yes' })
    expect(outcome.stillSuspended).toBe(false)
  })

  it('reports a step that suspended itself again as still suspended', async () => {
    const runId = await start('guard-single', {})
    const request = { mastra, workflowId: 'guard-single', runId, step: 'ask' }
    const again = await resumePusharyApproval({ ...request, resumeData: answer('again') })
    expect(again.result.status).toBe('suspended')
    expect(again.stillSuspended).toBe(true)
    const done = await resumePusharyApproval({ ...request, resumeData: answer('no') })
    expect(done.stillSuspended).toBe(false)
    expect(done.result.result).toEqual({ name: 'ask', answer: 'no' })
  })

  it('resumes the single suspended iteration of a foreach when no index is named', async () => {
    const items = [
      { name: 'a', wait: false },
      { name: 'b', wait: true },
      { name: 'c', wait: false },
    ]
    const runId = await start('guard-foreach', items)
    const outcome = await resumePusharyApproval({
      mastra,
      workflowId: 'guard-foreach',
      runId,
      step: 'ask-item',
      resumeData: answer('for b'),
    })
    expect(outcome.target).toEqual({ stepId: 'ask-item', forEachIndex: 1 })
    expect(outcome.result.status).toBe('success')
    expect(outcome.result.result).toEqual([
      { name: 'a', answer: 'none' },
      { name: 'b', answer: 'for b' },
      { name: 'c', answer: 'none' },
    ])
  })

  it('finds the step and the single suspended iteration when neither is named', async () => {
    const runId = await start('guard-foreach', [
      { name: 'a', wait: true },
      { name: 'b', wait: false },
    ])
    const outcome = await resumePusharyApproval({
      mastra,
      workflowId: 'guard-foreach',
      runId,
      resumeData: answer('for a'),
    })
    expect(outcome.target).toEqual({ stepId: 'ask-item', forEachIndex: 0 })
    expect(outcome.result.result).toEqual([
      { name: 'a', answer: 'for a' },
      { name: 'b', answer: 'none' },
    ])
  })

  it('resumes a foreach iteration by its label when the step and index agree with it', async () => {
    const runId = await start('guard-foreach', [
      { name: 'a', wait: true },
      { name: 'b', wait: true },
    ])
    const base = { workflowId: 'guard-foreach', runId, resumeData: answer('x') }
    expect(await refusal({ ...base, label: 'item-b', step: 'ask' })).toMatchObject({
      code: 'label_mismatch',
      field: 'step',
      message: expect.stringContaining('label "item-b" belongs to step "ask-item"'),
    })
    expect(await refusal({ ...base, label: 'item-b', step: 'ask-item', forEachIndex: 0 })).toMatchObject({
      code: 'label_mismatch',
      field: 'forEachIndex',
      message: expect.stringContaining('label "item-b" belongs to another iteration'),
    })
    const outcome = await resumePusharyApproval({
      mastra,
      ...base,
      label: 'item-b',
      step: 'ask-item',
      forEachIndex: 1,
      resumeData: answer('for b'),
    })
    expect(outcome.target).toEqual({ stepId: 'ask-item', forEachIndex: 1 })
    expect(outcome.result.status).toBe('suspended')
    expect(outcome.stillSuspended).toBe(false)
    const last = await resumePusharyApproval({
      mastra,
      ...base,
      label: 'item-a',
      resumeData: answer('for a'),
    })
    expect(last.target).toEqual({ stepId: 'ask-item', forEachIndex: 0 })
    expect(last.result.result).toEqual([
      { name: 'a', answer: 'for a' },
      { name: 'b', answer: 'for b' },
    ])
  })
})

describe('resumePusharyApproval refuses before anything runs', () => {
  it('refuses a run that has no snapshot as unknown_run', async () => {
    const refused = await refusal({ workflowId: 'guard-single', runId: 'run-never-started', resumeData: {} })
    expect(refused).toMatchObject({ code: 'unknown_run', field: 'runId' })
    expect(refused.message).toContain('run-never-started')
    expect(refused.message).toContain('no snapshot exists for this run')
  })

  it('refuses a finished run as run_not_suspended, naming its status', async () => {
    const runId = await start('guard-single', {})
    await resumePusharyApproval({ mastra, workflowId: 'guard-single', runId, resumeData: answer('yes') })
    const refused = await refusal({
      workflowId: 'guard-single',
      runId,
      step: 'ask',
      resumeData: answer('yes'),
    })
    expect(refused).toMatchObject({ code: 'run_not_suspended', field: 'runId' })
    expect(refused.message).toContain('the run is success, not suspended')
  })

  it('refuses to choose between two suspended steps, then resumes the one named', async () => {
    const runId = await start('guard-parallel', {})
    const base = { workflowId: 'guard-parallel', runId }
    const refused = await refusal({ ...base, resumeData: answer('x') })
    expect(refused).toMatchObject({ code: 'ambiguous_step', field: 'step' })
    expect(refused.message).toContain('2 steps are suspended')
    expect(await runStatus('guard-parallel', runId)).toBe('suspended')

    const first = await resumePusharyApproval({ mastra, ...base, step: 'ask-a', resumeData: answer('a') })
    expect(first.target).toEqual({ stepId: 'ask-a', forEachIndex: null })
    expect(first.result.status).toBe('suspended')
    expect(first.stillSuspended).toBe(false)
    expect(await refusal({ ...base, step: 'ask-a', resumeData: answer('a again') })).toMatchObject({
      code: 'step_not_suspended',
      field: 'step',
      message: expect.stringContaining('step "ask-a" is not suspended'),
    })
    const second = await resumePusharyApproval({ mastra, ...base, resumeData: answer('b') })
    expect(second.target).toEqual({ stepId: 'ask-b', forEachIndex: null })
    expect(second.result.status).toBe('success')
  })

  it('refuses a foreach step named without an index while several iterations wait', async () => {
    const runId = await start('guard-foreach', [
      { name: 'a', wait: true },
      { name: 'b', wait: false },
      { name: 'c', wait: true },
    ])
    const base = { workflowId: 'guard-foreach', runId, resumeData: answer('x') }
    const refused = await refusal({ ...base, step: 'ask-item' })
    expect(refused).toMatchObject({ code: 'ambiguous_iteration', field: 'forEachIndex' })
    expect(refused.message).toContain('2 iterations of "ask-item" are suspended')
    const finished = await refusal({ ...base, step: 'ask-item', forEachIndex: 1 })
    expect(finished).toMatchObject({ code: 'iteration_not_suspended', field: 'forEachIndex' })
    expect(finished.message).toContain('iteration 1 of "ask-item"')
    expect(await refusal({ ...base, label: 'item-b' })).toMatchObject({
      code: 'unknown_label',
      field: 'label',
      message: expect.stringContaining('no live suspension carries label "item-b"'),
    })
  })

  it('refuses resume data the step schema rejects, leaving the step suspended', async () => {
    const runId = await start('guard-single', {})
    const refused = await refusal({
      workflowId: 'guard-single',
      runId,
      step: 'ask',
      resumeData: { answer: 42 },
    })
    expect(refused).toMatchObject({
      code: 'invalid_resume_data',
      field: 'resumeData',
      message: expect.stringContaining('Mastra refused the resume data'),
    })
    const outcome = await resumePusharyApproval({
      mastra,
      workflowId: 'guard-single',
      runId,
      step: 'ask',
      resumeData: answer('yes'),
    })
    expect(outcome.result.status).toBe('success')
  })
})

describe('resumePusharyApproval while another resume holds the run', () => {
  type Snapshot = { status?: string } | null
  type WorkflowsStore = {
    loadWorkflowSnapshot(args: { workflowName: string; runId: string }): Promise<Snapshot>
  }

  /**
   * Watches the snapshot reads of one run on the real storage: releases the
   * slow step once a read has seen the run `running`, and can hand the next
   * read an earlier (suspended) snapshot, as a resumer that read just before
   * another one claimed the run would have. Returns the restore function.
   */
  async function watchReads(runId: string, staleOnce?: Snapshot): Promise<() => void> {
    const storage = mastra.getStorage() as unknown as { getStore(name: 'workflows'): Promise<WorkflowsStore> }
    const workflows = await storage.getStore('workflows')
    const original = workflows.loadWorkflowSnapshot.bind(workflows)
    let stale = staleOnce
    workflows.loadWorkflowSnapshot = async (args) => {
      if (args.runId === runId && stale !== undefined) {
        const earlier = stale
        stale = undefined
        return earlier
      }
      const snapshot = await original(args)
      if (args.runId === runId && snapshot?.status === 'running') release()
      return snapshot
    }
    return () => {
      workflows.loadWorkflowSnapshot = original
    }
  }

  /** Starts a resume that holds the run `running` in its slow step; hands it back once that is persisted. */
  async function holdRun(runId: string) {
    const held = resumePusharyApproval({
      mastra,
      workflowId: 'guard-blocking',
      runId,
      step: 'ask',
      resumeData: answer('yes'),
    })
    let seen = await loadRunSnapshot(mastra, 'guard-blocking', runId)
    for (let reads = 0; seen?.status !== 'running' && reads < 10_000; reads++) {
      seen = await loadRunSnapshot(mastra, 'guard-blocking', runId)
    }
    expect(seen?.status).toBe('running')
    // Wrapped: returning the promise itself would make the caller wait for it.
    return { first: held }
  }

  async function suspendedBlockingRun() {
    gate = openGate()
    const runId = await start('guard-blocking', {})
    const storage = mastra.getStorage() as unknown as { getStore(name: 'workflows'): Promise<WorkflowsStore> }
    const before = await (await storage.getStore('workflows')).loadWorkflowSnapshot({
      workflowName: 'guard-blocking',
      runId,
    })
    return { runId, before }
  }

  const second = (runId: string, conflictTimeoutMs?: number) =>
    refusal({
      workflowId: 'guard-blocking',
      runId,
      step: 'ask',
      resumeData: answer('yes'),
      ...(conflictTimeoutMs === undefined ? {} : { conflictTimeoutMs }),
    })

  it('waits for a running run to settle instead of refusing at once', async () => {
    const { runId } = await suspendedBlockingRun()
    const { first } = await holdRun(runId)
    const restore = await watchReads(runId)
    try {
      const refused = await second(runId)
      // Only once the first resume finished does the second learn the run is done.
      expect(refused).toMatchObject({ code: 'run_not_suspended', field: 'runId' })
      expect(refused.message).toContain('the run is success')
      expect((await first).result.status).toBe('success')
    } finally {
      restore()
    }
  })

  it('refuses a running run at once when the caller allows no wait', async () => {
    const { runId } = await suspendedBlockingRun()
    const { first } = await holdRun(runId)
    const refused = await second(runId, 0)
    release()
    expect(refused).toMatchObject({ code: 'run_not_suspended', field: 'runId' })
    expect(refused.message).toContain('the run is running')
    expect((await first).result.status).toBe('success')
  })

  it('retries when Mastra reports the run claimed by another resume after the guard read it suspended', async () => {
    const { runId, before } = await suspendedBlockingRun()
    expect(before?.status).toBe('suspended')
    const { first } = await holdRun(runId)
    const restore = await watchReads(runId, before)
    try {
      const refused = await second(runId)
      // The retry re-read the run, waited for the holder, and found the step already done.
      expect(refused).toMatchObject({ code: 'run_not_suspended', field: 'runId' })
      expect(refused.message).toContain('the run is success')
      expect((await first).result.status).toBe('success')
    } finally {
      restore()
    }
  })

  it('gives up with resume_conflict when another resume holds the run past the allowed wait', async () => {
    const { runId, before } = await suspendedBlockingRun()
    const { first } = await holdRun(runId)
    const restore = await watchReads(runId, before)
    try {
      const refused = await second(runId, 0)
      expect(refused).toMatchObject({ code: 'resume_conflict', field: 'runId' })
      expect(refused.message).toContain('another resume of this run kept holding it')
    } finally {
      release()
      restore()
    }
    expect((await first).result.status).toBe('success')
  })

  it('passes on an error of the resume itself instead of retrying it as a conflict', async () => {
    const runId = await start('guard-single', {})
    const storage = mastra.getStorage() as unknown as { getStore(name: 'workflows'): Promise<WorkflowsStore> }
    const workflows = await storage.getStore('workflows')
    const original = workflows.loadWorkflowSnapshot.bind(workflows)
    let reads = 0
    // The guard's own read succeeds; the read inside Mastra's resume fails once.
    workflows.loadWorkflowSnapshot = async (args) => {
      if (args.runId === runId && ++reads === 2) throw new Error('disk went away')
      return original(args)
    }
    try {
      await expect(
        resumePusharyApproval({
          mastra,
          workflowId: 'guard-single',
          runId,
          step: 'ask',
          resumeData: answer('yes'),
        }),
      ).rejects.toThrow('disk went away')
    } finally {
      workflows.loadWorkflowSnapshot = original
    }
    expect((await loadRunSnapshot(mastra, 'guard-single', runId))?.status).toBe('suspended')
  })
})
