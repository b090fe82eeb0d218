/**
 * Can this worker do the whole job of resuming a review? Checked before any
 * claim, so a worker that is set up wrongly (a workflow, a batch's child or
 * parent workflow, an agent or its tool missing; Mastra on another storage; a
 * workflow Mastra may restart on boot) never turns an answer into a verdict:
 * the dispatcher answers `misconfigured` (503, retried) and the review stays
 * `pending` until a correctly configured worker takes it.
 */
import type { Mastra } from '@mastra/core/mastra'
import type {
  PusharyAgentReview,
  PusharyBatchParentReview,
  PusharyReview,
  PusharyWorkflowReview,
} from '../store/review-schema.js'
import type { PusharyReviewStore } from '../store/review-store.js'
import { errorMessage } from './resume-error.js'
import {
  type ApprovalProgress,
  approvalProgress,
  loadRunSnapshot,
  type RunSnapshotView,
} from './run-position.js'

/**
 * What a worker lacks for one review: `workflow` (the review's workflow),
 * `child_workflow` / `parent_workflow` (the other half of a multi-item
 * approval), `auto_restart` (a workflow that lets Mastra's boot-time
 * `restartAllActiveWorkflowRuns()` re-drive its runs: a protected step could
 * run twice), `agent`, `tool`, `storage` (Mastra has none), `run` (this
 * worker's Mastra storage does not know the run: another database).
 *
 * @example
 * const gap: PusharyCapabilityGap = 'child_workflow'
 */
export type PusharyCapabilityGap =
  | 'workflow'
  | 'child_workflow'
  | 'parent_workflow'
  | 'auto_restart'
  | 'agent'
  | 'tool'
  | 'storage'
  | 'run'

/**
 * Why this worker cannot resume one review.
 *
 * @example
 * const problem: PusharyCapabilityProblem = { missing: 'tool', reason: 'agent "support" has no tool "refund"' }
 */
export interface PusharyCapabilityProblem {
  missing: PusharyCapabilityGap
  reason: string
}

type WorkflowView = { options?: { autoRestartActiveRuns?: boolean } }

function registeredWorkflow(mastra: Mastra, workflowId: string): WorkflowView | null {
  for (const lookup of [
    () => mastra.getWorkflowById(workflowId as never),
    () => mastra.getWorkflow(workflowId as never),
  ]) {
    try {
      const workflow = lookup() as unknown as WorkflowView | undefined
      if (workflow) return workflow
    } catch {
      // try the next lookup
    }
  }
  return null
}

/**
 * `null` when `workflowId` is registered here and opted out of Mastra's
 * boot-time restart, else what is wrong. Also used by the approval step to
 * refuse a first run before anyone is asked.
 *
 * @example
 * const problem = workflowProblem(mastra, 'refund-single', 'workflow')
 */
export function workflowProblem(
  mastra: Mastra,
  workflowId: string,
  role: 'workflow' | 'child_workflow' | 'parent_workflow',
): PusharyCapabilityProblem | null {
  const workflow = registeredWorkflow(mastra, workflowId)
  const name = role === 'workflow' ? 'workflow' : role.replace('_', ' ')
  if (!workflow) {
    return { missing: role, reason: `${name} "${workflowId}" is not registered on this worker's Mastra` }
  }
  if (workflow.options?.autoRestartActiveRuns !== false) {
    return {
      missing: 'auto_restart',
      reason: `${name} "${workflowId}" lets Mastra's restartAllActiveWorkflowRuns() re-drive its runs (a protected step could run twice); create it with options: { autoRestartActiveRuns: false }`,
    }
  }
  return null
}

/**
 * `null` when this worker's Mastra has workflow storage.
 *
 * @example
 * const problem = await storageProblem(mastra)
 */
export async function storageProblem(mastra: Mastra): Promise<PusharyCapabilityProblem | null> {
  const storage = mastra.getStorage()
  const workflows = storage ? await storage.getStore('workflows') : undefined
  return workflows ? null : { missing: 'storage', reason: "this worker's Mastra has no workflow storage" }
}

