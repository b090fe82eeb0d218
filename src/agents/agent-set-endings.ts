/**
 * How the reviews of several approvers on one agent tool call end. Each
 * member's decision has its own review; the review run's ask step settles
 * the set (`steps/approver-set.ts`) on whichever member's resume reads
 * enough answers, and that resume alone performs the native agent resume.
 * A member whose answer the run counted while it still waited ends
 * `completed` (`endCounted`). Once the set is settled, every other member
 * ends from the set's record, whichever worker meets it first: `completed`
 * when its answer was counted, `stale` when it was withdrawn (cancelled at
 * the service first, if still open) or answered late. The reason says which
 * decisions settled the set (`describeSet`, as for a workflow step's set),
 * so the record is the same whichever worker got there.
 */
import type { Mastra } from '@mastra/core/mastra'
import type { PusharyClient } from '../pushary/client.js'
import type { Decision } from '../pushary/wire-responses.js'
import { describeSet } from '../resume/approver-set-endings.js'
import { loadRunSnapshot } from '../resume/run-position.js'
import { readReviewedDecision } from '../steps/decision-expiry.js'
import type { PusharyAgentReviewStore } from '../store/agent-review-store.js'
import { type PusharyAgentReview, pusharyAgentReviewSchema } from '../store/review-schema.js'
import {
  AGENT_REVIEW_ASK_STEP,
  AGENT_REVIEW_WORKFLOW_ID,
  agentWorkflowBinding,
  checkAgentDecision,
} from './agent-binding.js'
import type { ReviewRunState } from './agent-resume-causes.js'
import { claimRefused, type PusharyAgentResumeOutcome, resumedByAnother } from './agent-resume-outcome.js'
import { type SettledAgentSet, settledAgentSetOf } from './agent-set-answer.js'

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/**
 * The set the review run's ask step settled, or `null` while it has not
 * (the run still waits, or it is one approver's run).
 *
 * @example
 * const set = await settledSetOfRun(mastra, review)
 */
export async function settledSetOfRun(
  mastra: Mastra,
  review: PusharyAgentReview,
): Promise<SettledAgentSet | null> {
  const { runId } = agentWorkflowBinding(review, 'resumePusharyAgentReview')
  const snapshot = await loadRunSnapshot(mastra, AGENT_REVIEW_WORKFLOW_ID, runId)
  return snapshot ? settledAgentSetOf(snapshot.context[AGENT_REVIEW_ASK_STEP]) : null
}

/** What one member ending needs. */
export interface SetMemberEnding {
  store: PusharyAgentReviewStore
  client: PusharyClient
  review: PusharyAgentReview
  /** The member's decision as just re-read and checked against its review. */
  decision: Decision
  set: SettledAgentSet
  /** True when the caller already holds this review's claim. */
  claimed: boolean
}

/**
 * Ends one member's review from its settled set (see the module comment).
 * Claims it first unless the caller holds the claim; a claim another
 * resumer holds, or the run's, answers `busy` and is retried.
 *
 * @example
 * const ended = await endSettledMember({ store, client, review, decision, set, claimed: false })
 */
export async function endSettledMember(input: SetMemberEnding): Promise<PusharyAgentResumeOutcome<never>> {
  const { store, review, decision, set } = input
  const decisionId = review.decisionId
  const open = decision.status === 'pending'
  if (open) {
    // Still on the member's phone: withdraw it so it leaves.
    try {
      await input.client.decisions.cancel(decisionId)
    } catch (error) {
      const reason = `${describeSet(set)}; withdrawing this decision failed (${message(error)}); retried by the next reconcile`
      if (input.claimed) await store.finish(decisionId, 'pending', reason)
      return { status: 'pending', decisionId, reason, reasonCode: 'not_answered' }
    }
  }
  const self = set.approvers.find((member) => member.decisionId === decisionId)
  const counted = !open && self !== undefined && self.status !== 'pending' && self.late !== true
  const what =
    decision.status === 'answered'
      ? `${review.externalId} answered ${JSON.stringify(decision.value)}${
          decision.answeredAt ? ` at ${decision.answeredAt}` : ''
        }`
      : open
        ? `${review.externalId} had not answered`
        : `the decision of ${review.externalId} is ${decision.status}`
  const reason = counted
    ? `${what}, counted: ${describeSet(set)}`
    : decision.status === 'answered'
      ? `${what} after ${describeSet(set)}; the late answer changes nothing`
      : `${what}; withdrawn (cancelled at the service): ${describeSet(set)}`
  if (!input.claimed) {
    const claim = await store.claim(decisionId, review.runId)
    if (claim !== 'claimed') return claimRefused(store, review, claim)
  }
  try {
    await store.finish(decisionId, counted ? 'completed' : 'stale', reason)
  } catch (error) {
    return {
      status: 'uncertain',
      decisionId,
      reason,
      reasonCode: 'release_failed',
      persistenceError: message(error),
    }
  }
  // Another member's resume performed the native resume: `resumed_elsewhere`, with its verdict.
  return counted
    ? {
        status: 'duplicate',
        decisionId,
        reason,
        reasonCode: 'resumed_elsewhere',
        action: set.approved ? 'approved' : 'declined',
      }
    : { status: 'stale', decisionId, reason, reasonCode: 'resumed_elsewhere' }
}

