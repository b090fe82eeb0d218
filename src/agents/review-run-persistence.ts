/**
 * Which snapshots of an agent review's workflow run Mastra writes while the
 * review is opened (the run's per-run `shouldPersistSnapshot`).
 */
import { AGENT_REVIEW_ASK_STEP } from './agent-binding.js'

/** Mastra's `shouldPersistSnapshot` predicate, as the review run is given it. */
export type PersistencePredicate = (p: {
  workflowStatus: string
  stepResults: Record<string, unknown>
}) => boolean

/**
 * Which snapshots of a review run are written (Mastra's per-run
 * `shouldPersistSnapshot`, given when the open creates the run): not the
 * `pending` one `createRun` writes, nor the `running` ones of the first pass
 * (the approval step never resumed yet), so opening a review writes the run
 * once, suspended on its decision. Nothing reads those: a review is saved
 * only after its run suspended, and an open that died before that starts the
 * run again on the same decision (the create is idempotent). Every snapshot
 * of a resume pass (`resumedAt` set) is written as by default: recovery reads
 * a `running` run whose approval step succeeded as "the agent may have been
 * resumed" (`agent-recovery.ts`). Mastra's own claim on the resume
 * (`suspended` → `running`) follows the workflow's options, not this
 * predicate, and still happens.
 */
export const openPersistence: PersistencePredicate = ({ workflowStatus, stepResults }) => {
  if (workflowStatus === 'pending') return false
  if (workflowStatus !== 'running') return true
  const ask = stepResults[AGENT_REVIEW_ASK_STEP] as { status?: unknown; resumedAt?: unknown } | undefined
  return ask !== undefined && (ask.status !== 'running' || ask.resumedAt !== undefined)
}
