/**
 * Puts an agent review into the agent's own trace. A suspended agent run
 * keeps the trace it belongs to and the span a resume links back to in its
 * snapshot (`tracingContext`); the review workflow run starts under a
 * `pushary.agent-review` span there, so its `pushary.ask` and every later
 * span of the review sit in the trace of the agent turn that needed it.
 * Mastra 1.71 records no tool-call span for a `requireApproval` suspension
 * (the call has not run), so that linked span (the model generation that
 * proposed the call) is the nearest parent there is.
 */
import type { Mastra } from '@mastra/core/mastra'
import type { AnySpan, TracingContext } from '@mastra/core/observability'
import { GENERIC_SPAN } from './approval-tracing.js'
import { tracingInstance } from './resume-spans.js'
import { pusharyTraceRefSchema } from './trace-ref.js'

/** The workflows Mastra runs an agent's loop under. */
const AGENT_LOOP_WORKFLOWS = ['agentic-loop', 'durable-agentic-loop'] as const

const linkSchema = pusharyTraceRefSchema.pick({ traceId: true, spanId: true })

/** The review's span and the tracing context to start its workflow run with. */
export interface AgentReviewTrace {
  tracingContext: TracingContext
  end(outcome: string): void
}

async function agentRunLink(
  mastra: Mastra,
  runId: string,
): Promise<{ traceId: string; spanId: string } | undefined> {
  const workflows = await mastra.getStorage()?.getStore('workflows')
  for (const workflowName of AGENT_LOOP_WORKFLOWS) {
    const snapshot = await workflows?.loadWorkflowSnapshot({ workflowName, runId })
    const parsed = linkSchema.safeParse((snapshot as { tracingContext?: unknown } | null)?.tracingContext)
    if (parsed.success) return parsed.data
  }
  return undefined
}

/**
 * The `pushary.agent-review` span in the suspended agent run's trace, or
 * `undefined` when nothing is traced (no observability; a run whose snapshot
 * names no trace). A failed read of the snapshot only costs the span.
 *
 * @example
 * const trace = await openAgentReviewTrace(mastra, binding.runId, { agentId, toolCallId, kind })
 */
export async function openAgentReviewTrace(
  mastra: Mastra,
  agentRunId: string,
  details: { agentId: string; toolCallId: string; kind: string },
): Promise<AgentReviewTrace | undefined> {
  const instance = tracingInstance(mastra)
  if (!instance) return undefined
  let link: { traceId: string; spanId: string } | undefined
  try {
    link = await agentRunLink(mastra, agentRunId)
  } catch {
    return undefined
  }
  if (!link) return undefined
  const span: AnySpan = instance.startSpan({
    type: GENERIC_SPAN,
    name: 'pushary.agent-review',
    traceId: link.traceId,
    parentSpanId: link.spanId,
    metadata: {
      'pushary.agentId': details.agentId,
      'pushary.toolCallId': details.toolCallId,
      'pushary.kind': details.kind,
    },
  })
  return {
    tracingContext: { currentSpan: span },
    end: (outcome) => span.end({ metadata: { 'pushary.outcome': outcome } }),
  }
}