/**
 * A claimed member whose review run no longer waits on it: ended from the
 * set when the run settled it, else as any review whose run another caller
 * resumed (`resumedByAnother`).
 *
 * @example
 * if (before.state !== 'waiting') return endMemberElsewhere({ store, client, mastra, review, decision }, before)
 */
export async function endMemberElsewhere(
  input: Omit<SetMemberEnding, 'set' | 'claimed'> & { mastra: Mastra },
  run: Exclude<ReviewRunState, { state: 'waiting' }>,
): Promise<PusharyAgentResumeOutcome<never>> {
  if (run.state !== 'counted') {
    const set = await settledSetOfRun(input.mastra, input.review)
    if (set) return endSettledMember({ ...input, set, claimed: true })
  }
  return resumedByAnother(input.store, input.review.decisionId, run)
}

/**
 * After the resume that settled a set ended its own review: ends every
 * other member still `pending` (see {@link endSettledMember}). Failures are
 * logged and left to reconcile, which meets the same members again.
 *
 * @example
 * await endOtherMembers({ store, client, mastra, review, set })
 */
export async function endOtherMembers(input: {
  store: PusharyAgentReviewStore
  client: PusharyClient
  mastra: Mastra
  review: PusharyAgentReview
  set: SettledAgentSet
}): Promise<void> {
  const log = input.mastra.getLogger()
  for (const decisionId of input.review.approverSet?.decisionIds ?? []) {
    if (decisionId === input.review.decisionId) continue
    try {
      const parsed = pusharyAgentReviewSchema.safeParse(await input.store.get(decisionId))
      if (!parsed.success || parsed.data.state !== 'pending') continue
      const member = parsed.data
      const decision = await readReviewedDecision(
        input.client,
        {
          ...agentWorkflowBinding(member, 'resumePusharyAgentReview'),
          decisionId,
          expiresAt: member.expiresAt,
        },
        new Date(),
      )
      const mismatch = checkAgentDecision(member, decision)
      if (mismatch) {
        log?.warn(`[pushary] approver decision ${decisionId} of agent run ${member.runId}: ${mismatch}`)
        continue
      }
      const ended = await endSettledMember({ ...input, review: member, decision, claimed: false })
      if (ended.status !== 'duplicate' && ended.status !== 'stale') {
        log?.warn(
          `[pushary] approver decision ${decisionId} of agent run ${member.runId} stays ${ended.status}: ${
            'reason' in ended ? ended.reason : ''
          }; reconcile retries it`,
        )
      }
    } catch (error) {
      log?.warn(
        `[pushary] ending approver decision ${decisionId} of agent run ${input.review.runId} failed (${message(error)}); reconcile retries it`,
      )
    }
  }
}

/**
 * The settled set's approvers and the decisions that settled it, for a
 * result that met the set settled by another resume; empty while unsettled.
 *
 * @example
 * Object.assign(entry, await settledApprovers(mastra, review))
 */
export async function settledApprovers(
  mastra: Mastra,
  review: PusharyAgentReview | undefined,
): Promise<{ approvers?: SettledAgentSet['approvers']; settledBy?: string[] }> {
  const set = review ? await settledSetOfRun(mastra, review).catch(() => null) : null
  return set ? { approvers: set.approvers, settledBy: set.settledBy } : {}
}
