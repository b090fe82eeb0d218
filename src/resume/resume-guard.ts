/**
 * Acts on where an approval stands: resumes exactly one suspended target, or
 * restarts a run for recovery. Which target, and whether it is live, is read
 * from the run snapshot by `run-position.ts`.
 */
import type { Mastra } from '@mastra/core/mastra'
import { RequestContext } from '@mastra/core/request-context'
import { PUSHARY_RECOVERY_CONTEXT_KEY } from '../steps/approval-step.js'
import { isPusharyResumeError, PusharyResumeError } from './resume-error.js'
import {
  type ApprovalLocation,
  type ApprovalProgress,
  approvalProgress,
  isStillSuspended,
  loadRunSnapshot,
  type PusharyResumeRequest,
  type ResumeTarget,
  type RunSnapshotView,
  readLiveTarget,
  refuse,
} from './run-position.js'

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
    const target = await readLiveTarget(request, Date.now() < deadline)
    if (target === 'running') {
      await sleep(Math.min(50 * 2 ** attempt, 500))
      continue
    }
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
      return { target, result, stillSuspended: await isStillSuspended(request, target) }
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

/**
 * What became of one resume: it went through, Mastra or storage threw, or it
 * was refused before anything ran, with where the approval stands after the
 * refusal (read again: a refusal may mean another resume already ran it).
 */
export type PusharyResumeAttempt =
  | { outcome: PusharyResumeOutcome }
  | { failed: unknown }
  | { refused: PusharyResumeError; progress: ApprovalProgress }

/**
 * {@link resumePusharyApproval} for the resume path: nothing is thrown, every
 * ending is a {@link PusharyResumeAttempt}.
 *
 * @example
 * const attempt = await attemptResume(request, review)
 * if ('refused' in attempt && attempt.progress === 'completed') completeElsewhere()
 */
export async function attemptResume(
  request: PusharyResumeRequest,
  location: ApprovalLocation,
): Promise<PusharyResumeAttempt> {
  try {
    return { outcome: await resumePusharyApproval(request) }
  } catch (error) {
    if (!isPusharyResumeError(error)) return { failed: error }
    const snapshot = await loadRunSnapshot(request.mastra, request.workflowId, request.runId)
    return { refused: error, progress: snapshot ? approvalProgress(snapshot, location) : 'ended' }
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
