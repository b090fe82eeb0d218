/**
 * Where one approval stands in its run, read from Mastra's persisted
 * snapshot (never an in-memory run): which step or foreach iteration is
 * suspended, which label is live, and whether the approval is suspended,
 * completed, in progress, not reached or ended. The dispatcher, recovery and
 * the resume guard decide from this alone whether anything past the approval
 * may have run.
 */
import type { Mastra } from '@mastra/core/mastra'
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

/** Throws the guard's refusal for `request`: nothing was resumed. */
export function refuse(
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

/**
 * Reads the run once and names the one live target of `request`, or
 * `'running'` while the run is held and `mayWait` allows waiting; refuses
 * anything else.
 *
 * @example
 * const target = await readLiveTarget(request, Date.now() < deadline)
 */
export async function readLiveTarget(
  request: PusharyResumeRequest,
  mayWait: boolean,
): Promise<ResumeTarget | 'running'> {
  const snapshot = await loadRunSnapshot(request.mastra, request.workflowId, request.runId)
  if (!snapshot) return refuse(request, 'unknown_run', 'runId', 'no snapshot exists for this run')
  if (snapshot.status === 'running' && mayWait) return 'running'
  return resolveResumeTarget(request, snapshot)
}

/**
 * After a resume: whether the very same target is suspended again.
 *
 * @example
 * const again = await isStillSuspended(request, target)
 */
export async function isStillSuspended(
  where: { mastra: Mastra; workflowId: string; runId: string },
  target: ResumeTarget,
): Promise<boolean> {
  const after = await loadRunSnapshot(where.mastra, where.workflowId, where.runId)
  return after !== null && isTargetSuspended(after, target)
}

/**
 * - `suspended`: the approval waits on exactly its label; nothing past it ran.
 * - `completed`: the approval step (or its foreach item) returned; later steps may have run.
 * - `in_progress`: the run is active and the approval step has not returned
 *   (its first pass or its resume pass was running, or crashed).
 * - `not_reached`: the run has not started the approval step.
 * - `ended`: the run finished (`success`, `failed`, ...) without this approval completing.
 */
export type ApprovalProgress = 'suspended' | 'completed' | 'in_progress' | 'not_reached' | 'ended'

/** The binding fields that locate one approval inside a run. */
export interface ApprovalLocation {
  stepId: string
  resumeLabel: string
  /** Matches the foreach item whose input carries this operation. */
  operationId: string
}

const ACTIVE_RUN = ['running', 'pending', 'waiting', 'suspended']

/** The foreach index of this approval: by its live label, else by the item's operation ID. */
function itemIndex(snapshot: RunSnapshotView, location: ApprovalLocation): number | null {
  const byLabel = labelTarget(snapshot, location.resumeLabel)
  if (byLabel?.forEachIndex !== undefined && byLabel?.forEachIndex !== null) return byLabel.forEachIndex
  const payload = record(snapshot.context[location.stepId])?.payload
  if (!Array.isArray(payload)) return null
  const index = payload.findIndex((item) => record(item)?.operationId === location.operationId)
  return index < 0 ? null : index
}

/**
 * Reads the approval's progress from the run snapshot.
 *
 * @example
 * if (approvalProgress(snapshot, review) === 'completed') markUncertain()
 */
export function approvalProgress(snapshot: RunSnapshotView, location: ApprovalLocation): ApprovalProgress {
  const target = labelTarget(snapshot, location.resumeLabel)
  if (target && isTargetSuspended(snapshot, target)) return 'suspended'
  const step = record(snapshot.context[location.stepId])
  const stepStatus = step?.status
  if (stepStatus === 'success') return 'completed'
  const iterations = foreachIterations(snapshot, location.stepId)
  if (iterations !== null) {
    const index = itemIndex(snapshot, location)
    const status = index === null ? undefined : iterations[index]
    if (status === 'success') return 'completed'
    if (status === undefined && !ACTIVE_RUN.includes(snapshot.status)) return 'ended'
    if (status === undefined) return 'not_reached'
  }
  if (!ACTIVE_RUN.includes(snapshot.status)) return 'ended'
  if (stepStatus === undefined) return 'not_reached'
  return 'in_progress'
}
