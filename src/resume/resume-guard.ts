/**
 * Acts on where an approval stands: resumes exactly one suspended target, or
 * restarts a run for recovery. Which target, and whether it is live, is read
 * from the run snapshot by `run-position.ts`.
 */
import type { Mastra } from '@mastra/core/mastra'
import { RequestContext } from '@mastra/core/request-context'
import { PUSHARY_RECOVERY_CONTEXT_KEY } from '../steps/approval-step.js'
import { PusharyResumeError } from './resume-error.js'
import {
  foreachIterations,
  isTargetSuspended,
  labelTarget,
  loadRunSnapshot,
  type ResumeTarget,
  type RunSnapshotView,
  suspendedStepIds,
} from './run-position.js'

/**
 * What to resume. Name the target by `label` (the approval step's label is
 * its `decisionId`) or by `step` (plus `forEachIndex` inside a foreach).
 *
 * @example
 * const request: PusharyResumeRequest = { mastra, workflowId: 'refunds', runId, label: decisionId, resumeData }
 */
export interface PusharyResumeRequest {
  mastra: Mastra
  workflowId: string
  runId: string
  label?: string
  step?: string
  forEachIndex?: number
  resumeData: unknown
  /**
   * How long to wait while the run is `running` (another resume of the same run
   * holds it, or the first pass has not persisted yet); default 30 s.
   */
  conflictTimeoutMs?: number
}

/**
 * The resume went through. `stillSuspended` is true when the very same target
 * is suspended again afterwards (a step that re-suspended itself).
 *
 * @example
 * const { result, target } = await resumePusharyApproval(request)
 */
export interface PusharyResumeOutcome {
  target: ResumeTarget
  result: { status: string; result?: unknown; error?: unknown }
  stillSuspended: boolean
}

function refuse(
  request: PusharyResumeRequest,
  code: PusharyResumeError['code'],
  field: string,
  message: string,
  cause?: unknown,
): never {
  throw new PusharyResumeError({
    code,
    workflowId: request.workflowId,
    runId: request.runId,
    field,
    message,
    cause,
  })
}

/**
 * Picks exactly one live target, or refuses. Never lets Mastra choose: it
 * would resume every suspended iteration when no index is given.
 *
 * @example
 * const target = resolveResumeTarget(request, snapshot) // { stepId: 'approve', forEachIndex: 2 }
 */
export function resolveResumeTarget(request: PusharyResumeRequest, snapshot: RunSnapshotView): ResumeTarget {
  if (snapshot.status !== 'suspended') {
    return refuse(request, 'run_not_suspended', 'runId', `the run is ${snapshot.status}, not suspended`)
  }
  let target: ResumeTarget
  if (request.label !== undefined) {
    const found = labelTarget(snapshot, request.label)
    if (!found)
      return refuse(request, 'unknown_label', 'label', `no live suspension carries label "${request.label}"`)
    if (request.step !== undefined && request.step !== found.stepId) {
      return refuse(
        request,
        'label_mismatch',
        'step',
        `label "${request.label}" belongs to step "${found.stepId}"`,
      )
    }
    if (request.forEachIndex !== undefined && request.forEachIndex !== found.forEachIndex) {
      return refuse(
        request,
        'label_mismatch',
        'forEachIndex',
        `label "${request.label}" belongs to another iteration`,
      )
    }
    target = found
  } else {
    const live = suspendedStepIds(snapshot)
    let stepId = request.step
    if (stepId === undefined) {
      if (live.length !== 1) {
        return refuse(request, 'ambiguous_step', 'step', `${live.length} steps are suspended; name one`)
      }
      stepId = live[0] as string
    }
    const iterations = foreachIterations(snapshot, stepId.split('.')[0] ?? stepId)
    let forEachIndex: number | null = request.forEachIndex ?? null
    if (iterations !== null && forEachIndex === null) {
      const suspended = iterations.flatMap((status, index) => (status === 'suspended' ? [index] : []))
      if (suspended.length !== 1) {
        return refuse(
          request,
          'ambiguous_iteration',
          'forEachIndex',
          `${suspended.length} iterations of "${stepId}" are suspended; name exactly one`,
        )
      }
      forEachIndex = suspended[0] as number
    }
    target = { stepId, forEachIndex }
  }
  if (!isTargetSuspended(snapshot, target)) {
    if (target.forEachIndex !== null) {
      return refuse(
        request,
        'iteration_not_suspended',
        'forEachIndex',
        `iteration ${target.forEachIndex} of "${target.stepId}" is not suspended (finished, not started or out of range)`,
      )
    }
    return refuse(request, 'step_not_suspended', 'step', `step "${target.stepId}" is not suspended`)
  }
  return target
}

function isClaimConflict(error: unknown): boolean {
  const id = (error as { id?: unknown } | null)?.id
  const message = error instanceof Error ? error.message : ''
  return id === 'WORKFLOW_RESUME_ALREADY_CLAIMED' || message.includes('This workflow run was not suspended')
}

function isSchemaRefusal(error: unknown): boolean {
  return (error as { id?: unknown } | null)?.id === 'WORKFLOW_SCHEMA_VALIDATION_FAILED'
}

