import type { Mastra } from '@mastra/core/mastra'
import { RequestContext } from '@mastra/core/request-context'
import { PUSHARY_RECOVERY_CONTEXT_KEY } from '../steps/approval-step.js'
import { PusharyResumeError } from './resume-error.js'

/** The parts of Mastra's persisted run state the resume guard reads. */
export interface RunSnapshotView {
  status: string
  resumeLabels: Record<string, { stepId: string; foreachIndex?: number }>
  suspendedPaths: Record<string, unknown>
  context: Record<string, unknown>
  result?: unknown
}

/** One resumable target: a step, and for a `foreach` the exact item index. */
export interface ResumeTarget {
  stepId: string
  forEachIndex: number | null
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
 * Reads the persisted run state exactly as Mastra's own resume reads it
 * (not a cached in-memory view), or `null` when the run has no snapshot.
 *
 * @example
 * const snapshot = await loadRunSnapshot(mastra, 'refund-approval', runId)
 */
export async function loadRunSnapshot(
  mastra: Mastra,
  workflowId: string,
  runId: string,
): Promise<RunSnapshotView | null> {
  const storage = mastra.getStorage()
  const workflows = storage ? await storage.getStore('workflows') : undefined
  if (!workflows) {
    throw new PusharyResumeError({
      code: 'no_storage',
      workflowId,
      runId,
      field: 'mastra.storage',
      message: 'Mastra has no workflow storage; approvals need persistent storage',
    })
  }
  const snapshot = await workflows.loadWorkflowSnapshot({ workflowName: workflowId, runId })
  if (!snapshot) return null
  return {
    status: String(snapshot.status),
    resumeLabels: (snapshot.resumeLabels ?? {}) as RunSnapshotView['resumeLabels'],
    suspendedPaths: (snapshot.suspendedPaths ?? {}) as Record<string, unknown>,
    context: (snapshot.context ?? {}) as Record<string, unknown>,
    result: snapshot.result,
  }
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined
}

/**
 * Per-iteration statuses of a suspended `foreach` step (`undefined` entries
 * are items not started yet), or `null` when the step is not a foreach.
 *
 * @example
 * foreachIterations(snapshot, 'approve') // ['suspended', 'success', undefined]
 */
export function foreachIterations(snapshot: RunSnapshotView, stepId: string): (string | undefined)[] | null {
  const step = record(snapshot.context[stepId])
  const meta = record(record(step?.suspendPayload)?.__workflow_meta)
  const output = meta?.foreachOutput
  if (!Array.isArray(output)) return null
  const payload = step?.payload
  const length = Array.isArray(payload) ? Math.max(payload.length, output.length) : output.length
  return Array.from({ length }, (_, index) => {
    const status = record(output[index])?.status
    return typeof status === 'string' ? status : undefined
  })
}

/**
 * Step ids whose suspension is live: listed in `suspendedPaths` and marked
 * `suspended` in the step results.
 *
 * @example
 * suspendedStepIds(snapshot) // ['approve']
 */
export function suspendedStepIds(snapshot: RunSnapshotView): string[] {
  return Object.keys(snapshot.suspendedPaths).filter(
    (stepId) => record(snapshot.context[stepId])?.status === 'suspended',
  )
}

/**
 * Whether exactly this step (and iteration) is suspended right now. Mastra
 * silently ignores a resume of a finished or out-of-range iteration and runs
 * a not-yet-started one with data meant for someone else, so only a `true`
 * here may lead to a resume.
 *
 * @example
 * if (!isTargetSuspended(snapshot, { stepId: 'approve', forEachIndex: 2 })) refuse()
 */
export function isTargetSuspended(snapshot: RunSnapshotView, target: ResumeTarget): boolean {
  if (snapshot.status !== 'suspended') return false
  const rootStepId = target.stepId.split('.')[0] ?? target.stepId
  if (!suspendedStepIds(snapshot).includes(rootStepId)) return false
  const iterations = foreachIterations(snapshot, rootStepId)
  if (iterations === null) return target.forEachIndex === null
  if (target.forEachIndex === null) return false
  return iterations[target.forEachIndex] === 'suspended'
}

/**
 * The label's target, if the label is live in the snapshot.
 *
 * @example
 * const target = labelTarget(snapshot, decisionId) // { stepId: 'approve', forEachIndex: 3 }
 */
export function labelTarget(snapshot: RunSnapshotView, label: string): ResumeTarget | null {
  const entry = Object.hasOwn(snapshot.resumeLabels, label) ? snapshot.resumeLabels[label] : undefined
  if (!entry || typeof entry.stepId !== 'string') return null
  return {
    stepId: entry.stepId,
    forEachIndex: typeof entry.foreachIndex === 'number' ? entry.foreachIndex : null,
  }
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
