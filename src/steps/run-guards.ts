/**
 * What an approval step refuses at run start, before anyone is asked: a run
 * no answer could ever resume, and a workflow Mastra may restart after a
 * crash (which would re-run a protected action).
 */
import type { Mastra } from '@mastra/core/mastra'
import { PusharyValidationError } from '../pushary/errors.js'

/**
 * Refuses, before anything is asked, to run where no answer could ever
 * resume it: Mastra runs a nested workflow used as a step under the nested
 * workflow's ID and the outer run's ID, which is registered nowhere, so a
 * question asked there could never be resumed.
 *
 * @example
 * refuseUnresumable(mastra, 'refund-single')
 */
export function refuseUnresumable(mastra: Mastra | undefined, workflowId: string): void {
  if (!mastra) return
  for (const lookup of [
    () => mastra.getWorkflowById(workflowId as never),
    () => mastra.getWorkflow(workflowId as never),
  ]) {
    try {
      if (lookup()) return
    } catch {
      // try the next lookup
    }
  }
  throw new PusharyValidationError({
    code: 'invalid_decision_input',
    operation: 'pusharyApprovalStep',
    field: 'workflowId',
    message: `at run start, before anyone is asked: workflow "${workflowId}" is not registered on Mastra, so an answer could never continue this run; put the approval step at the top level of a registered workflow (or directly inside its .foreach), not inside a nested workflow used as a step`,
  })
}

/**
 * Refuses, before anything is asked, a workflow containing an approval step
 * that lets Mastra's boot-time `restartAllActiveWorkflowRuns()` re-drive its
 * runs: a restart re-runs the step that was running when a process died, so a
 * protected action could run twice. The dispatcher refuses to resume such a
 * workflow too (`misconfigured`); this makes the mistake visible on the first
 * run instead of on the first answer.
 *
 * @example
 * refuseAutoRestarted(mastra, 'refund-single', 'pusharyApprovalStep')
 */
export function refuseAutoRestarted(mastra: Mastra | undefined, workflowId: string, operation: string): void {
  if (!mastra) return
  let options: { autoRestartActiveRuns?: boolean } | undefined
  try {
    options = (
      mastra.getWorkflowById(workflowId as never) as { options?: { autoRestartActiveRuns?: boolean } }
    )?.options
  } catch {
    return
  }
  if (options?.autoRestartActiveRuns === false) return
  throw new PusharyValidationError({
    code: 'invalid_options',
    operation,
    field: 'workflow.options.autoRestartActiveRuns',
    message: `at run start, before anyone is asked: workflow "${workflowId}" contains a Pushary approval step but allows Mastra's restartAllActiveWorkflowRuns() to restart its runs: a restart after a crash re-runs the step that was running, so a protected action could run twice. Create it with createWorkflow({ ..., options: { autoRestartActiveRuns: false } }) and recover interrupted approvals with dispatcher.recover(decisionId).`,
  })
}