/** Run statuses after which nothing in the run is suspended or resumable. */
const FINISHED_RUN: ReadonlySet<string> = new Set(['success', 'failed', 'canceled', 'tripwire'])

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Resumes exactly one currently suspended step or foreach iteration, or
 * refuses with a {@link PusharyResumeError} before anything runs: an unknown
 * label, a finished/unstarted/out-of-range iteration, or an unnamed target
 * when several are suspended. While another resume of the same run holds it
 * (Mastra's "not suspended" / `WORKFLOW_RESUME_ALREADY_CLAIMED`, both raised
 * before the step runs), it re-reads the snapshot and retries.
 *
 * @example
 * const { result } = await resumePusharyApproval({
 *   mastra, workflowId: 'refunds', runId, label: decisionId, resumeData: { answer: 'yes', status: 'answered' },
 * })
 */
export async function resumePusharyApproval(request: PusharyResumeRequest): Promise<PusharyResumeOutcome> {
  const workflow = findWorkflow(request.mastra, request.workflowId, request.runId)
  const deadline = Date.now() + (request.conflictTimeoutMs ?? 30_000)
  for (let attempt = 0; ; attempt++) {
    const snapshot = await loadRunSnapshot(request.mastra, request.workflowId, request.runId)
    if (!snapshot) return refuse(request, 'unknown_run', 'runId', 'no snapshot exists for this run')
    if (snapshot.status === 'running' && Date.now() < deadline) {
      await sleep(Math.min(50 * 2 ** attempt, 500))
      continue
    }
    const target = resolveResumeTarget(request, snapshot)
    const run = await workflow.createRun({ runId: request.runId })
    try {
      const result = await run.resume({
        step: target.stepId,
        ...(target.forEachIndex === null ? {} : { forEachIndex: target.forEachIndex }),
        resumeData: request.resumeData,
      })
      // Only a run that is suspended again can hold this target suspended; a
      // run Mastra reports finished cannot become suspended again, so its
      // snapshot need not be read back.
      if (FINISHED_RUN.has(result.status)) return { target, result, stillSuspended: false }
      const after = await loadRunSnapshot(request.mastra, request.workflowId, request.runId)
      return { target, result, stillSuspended: after !== null && isTargetSuspended(after, target) }
    } catch (error) {
      if (isSchemaRefusal(error)) {
        return refuse(request, 'invalid_resume_data', 'resumeData', 'Mastra refused the resume data', error)
      }
      if (!isClaimConflict(error)) throw error
      if (Date.now() >= deadline) {
        return refuse(
          request,
          'resume_conflict',
          'runId',
          'another resume of this run kept holding it',
          error,
        )
      }
      await sleep(Math.min(50 * 2 ** attempt, 500))
    }
  }
}

/** Minimal structural view of a Mastra run, so callers need no generics. */
export interface ResumableRun {
  resume(params: {
    step: string
    forEachIndex?: number
    resumeData: unknown
  }): Promise<{ status: string; result?: unknown; error?: unknown }>
  restart(params?: {
    requestContext?: unknown
  }): Promise<{ status: string; result?: unknown; error?: unknown }>
  start(params: {
    inputData: unknown
    requestContext?: unknown
  }): Promise<{ status: string; result?: unknown }>
}

/** Minimal structural view of a Mastra workflow. */
export interface ResumableWorkflow {
  id: string
  createRun(options?: { runId?: string }): Promise<ResumableRun>
}

/**
 * Finds a registered workflow by its id (falling back to its registration key).
 *
 * @example
 * const workflow = findWorkflow(mastra, 'refund-approval')
 */
export function findWorkflow(mastra: Mastra, workflowId: string, runId = ''): ResumableWorkflow {
  const lookups = [
    () => mastra.getWorkflowById(workflowId as never),
    () => mastra.getWorkflow(workflowId as never),
  ]
  for (const lookup of lookups) {
    try {
      const workflow = lookup() as unknown as ResumableWorkflow | undefined
      if (workflow) return workflow
    } catch {
      // try the next lookup
    }
  }
  throw new PusharyResumeError({
    code: 'unknown_workflow',
    workflowId,
    runId,
    field: 'workflowId',
    message: 'no workflow with this id is registered on the Mastra instance',
  })
}

/**
 * Restarts a run whose approval step never suspended or never returned (a
 * crash in its first pass or its resume pass), marked as a recovery restart
 * so approval steps can tell it from a fresh start; returns the new snapshot.
 * Only `dispatcher.recover` calls it, after proving nothing past the
 * approval ran.
 *
 * @example
 * const snapshot = await restartRunForRecovery(mastra, 'refund-approval', runId)
 */
export async function restartRunForRecovery(
  mastra: Mastra,
  workflowId: string,
  runId: string,
): Promise<RunSnapshotView | null> {
  const run = await findWorkflow(mastra, workflowId, runId).createRun({ runId })
  const requestContext = new RequestContext()
  requestContext.set(PUSHARY_RECOVERY_CONTEXT_KEY, runId)
  await run.restart({ requestContext })
  return loadRunSnapshot(mastra, workflowId, runId)
}
