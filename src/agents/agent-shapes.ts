/**
 * Structural views of Mastra agents (nothing is imported from Mastra's agent
 * module, so a native `Agent` satisfies them without a cast), and the one
 * normalization of a suspended tool call.
 *
 * Mastra reports a supervisor's delegated approval in two shapes: `generate`
 * lists the sub-agent tool (`agent-<name>`, `requiresApproval: false`) with
 * the inner call nested in `suspendPayload` (once per delegation level);
 * `stream` lists the inner tool name under the supervisor's call ID with
 * `requiresApproval: true`. Both become one call: the supervisor's call ID
 * (the only one Mastra resumes correctly: approving the sub-agent directly
 * leaves the supervisor suspended) with the innermost tool's name and args.
 */
import type { PusharySuspendedAgentRun, PusharySuspendedToolCall } from '../resume/dispatch-types.js'

/** What the native approve/decline/resume calls return; only `finishReason` is read. */
type AgentOutput = { finishReason?: unknown }
type ResumeOptions = { runId: string; toolCallId?: string }

/**
 * An agent whose tool approvals can be listed, approved and declined (a
 * native Mastra `Agent` qualifies as is).
 *
 * @example
 * const approvable: PusharyApprovableAgent = new Agent({ id: 'support', name: 'Support', instructions, model, tools })
 */
export interface PusharyApprovableAgent {
  listSuspendedRuns(options?: {
    threadId?: string
    resourceId?: string
    /** Only runs created at or after this instant (Mastra's own filter; a shape may ignore it). */
    fromDate?: Date
    /** Only runs created at or before this instant. */
    toDate?: Date
  }): Promise<{ runs: PusharySuspendedAgentRun[] }>
  approveToolCallGenerate(options: ResumeOptions): Promise<AgentOutput>
  declineToolCallGenerate(options: ResumeOptions & { reason?: string }): Promise<AgentOutput>
  approveToolCall(options: ResumeOptions): Promise<AgentOutput>
  declineToolCall(options: ResumeOptions & { reason?: string }): Promise<AgentOutput>
}

/**
 * An approvable agent whose suspended tools can also be resumed with data.
 *
 * @example
 * const agent: PusharyResumableAgent = mastra.getAgent('support')
 */
export interface PusharyResumableAgent extends PusharyApprovableAgent {
  resumeGenerate(resumeData: unknown, options: ResumeOptions): Promise<AgentOutput>
  resumeStream(resumeData: unknown, options: ResumeOptions): Promise<AgentOutput>
}

/** A suspended call after normalization. */
export interface NormalizedCall {
  /** The call ID to approve or resume at the outermost agent. */
  toolCallId: string | undefined
  /** The innermost tool's name and arguments. */
  toolName: string | undefined
  args: unknown
  /** `approval` for requireApproval/requireToolApproval, `suspend` for a tool that called `suspend()`. */
  kind: 'approval' | 'suspend'
  suspendPayload: unknown
  /** Sub-agent tools crossed, outermost first (empty without delegation). */
  via: string[]
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined
}

function nestedCall(value: unknown): Record<string, unknown> | undefined {
  const nested = record(value)
  return nested && typeof nested.toolCallId === 'string' && typeof nested.toolName === 'string'
    ? nested
    : undefined
}

/**
 * Normalizes one suspended call (see the module comment).
 *
 * @example
 * normalizeSuspendedCall(run.toolCalls[0]!) // { toolCallId: 'sup_1', toolName: 'issueRefund', kind: 'approval', ... }
 */
export function normalizeSuspendedCall(call: PusharySuspendedToolCall): NormalizedCall {
  const via: string[] = []
  if (call.requiresApproval) {
    return {
      toolCallId: call.toolCallId,
      toolName: call.toolName,
      args: call.args,
      kind: 'approval',
      suspendPayload: undefined,
      via,
    }
  }
  let level: Record<string, unknown> = call as unknown as Record<string, unknown>
  for (let depth = 0; depth < 16; depth++) {
    const name = typeof level.toolName === 'string' ? level.toolName : undefined
    const inner = name?.startsWith('agent-') ? nestedCall(level.suspendPayload) : undefined
    if (!inner || !name) break
    via.push(name)
    level = inner
  }
  const toolName = typeof level.toolName === 'string' ? level.toolName : undefined
  // A nested level without its own suspend payload is the inner tool's approval.
  const kind = via.length > 0 && !('suspendPayload' in level) ? 'approval' : 'suspend'
  return {
    toolCallId: call.toolCallId,
    toolName,
    args: level.args,
    kind,
    suspendPayload: kind === 'suspend' ? level.suspendPayload : undefined,
    via,
  }
}

/**
 * Reads `finishReason` off any agent output without trusting its shape.
 *
 * @example
 * if (finishReasonOf(output) === 'suspended') await rediscover()
 */
export function finishReasonOf(output: unknown): string | undefined {
  const reason = record(output)?.finishReason
  return typeof reason === 'string' ? reason : undefined
}
