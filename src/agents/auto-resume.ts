/**
 * Detection of Mastra's `autoResumeSuspendedTools`. With it, Mastra asks the
 * model itself to build the resume data of a suspended tool from the
 * conversation and to name the suspension it resumes (`suspendedToolCallId`
 * in the new call's arguments). The model's call runs in a new agent run,
 * yet the original run stays listed as suspended, so a later resume of it
 * (by a person's answer) would run the tool a second time. A review whose
 * call the model already auto-resumed must never be resumed: the evidence is
 * the thread's history, where the model's call names the original tool call.
 */

/** What is read from an agent: its memory, when it has one (no memory, no auto-resume). */
type MemoryReader = {
  recall(args: { threadId: string; resourceId?: string; perPage?: number | false }): Promise<{
    messages: readonly { role: string; content: unknown }[]
  }>
}
type AgentWithMemory = { getMemory?: () => Promise<MemoryReader | undefined> | MemoryReader | undefined }

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined
}

/** Arguments of every tool call in one stored message (Mastra's v2 message format). */
function callArguments(content: unknown): Record<string, unknown>[] {
  const parts = record(content)?.parts
  if (!Array.isArray(parts)) return []
  const found: Record<string, unknown>[] = []
  for (const part of parts) {
    const invocation = record(record(part)?.toolInvocation)
    const args = record(invocation?.args) ?? record(record(part)?.args) ?? record(record(part)?.input)
    if (args) found.push(args)
  }
  return found
}

/**
 * The reason a suspended call must not be resumed because the model already
 * resumed it through `autoResumeSuspendedTools`, or `null`.
 *
 * @example
 * const reason = await autoResumedBy(agent, { threadId, resourceId, runId, toolCallId })
 */
export async function autoResumedBy(
  agent: unknown,
  call: { threadId?: string | undefined; resourceId?: string | undefined; runId: string; toolCallId: string },
): Promise<string | null> {
  if (call.threadId === undefined) return null
  const memory = await (agent as AgentWithMemory).getMemory?.()
  if (!memory) return null
  const { messages } = await memory.recall({
    threadId: call.threadId,
    ...(call.resourceId === undefined ? {} : { resourceId: call.resourceId }),
    perPage: false,
  })
  for (const message of messages) {
    if (message.role !== 'assistant') continue
    for (const args of callArguments(message.content)) {
      // Naming the suspension is how the model resumes it; fail closed on the name alone.
      if (args.suspendedToolCallId === call.toolCallId || args.suspendedToolRunId === call.runId) {
        return 'Mastra auto-resumed this call (autoResumeSuspendedTools): the model produced its resume data, so the original suspension must never run'
      }
    }
  }
  return null
}
