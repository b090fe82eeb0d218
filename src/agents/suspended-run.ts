/**
 * One suspended agent run, found without listing every suspended run.
 *
 * `agent.listSuspendedRuns()` reads and parses the snapshot of every
 * suspended agent run in the agent's storage (filtered by resource, when
 * given), so asking it for one run costs as much as all of them: an open or a
 * resume got slower with every review still waiting. The run's own row gives
 * its creation time; the same listing narrowed to that instant returns the
 * same entry (Mastra's own filters and snapshot reading), usually alone.
 * Whenever the narrow path cannot answer (an agent shape without a Mastra,
 * a storage without creation times, a run not found there), the full listing
 * decides, exactly as before.
 */
import type { Mastra } from '@mastra/core/mastra'
import type { PusharySuspendedAgentRun } from '../resume/dispatch-types.js'
import type { PusharyApprovableAgent } from './agent-shapes.js'

/** The workflows Mastra runs an agent's loop under: `Agent` first, then `DurableAgent`. */
const AGENT_LOOP_WORKFLOWS = ['agentic-loop', 'durable-agentic-loop'] as const

type RunScope = { threadId?: string; resourceId?: string }

/**
 * When the run's row was created, read from the agent's own storage;
 * undefined when it cannot tell.
 *
 * @example
 * const createdAt = await agentRunCreatedAt(agent, runId)
 */
export async function agentRunCreatedAt(
  agent: PusharyApprovableAgent,
  runId: string,
): Promise<Date | undefined> {
  const mastra = (agent as { getMastraInstance?: () => Mastra | undefined }).getMastraInstance?.()
  const workflows = await mastra?.getStorage()?.getStore('workflows')
  if (!workflows) return undefined
  for (const workflowName of AGENT_LOOP_WORKFLOWS) {
    const row = await workflows.getWorkflowRunById({ runId, workflowName })
    if (row)
      return row.createdAt instanceof Date && !Number.isNaN(row.createdAt.getTime())
        ? row.createdAt
        : undefined
  }
  return undefined
}

/**
 * The suspended run `runId` as `agent.listSuspendedRuns(scope)` reports it,
 * or undefined when that listing does not hold it. `known`, the run's
 * creation time when the caller already has it (the review run keeps the
 * one the open read), saves the read of the run's row; `null` says the
 * caller read it and there is none.
 * A wrong one only narrows the listing to nothing, and the full one decides.
 *
 * @example
 * const run = await findSuspendedRun(agent, review.runId, { resourceId: review.resourceId })
 */
export async function findSuspendedRun(
  agent: PusharyApprovableAgent,
  runId: string,
  scope: RunScope = {},
  known?: Date | null,
): Promise<PusharySuspendedAgentRun | undefined> {
  const createdAt = known === undefined ? await agentRunCreatedAt(agent, runId) : known
  if (createdAt) {
    const { runs } = await agent.listSuspendedRuns({ ...scope, fromDate: createdAt, toDate: createdAt })
    const found = runs.find((run) => run.runId === runId)
    if (found) return found
  }
  const { runs } = await agent.listSuspendedRuns(scope)
  return runs.find((run) => run.runId === runId)
}
