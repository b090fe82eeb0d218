/**
 * Can this worker do the whole job of resuming a review? Checked before any
 * claim, so a worker that is set up wrongly (a workflow, a batch's child or
 * parent workflow, an agent or its tool missing; Mastra on another storage; a
 * workflow Mastra may restart on boot) never turns an answer into a verdict:
 * the dispatcher answers `misconfigured` (503, retried) and the review stays
 * `pending` until a correctly configured worker takes it.
 */
import type { Mastra } from '@mastra/core/mastra'
import { AGENT_REVIEW_WORKFLOW_ID, agentWorkflowBinding } from '../agents/agent-binding.js'
import { agentToolProblem } from '../agents/agent-resume-data.js'
import type { PusharyReview } from '../store/review-schema.js'
import type { PusharyReviewStore } from '../store/review-store.js'
import { loadRunSnapshot } from './run-position.js'

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

async function storageProblem(mastra: Mastra): Promise<PusharyCapabilityProblem | null> {
  const storage = mastra.getStorage()
  const workflows = storage ? await storage.getStore('workflows') : undefined
  return workflows ? null : { missing: 'storage', reason: "this worker's Mastra has no workflow storage" }
}

async function runProblem(
  mastra: Mastra,
  workflowId: string,
  runId: string,
): Promise<PusharyCapabilityProblem | null> {
  if (await loadRunSnapshot(mastra, workflowId, runId)) return null
  return {
    missing: 'run',
    reason: `run ${workflowId}/${runId} is not in this worker's Mastra storage (is it configured with the same database as the worker that asked?)`,
  }
}

function agentOf(mastra: Mastra, agentId: string): unknown {
  for (const lookup of [() => mastra.getAgentById(agentId), () => mastra.getAgent(agentId as never)]) {
    try {
      const agent = lookup()
      if (agent) return agent
    } catch {
      // try the next lookup
    }
  }
  return null
}

/**
 * The first thing this worker lacks to resume `review` end to end, or `null`.
 * Reads Mastra's storage (the run must exist there) but never the review
 * store or the decision service.
 *
 * @example
 * const problem = await capabilityProblem(mastra, review)
 * if (problem) return { status: 'misconfigured', decisionId: review.decisionId, reason: problem.reason }
 */
export async function capabilityProblem(
  mastra: Mastra,
  review: PusharyReview,
): Promise<PusharyCapabilityProblem | null> {
  const noStorage = await storageProblem(mastra)
  if (noStorage) return noStorage
  switch (review.target) {
    case 'workflow-step':
      return (
        workflowProblem(mastra, review.workflowId, review.parent ? 'child_workflow' : 'workflow') ??
        (review.parent ? workflowProblem(mastra, review.parent.workflowId, 'parent_workflow') : null) ??
        (await runProblem(mastra, review.workflowId, review.runId))
      )
    case 'batch-parent':
      return (
        workflowProblem(mastra, review.workflowId, 'parent_workflow') ??
        workflowProblem(mastra, review.childWorkflowId, 'child_workflow') ??
        (await runProblem(mastra, review.workflowId, review.runId))
      )
    case 'agent': {
      const agent = agentOf(mastra, review.agentId)
      if (!agent) {
        return {
          missing: 'agent',
          reason: `agent "${review.agentId}" is not registered on this worker's Mastra`,
        }
      }
      const noTool = await agentToolProblem(agent, review.toolName)
      if (noTool) return { missing: 'tool', reason: `agent "${review.agentId}": ${noTool}` }
      const { runId } = agentWorkflowBinding(review, 'checkConfiguration')
      return runProblem(mastra, AGENT_REVIEW_WORKFLOW_ID, runId)
    }
    default: {
      const unreachable: never = review
      return unreachable
    }
  }
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
 * const report = await checkWorkerConfiguration({ mastra, store })
 */
export async function checkWorkerConfiguration(input: {
  mastra: Mastra
  store: Pick<PusharyReviewStore, 'listByState'>
  pageSize?: number
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
        problem = await capabilityProblem(input.mastra, review)
      } catch (error) {
        problem = { missing: 'storage', reason: error instanceof Error ? error.message : String(error) }
      }
      if (problem) report.problems.push({ decisionId: review.decisionId, target: review.target, ...problem })
    }
    if (page.length < limit) return report
    after = page.at(-1)?.decisionId
  }
}
