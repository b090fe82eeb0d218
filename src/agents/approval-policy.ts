/**
 * The workspace policy's verdict on one native tool approval
 * (`resolvePusharyApprovals` without `policy: false`): `allow` approves and
 * `deny` declines natively, with no person, no decision and no workflow run.
 * With several approvers an `allow` is not taken: the people named decide
 * (a `deny` still declines, fail closed).
 */
import type { PusharyClient } from '../pushary/client.js'
import type { PusharyApprovalSubject } from '../steps/approval-schemas.js'
import type { AgentApproverSet } from './agent-approvers.js'
import type { PusharyAgentReviewBinding } from './agent-binding.js'
import type { PusharyResumableAgent } from './agent-shapes.js'

/**
 * Asks `/authorize` about one call and, on `allow` or `deny`, approves or
 * declines it natively; `null` when a person must answer (no verdict, an
 * unreachable policy, or an `allow` for a set).
 *
 * @example
 * const byPolicy = await resolveByPolicy({ client, agent, mode, binding, stepSubject, externalId, set, ids })
 */
export async function resolveByPolicy(input: {
  client: PusharyClient
  agent: PusharyResumableAgent
  mode: 'generate' | 'stream'
  binding: PusharyAgentReviewBinding
  stepSubject: PusharyApprovalSubject
  externalId: string
  set: AgentApproverSet | undefined
  ids: { runId: string; toolCallId: string }
}): Promise<{ approved: boolean; reason?: string; output: unknown } | null> {
  const { agent, binding, stepSubject, set, ids } = input
  const verdict = await input.client
    .authorize({
      toolName: binding.toolName,
      // Several approvers: the policy is asked about the requester's action.
      ...(set
        ? set.requestedBy === undefined
          ? {}
          : { externalId: set.requestedBy }
        : { externalId: input.externalId }),
      question: binding.question.question,
      ...(stepSubject.parameters ? { parameters: stepSubject.parameters } : {}),
      ...(stepSubject.toolTarget ? { toolTarget: stepSubject.toolTarget } : {}),
      ...(stepSubject.actor ? { actor: stepSubject.actor } : {}),
      ...(stepSubject.environment ? { environment: stepSubject.environment } : {}),
      ...(stepSubject.agentName ? { agentName: stepSubject.agentName } : {}),
    })
    .catch(() => null)
  const stream = input.mode === 'stream'
  if (verdict?.verdict === 'allow' && !set) {
    return {
      approved: true,
      output: await (stream ? agent.approveToolCall(ids) : agent.approveToolCallGenerate(ids)),
    }
  }
  if (verdict?.verdict !== 'deny') return null
  const reason = `${verdict.reason ?? 'Denied by policy.'} Do not retry the same action.`
  const output = await (stream
    ? agent.declineToolCall({ ...ids, reason })
    : agent.declineToolCallGenerate({ ...ids, reason }))
  return { approved: false, reason, output }
}
