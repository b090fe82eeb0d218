/**
 * The reason a resolve that found no suspended approval reports, so that
 * "nothing found" never reads as "all approved".
 */
import type { Mastra } from '@mastra/core/mastra'
import type { PusharyResumableAgent } from './agent-shapes.js'

/**
 * Why a call found no suspended approval, naming the likely cause: a
 * sub-agent targeted instead of its supervisor (Mastra lists a delegated
 * approval only at the outermost agent), or a scope without suspended runs.
 *
 * @example
 * const reason = await nothingFoundReason(agent, mastra, undefined, { threadId }, 0)
 */
export async function nothingFoundReason(
  agent: PusharyResumableAgent,
  mastra: Mastra,
  runsPassed: number | undefined,
  scope: { threadId?: string; resourceId?: string },
  listed: number,
): Promise<string> {
  const name = (agent as { id?: string }).id ?? 'this agent'
  if (runsPassed !== undefined) {
    return `none of the ${runsPassed} run(s) passed is suspended on a tool approval of agent "${name}"`
  }
  const others: string[] = []
  let registered: Record<string, unknown> = {}
  try {
    registered = (mastra as { listAgents?: () => Record<string, unknown> }).listAgents?.() ?? {}
  } catch {
    // no registry to consult: the generic reason below still holds
  }
  for (const [key, other] of Object.entries(registered)) {
    if (other === agent) continue
    const list = (other as Partial<PusharyResumableAgent>).listSuspendedRuns
    if (typeof list !== 'function') continue
    try {
      const { runs } = await list.call(other, scope)
      if (runs.length > 0) others.push(`"${(other as { id?: string }).id ?? key}" (${runs.length} run(s))`)
    } catch {
      // an agent that cannot list is no hint
    }
  }
  const where = scope.threadId ? `thread "${scope.threadId}"` : `resource "${scope.resourceId}"`
  if (others.length > 0) {
    return `agent "${name}" has no suspended approval in ${where}, but ${others.join(', ')} has suspended runs there: if "${name}" is a sub-agent, resolve at its supervisor (Mastra lists a delegated approval only at the outermost agent)`
  }
  return listed > 0
    ? `agent "${name}" has ${listed} suspended run(s) in ${where}, none waiting on a tool approval`
    : `agent "${name}" has no suspended runs in ${where}: nothing to approve (a sub-agent instead of its supervisor, or a thread without suspended runs)`
}
