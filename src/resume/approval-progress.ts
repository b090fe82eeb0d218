/**
 * Where one approval stands in its run's persisted snapshot. Recovery and the
 * dispatcher decide from this alone whether anything past the approval may
 * have run, so it reads only what Mastra persisted, never an in-memory run.
 */
import { foreachIterations, isTargetSuspended, labelTarget, type RunSnapshotView } from './run-snapshot.js'

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

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined
}

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
