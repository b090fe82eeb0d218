/**
 * Mastra's `DurableAgent` (`@mastra/core/agent/durable`) runs its loop as the
 * durable workflows `durable-agentic-loop` / `durable-agentic-execution`.
 * Two of its differences from `Agent` matter here (measured on 1.71):
 *
 * - `listSuspendedRuns` reports a `requireApproval` / `requireToolApproval`
 *   suspension with `requiresApproval: false` and without `args`; the durable
 *   loop's snapshot holds `{ type: 'approval', toolCallId, toolName, args }`.
 *   {@link withDurableApprovals} restores the approval and its arguments from
 *   there, so the binding fingerprints the exact input.
 * - `resumeGenerate(runId, resumeData, options)` takes the run ID first
 *   ({@link resumeGenerateOf} calls it the right way).
 */
import type { Mastra } from '@mastra/core/mastra'
import type { PusharySuspendedAgentRun, PusharySuspendedToolCall } from '../resume/dispatch-types.js'
import { loadRunSnapshot } from '../resume/run-position.js'
import type { PusharyResumableAgent } from './agent-shapes.js'

/** The durable loop workflow whose snapshot holds the suspended tool calls. */
const DURABLE_LOOP_WORKFLOW = 'durable-agentic-loop'

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined
}

/** The approval payload of one tool call anywhere in a snapshot's step context. */
function findApproval(
  value: unknown,
  toolCallId: string,
  depth: number,
): Record<string, unknown> | undefined {
  const node = record(value)
  if (node?.type === 'approval' && node.toolCallId === toolCallId && 'args' in node) return node
  if (depth === 0) return undefined
  const children = Array.isArray(value) ? value : node ? Object.values(node) : []
  for (const child of children) {
    const found = findApproval(child, toolCallId, depth - 1)
    if (found) return found
  }
  return undefined
}

/** A call a DurableAgent listed without saying what it waits for. */
function isBareCall(call: PusharySuspendedToolCall): boolean {
  return !call.requiresApproval && call.args === undefined && call.suspendPayload === undefined
}

/**
 * The run with every bare call that the durable loop's snapshot shows as an
 * approval restored to `{ requiresApproval: true, args }`. Runs of a plain
 * `Agent` (no durable snapshot, no bare calls) are returned unchanged.
 *
 * @example
 * const run = await withDurableApprovals(mastra, listed)
 */
export async function withDurableApprovals(
  mastra: Mastra | undefined,
  run: PusharySuspendedAgentRun,
): Promise<PusharySuspendedAgentRun> {
  if (!mastra || !run.toolCalls.some(isBareCall)) return run
  const snapshot = await loadRunSnapshot(mastra, DURABLE_LOOP_WORKFLOW, run.runId)
  if (!snapshot) return run
  return {
    ...run,
    toolCalls: run.toolCalls.map((call) => {
      if (!isBareCall(call) || call.toolCallId === undefined) return call
      const approval = findApproval(snapshot.context, call.toolCallId, 8)
      return approval ? { ...call, requiresApproval: true, args: approval.args } : call
    }),
  }
}

/**
 * Whether `agent` is a Mastra `DurableAgent` (or a subclass), found by its
 * class chain rather than `instanceof`: the check then holds across two copies
 * of `@mastra/core` (an ESM and a CommonJS load, or a nested install), and
 * importing the package does not load the durable agent module.
 */
export function isDurableAgent(agent: object): boolean {
  for (let proto = Object.getPrototypeOf(agent); proto !== null; proto = Object.getPrototypeOf(proto)) {
    if (proto.constructor?.name === 'DurableAgent') return true
  }
  return false
}

/**
 * Resumes a suspended tool with data and waits for the generation, on an
 * `Agent` or a `DurableAgent`.
 *
 * @example
 * const output = await resumeGenerateOf(agent, { decisionId }, { runId, toolCallId })
 */
export function resumeGenerateOf(
  agent: PusharyResumableAgent,
  resumeData: unknown,
  ids: { runId: string; toolCallId: string },
): Promise<unknown> {
  if (isDurableAgent(agent)) {
    const durable = agent as unknown as {
      resumeGenerate(runId: string, data: unknown, options: { toolCallId: string }): Promise<unknown>
    }
    return durable.resumeGenerate(ids.runId, resumeData, { toolCallId: ids.toolCallId })
  }
  return agent.resumeGenerate(resumeData, ids)
}
