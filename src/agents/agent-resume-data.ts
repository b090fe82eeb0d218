/**
 * The resume data of a question review, and its check against the tool that
 * will receive it. Mastra's `resumeGenerate`/`resumeStream` with data that
 * fails the tool's `resumeSchema` does not throw: the model gets a
 * validation-error result and the suspension is consumed, so the answer could
 * never be delivered again. The data is therefore checked against the
 * agent's current tool before anything is claimed or resumed (a tool replaced
 * since the question was asked is caught here, not by Mastra).
 */

/** What the package resumes the deferred question tool with: the decision it re-reads itself. */
export interface QuestionResumeData {
  decisionId: string
}

/**
 * @example
 * await agent.resumeGenerate(questionResumeData(decisionId), { runId, toolCallId })
 */
export function questionResumeData(decisionId: string): QuestionResumeData {
  return { decisionId }
}

type SchemaLike = { safeParse(value: unknown): { success: boolean } }
type ToolLike = { id?: unknown; resumeSchema?: unknown }
type AgentLike = {
  listTools?: () => Promise<Record<string, unknown>> | Record<string, unknown>
  listAgents?: () => Promise<Record<string, unknown>> | Record<string, unknown>
}

function findTool(tools: Record<string, unknown>, name: string): ToolLike | undefined {
  const named = tools[name] as ToolLike | undefined
  if (named) return named
  return Object.values(tools).find((tool) => (tool as ToolLike | undefined)?.id === name) as
    | ToolLike
    | undefined
}

/** The tool named `toolName` on the agent or, for a delegated question, on one of its sub-agents. */
async function locateTool(agent: AgentLike, toolName: string, depth: number): Promise<ToolLike | undefined> {
  const own = await agent.listTools?.()
  const tool = own ? findTool(own, toolName) : undefined
  if (tool || depth === 0) return tool
  const subAgents = (await agent.listAgents?.()) ?? {}
  for (const sub of Object.values(subAgents)) {
    const found = await locateTool(sub as AgentLike, toolName, depth - 1)
    if (found) return found
  }
  return undefined
}

/**
 * `null` when the agent (or one of its sub-agents) still has the tool
 * `toolName`, else why not. An agent that cannot list its tools is not checked.
 *
 * @example
 * const problem = await agentToolProblem(agent, 'issueRefund')
 */
export async function agentToolProblem(agent: unknown, toolName: string): Promise<string | null> {
  const view = agent as AgentLike
  if (typeof view.listTools !== 'function') return null
  return (await locateTool(view, toolName, 4)) ? null : `the agent has no tool "${toolName}" to resume`
}

/**
 * Why the agent's tool would refuse this resume data (so resuming would
 * consume the suspension), or `null` when it accepts it. An agent that
 * cannot list its tools is not checked.
 *
 * @example
 * const problem = await resumeDataProblem(agent, 'askHuman', questionResumeData(decisionId))
 */
export async function resumeDataProblem(
  agent: unknown,
  toolName: string,
  resumeData: QuestionResumeData,
): Promise<string | null> {
  const view = agent as AgentLike
  if (typeof view.listTools !== 'function') return null
  const tool = await locateTool(view, toolName, 4)
  if (!tool) return `the agent has no tool "${toolName}" to resume`
  const schema = tool.resumeSchema as SchemaLike | undefined
  if (!schema || typeof schema.safeParse !== 'function') {
    return `the tool "${toolName}" declares no resumeSchema; it is not the deferred ask tool`
  }
  return schema.safeParse(resumeData).success
    ? null
    : `the tool "${toolName}" would refuse the resume data (its resumeSchema changed since the question was asked)`
}