/** The run's snapshot, or the problem that this worker's storage does not know the run. */
async function runSnapshot(
  mastra: Mastra,
  workflowId: string,
  runId: string,
): Promise<{ problem: PusharyCapabilityProblem } | { problem: null; snapshot: RunSnapshotView }> {
  const snapshot = await loadRunSnapshot(mastra, workflowId, runId)
  if (snapshot) return { problem: null, snapshot }
  return {
    problem: {
      missing: 'run',
      reason: `run ${workflowId}/${runId} is not in this worker's Mastra storage (is it configured with the same database as the worker that asked?)`,
    },
  }
}

/**
 * `null` when this worker's Mastra storage holds the run.
 *
 * @example
 * const problem = await runProblem(mastra, 'refund-approval', runId)
 */
export async function runProblem(
  mastra: Mastra,
  workflowId: string,
  runId: string,
): Promise<PusharyCapabilityProblem | null> {
  return (await runSnapshot(mastra, workflowId, runId)).problem
}

/**
 * The check of a workflow step's or multi-item parent's review, with the run
 * snapshot it read when nothing is missing: the resume path decides from
 * that one read whether the run waits on the approval.
 *
 * @example
 * const checked = await workflowCapability(mastra, review)
 * if (checked.problem === null) approvalProgress(checked.snapshot, review)
 */
export async function workflowCapability(
  mastra: Mastra,
  review: PusharyWorkflowReview | PusharyBatchParentReview,
): Promise<{ problem: PusharyCapabilityProblem } | { problem: null; snapshot: RunSnapshotView }> {
  const noStorage = await storageProblem(mastra)
  if (noStorage) return { problem: noStorage }
  const missing =
    review.target === 'batch-parent'
      ? (workflowProblem(mastra, review.workflowId, 'parent_workflow') ??
        workflowProblem(mastra, review.childWorkflowId, 'child_workflow'))
      : (workflowProblem(mastra, review.workflowId, review.parent ? 'child_workflow' : 'workflow') ??
        (review.parent ? workflowProblem(mastra, review.parent.workflowId, 'parent_workflow') : null))
  if (missing) return { problem: missing }
  return runSnapshot(mastra, review.workflowId, review.runId)
}

/**
 * {@link workflowCapability} without the snapshot.
 *
 * @example
 * const problem = await workflowCapabilityProblem(mastra, parentReview)
 */
export async function workflowCapabilityProblem(
  mastra: Mastra,
  review: PusharyWorkflowReview | PusharyBatchParentReview,
): Promise<PusharyCapabilityProblem | null> {
  return (await workflowCapability(mastra, review)).problem
}

/**
 * What an agent review needs of this worker (the agent, its tool, the review
 * run). The agents room supplies it: the resume path knows no agent.
 */
export type AgentCapabilityCheck = (
  mastra: Mastra,
  review: PusharyAgentReview,
) => Promise<PusharyCapabilityProblem | null>

/**
 * The first thing this worker lacks to resume `review` end to end, or `null`.
 * Reads Mastra's storage (the run must exist there) but never the review
 * store or the decision service.
 *
 * @example
 * const problem = await capabilityProblem(mastra, review, agentCapabilityProblem)
 * if (problem) return { status: 'misconfigured', decisionId: review.decisionId, reason: problem.reason }
 */
export async function capabilityProblem(
  mastra: Mastra,
  review: PusharyReview,
  checkAgent: AgentCapabilityCheck,
): Promise<PusharyCapabilityProblem | null> {
  if (review.target !== 'agent') return workflowCapabilityProblem(mastra, review)
  return (await storageProblem(mastra)) ?? checkAgent(mastra, review)
}

function storageUnreadable(error: unknown): PusharyCapabilityProblem {
  return { missing: 'storage', reason: `this process cannot read its Mastra storage: ${errorMessage(error)}` }
}

