/**
 * The resume of one agent review's workflow run (`agent-review-workflow.ts`)
 * with a verified answer: the run's ask step takes the answer, its last step
 * performs the native agent resume. For several approvers the ask step may
 * count the answer and wait on the others instead (`counted`).
 */
import type { Mastra } from '@mastra/core/mastra'
import { RequestContext } from '@mastra/core/request-context'
import type { PusharyClient } from '../pushary/client.js'
import type { PusharyAnswer } from '../pushary/question.js'
import type { Decision } from '../pushary/wire-responses.js'
import { loadRunSnapshot, type RunSnapshotView } from '../resume/run-position.js'
import { handOverVerifiedDecision } from '../steps/verified-handoff.js'
import {
  AGENT_REVIEW_ASK_STEP,
  AGENT_REVIEW_WORKFLOW_ID,
  agentWorkflowBinding,
  type PusharyAgentReviewBinding,
} from './agent-binding.js'
import {
  type AgentResumeHook,
  decisionIdOf,
  ensureAgentReviewWorkflow,
  RESUME_HOOK_KEY,
} from './agent-review-workflow.js'

/** Mastra's refusals of a resume whose claim another caller won (mastra-probe Q8). */
function lostResumeClaim(error: unknown): boolean {
  const id = (error as { id?: unknown } | null)?.id
  if (id === 'WORKFLOW_RESUME_ALREADY_CLAIMED') return true
  return error instanceof Error && /was not suspended|already resumed by another caller/.test(error.message)
}

/** One approver of a set as the ask step's suspend payload last read it. */
export interface WaitingMember {
  decisionId: string
  status: string
  approved: boolean
}

/**
 * Several approvers: every member as the suspended ask step last read them
 * (its suspend payload), or `null` when the run is not suspended on a set.
 *
 * @example
 * const members = waitingMembers(snapshot)
 */
export function waitingMembers(snapshot: RunSnapshotView | null): WaitingMember[] | null {
  if (snapshot?.status !== 'suspended') return null
  const ask = snapshot.context[AGENT_REVIEW_ASK_STEP] as
    | { suspendPayload?: { approvers?: unknown } }
    | undefined
  const approvers = ask?.suspendPayload?.approvers
  return Array.isArray(approvers) ? (approvers as WaitingMember[]) : null
}

/** What a resume of the review run did. */
export type ReviewRunResume =
  | { status: 'suspended' | 'taken' }
  /** Several approvers: the answer was counted and the set waits on the others. */
  | { status: 'counted'; approvals: number }
  | { status: 'success'; result: unknown }

/**
 * Resumes one review run with the verified answer. The caller has just read
 * the run's snapshot under its claim and found it waiting on this decision
 * (`reviewRunState`), so it is not read again here. The run's final step
 * performs the native agent resume and hands its output to `hook.deliver`.
 * Returns `suspended` when the approval step refused the answer on its own
 * re-read and suspended again on the same decision: nothing after it ran, so
 * the caller releases its claim; `counted` when a set's approval step counted
 * the answer and waits on other approvers (nothing after it ran either).
 * Returns `taken` when another caller (one that does not share the review
 * store) resumed the run first, found by Mastra's own claim on the resume:
 * nothing of ours ran. Throws when the run ended any other way: the caller
 * records that as uncertain.
 *
 * @example
 * const { status } = await resumeAgentReviewRun({ mastra, client, binding: review, answer, hook })
 */
export async function resumeAgentReviewRun(input: {
  mastra: Mastra
  client: PusharyClient
  binding: PusharyAgentReviewBinding
  answer: PusharyAnswer
  /** The decision the caller just read and verified: handed to the approval step so it does not read it again. */
  decision: Decision
  hook: AgentResumeHook
}): Promise<ReviewRunResume> {
  const { runId } = agentWorkflowBinding(input.binding, 'resumePusharyAgentReview')
  const workflow = ensureAgentReviewWorkflow(input.mastra, input.client)
  const requestContext = new RequestContext()
  requestContext.set(RESUME_HOOK_KEY, input.hook)
  const run = await workflow.createRun({ runId })
  // Single-use, in-memory proof of the read above (steps/verified-handoff.ts):
  // the step skips its own re-read only through the client it was built with.
  const handoff = handOverVerifiedDecision(
    input.client,
    {
      workflowId: AGENT_REVIEW_WORKFLOW_ID,
      runId,
      stepId: AGENT_REVIEW_ASK_STEP,
      decisionId: input.hook.decisionId,
    },
    input.decision,
  )
  let result: Awaited<ReturnType<typeof run.resume>>
  try {
    result = await run.resume({
      step: AGENT_REVIEW_ASK_STEP,
      resumeData: {
        answer: input.answer.value,
        status: input.answer.status,
        proof: handoff.proof,
        // Several approvers: names the decision the proof is for (never authority).
        ...(input.binding.approverSet ? { decisionId: input.hook.decisionId } : {}),
      },
      requestContext,
    })
  } catch (error) {
    // Mastra's claim on the resume (suspended -> running) went to another
    // caller between our read and our resume: nothing of ours ran.
    if (lostResumeClaim(error)) return { status: 'taken' }
    throw error
  } finally {
    handoff.discard()
  }
  if (result.status === 'suspended') {
    const after = await loadRunSnapshot(input.mastra, AGENT_REVIEW_WORKFLOW_ID, runId)
    // Only the ask step can suspend, and only before `resume-agent` runs.
    if (after?.status === 'suspended' && decisionIdOf(after) === input.hook.decisionId) {
      return { status: 'suspended' }
    }
    const members = input.binding.approverSet ? waitingMembers(after) : null
    const self = members?.find((member) => member.decisionId === input.hook.decisionId)
    if (members && self) {
      if (self.status === 'pending') return { status: 'suspended' }
      return { status: 'counted', approvals: members.filter((member) => member.approved).length }
    }
  }
  if (result.status !== 'success') {
    const cause = (result.error as { message?: string } | undefined)?.message
    throw new Error(`the review workflow run ended ${result.status}${cause ? `: ${cause}` : ''}`, {
      cause: result.error,
    })
  }
  return { status: 'success', result: result.result }
}
