/**
 * What one execution of the approval step hands to the passes of several
 * approvers (first pass, resume, escalation), and the withdrawal of
 * decisions a set no longer needs.
 */
import type { Mastra } from '@mastra/core/mastra'
import type { PusharyClient } from '../pushary/client.js'
import type { PusharyQuestion } from '../pushary/question.js'
import type { PusharyReviewStore } from '../store/review-store.js'
import type { AskingAgent } from './approval-log.js'
import type { PusharyApprovalStepInput, PusharyApprovalSuspend } from './approval-schemas.js'
import type { ApproverSetRule } from './approver-set.js'
import type { PusharyWorkflowBinding } from './workflow-binding.js'

export type RequestContextLike = { get(key: never): unknown; set(key: never, value: never): void } | undefined
/** Mastra's `suspend`; what it returns is Mastra's own marker, handed back unchanged. */
export type Suspend<S> = (payload: PusharyApprovalSuspend, options: { resumeLabel: string | string[] }) => S

/** What one run of the step hands to the set's passes. */
export interface ApproverSetRun<S = unknown> {
  client: PusharyClient
  store: PusharyReviewStore | undefined
  mastra: Mastra | undefined
  requestContext: RequestContextLike
  suspend: Suspend<S>
  rule: ApproverSetRule
  /** The step's binding without its approver (each member adds its own). */
  binding: Omit<PusharyWorkflowBinding, 'externalId'>
  question: PusharyQuestion
  input: PusharyApprovalStepInput
  delivery: {
    callbackUrl?: string | undefined
    expiresInSeconds?: number | undefined
    requireReachable?: boolean | undefined
    sandboxOutcome?: 'approve' | 'deny' | 'no_answer' | undefined
  }
  agentName: string | undefined
  /** The agent call an agent review's run asks about (its `asked` lines name it). */
  asking: AskingAgent | undefined
  /** Set only inside `dispatcher.recover`'s restart of this run. */
  recovering: boolean
}

/**
 * One member's binding: the step's, with this approver.
 *
 * @example
 * const binding = memberBinding(run, 'alice')
 */
export function memberBinding<S>(run: ApproverSetRun<S>, externalId: string): PusharyWorkflowBinding {
  return { ...run.binding, externalId }
}

/**
 * Cancels decisions at the service, all at once; a failed cancel is logged, never thrown.
 *
 * @example
 * await withdrawMembers(run, state.open, 'the set was settled')
 */
export async function withdrawMembers<S>(
  run: ApproverSetRun<S>,
  decisionIds: readonly string[],
  why: unknown,
): Promise<void> {
  const log = run.mastra?.getLogger()
  const reason = why instanceof Error ? why.message : String(why)
  const withdraw = async (decisionId: string): Promise<void> => {
    try {
      await run.client.decisions.cancel(decisionId)
      log?.info(`[pushary] withdrew decision ${decisionId} of run ${run.binding.runId}: ${reason}`)
    } catch (error) {
      log?.warn(
        `[pushary] decision ${decisionId} of run ${run.binding.runId} stays open (${reason}); cancelling it failed: ${
          error instanceof Error ? error.message : String(error)
        }. The next reconcile withdraws it`,
      )
    }
  }
  await Promise.all(decisionIds.map(withdraw))
}