/**
 * {@link capabilityProblem} for a resume or a recovery: an error in this
 * process's own configuration (a workflow of the review not registered here,
 * Mastra on no or another storage, the agent or its tool missing, storage
 * that cannot be read) is never a verdict about the review. Checked before
 * any claim; the caller reports it as retryable `misconfigured`.
 *
 * @example
 * const problem = await checkedCapability(mastra, review, agentCapabilityProblem)
 */
export async function checkedCapability(
  mastra: Mastra,
  review: PusharyReview,
  checkAgent: AgentCapabilityCheck,
): Promise<PusharyCapabilityProblem | null> {
  try {
    return await capabilityProblem(mastra, review, checkAgent)
  } catch (error) {
    return storageUnreadable(error)
  }
}

/**
 * {@link workflowCapability} for a workflow step's resume, with where its
 * approval stands in that one read of the run: the read the resume decides
 * from before its claim.
 *
 * @example
 * const position = await checkedWorkflowPosition(mastra, review)
 * if (position.problem === null && position.progress === 'suspended') claim()
 */
export async function checkedWorkflowPosition(
  mastra: Mastra,
  review: PusharyWorkflowReview,
): Promise<
  | { problem: PusharyCapabilityProblem }
  | { problem: null; snapshot: RunSnapshotView; progress: ApprovalProgress }
> {
  let checked: Awaited<ReturnType<typeof workflowCapability>>
  try {
    checked = await workflowCapability(mastra, review)
  } catch (error) {
    return { problem: storageUnreadable(error) }
  }
  if (checked.problem) return checked
  return { problem: null, snapshot: checked.snapshot, progress: approvalProgress(checked.snapshot, review) }
}

/**
 * One pending review this worker could not resume, and why.
 *
 * @example
 * for (const { decisionId, missing, reason } of report.problems) console.log(decisionId, missing, reason)
 */
export interface PusharyConfigurationIssue extends PusharyCapabilityProblem {
  decisionId: string
  target: PusharyReview['target']
}

/**
 * What `dispatcher.checkConfiguration()` found: how many pending reviews it
 * looked at, and each one this worker could not resume.
 *
 * @example
 * const { checked, problems } = await dispatcher.checkConfiguration()
 * if (problems.length > 0) process.exitCode = 1
 */
export interface PusharyConfigurationReport {
  checked: number
  problems: PusharyConfigurationIssue[]
}

/**
 * Walks every pending review (in pages of `pageSize`) and lists those this
 * worker could not resume. A startup self-check: a bad deploy is visible
 * before any answer arrives.
 *
 * @example
 * const report = await findConfigurationIssues({ mastra, store, checkAgent: agentCapabilityProblem })
 */
export async function findConfigurationIssues(input: {
  mastra: Mastra
  store: Pick<PusharyReviewStore, 'listByState'>
  pageSize?: number
  checkAgent: AgentCapabilityCheck
}): Promise<PusharyConfigurationReport> {
  const limit = input.pageSize ?? 500
  const report: PusharyConfigurationReport = { checked: 0, problems: [] }
  const seen = new Set<string>()
  let after: string | undefined
  for (;;) {
    const page = await input.store.listByState('pending', after === undefined ? { limit } : { limit, after })
    for (const review of page) {
      // A review that left `pending` meanwhile makes the listing start over.
      if (seen.has(review.decisionId)) return report
      seen.add(review.decisionId)
      report.checked++
      let problem: PusharyCapabilityProblem | null
      try {
        problem = await capabilityProblem(input.mastra, review, input.checkAgent)
      } catch (error) {
        problem = { missing: 'storage', reason: error instanceof Error ? error.message : String(error) }
      }
      if (problem) report.problems.push({ decisionId: review.decisionId, target: review.target, ...problem })
    }
    if (page.length < limit) return report
    after = page.at(-1)?.decisionId
  }
}
