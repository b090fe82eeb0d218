/**
 * How the reviews of several approvers end. Each approver's decision has its
 * own review; the approval step settles the set (`steps/approver-set.ts`)
 * on whichever review's resume reads enough answers. Then:
 * - the review whose resume did not settle the set ends `completed` with no
 *   action outcome (its answer was applied; the run waits on the others);
 * - the review whose resume settled it ends as any review does, from the
 *   evidence, with the step's verdict (not its own answer) as `approved`;
 * - every other member ends once the step returned: `completed` when its
 *   answer was counted, `stale` when it was withdrawn (cancelled at the
 *   service first, if still open) or answered late; the reason says which
 *   decisions settled the set, so the record is the same whichever worker got
 *   there first.
 */
import type { PusharyWorkflowReview } from '../store/review-schema.js'
import type { PusharyDispatchResult } from './dispatch-types.js'
import { errorMessage } from './resume-error.js'
import type { DispatchContext } from './review-kinds.js'
import { loadRunSnapshot, type RunSnapshotView } from './run-position.js'
import { type VerifiedAnswer, verifiedAnswer } from './verified-answer.js'

interface SetMember {
  externalId: string
  decisionId: string
  status: string
  approved: boolean
  answeredAt: string | null
  late?: boolean
}

/** The settled set as the step returned it (its output in the run). */
export interface SettledSet {
  approved: boolean
  approvers: SetMember[]
  settledBy: string[]
  rule: { required: number; veto: boolean; externalIds: string[] }
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined
}

/**
 * The step's settled set from a run's step results (a resume's `steps` or a
 * snapshot's `context`), or `null` when the step has not returned one.
 *
 * @example
 * const set = settledSetOf(snapshot.context, review.stepId)
 */
export function settledSetOf(steps: unknown, stepId: string): SettledSet | null {
  const step = record(record(steps)?.[stepId])
  if (step?.status !== 'success') return null
  const output = record(step.output)
  if (!output || typeof output.approved !== 'boolean') return null
  if (!Array.isArray(output.approvers) || !Array.isArray(output.settledBy) || !record(output.rule))
    return null
  return output as unknown as SettledSet
}

/** One line: how the set was settled, and by which decisions. */
export function describeSet(set: SettledSet): string {
  const by = set.settledBy
    .map((id) => `${id} (${set.approvers.find((member) => member.decisionId === id)?.externalId ?? '?'})`)
    .join(', ')
  const answers = set.approvers
    .map(
      (member) =>
        `${member.externalId}: ${member.status}${member.status === 'answered' ? (member.approved ? ' yes' : ' no') : ''}${
          member.answeredAt ? ` at ${member.answeredAt}` : ''
        }${member.late ? ' (late, changes nothing)' : ''}`,
    )
    .join('; ')
  return `the approvers' set was ${set.approved ? 'approved' : 'declined'} (${set.rule.required} of ${
    set.rule.externalIds.length
  } required${set.rule.veto ? ', one denial declines' : ''}), settled by ${by} [${answers}]`
}

/**
 * After a resume that left the step suspended: whether the step consumed
 * this review's answer and waits on the other approvers (then the review
 * ends `completed`, nothing past the approval ran), else `null` (the caller
 * releases the review as for one approver).
 *
 * @example
 * const ended = await endAppliedMember(context, review)
 * if (ended) return ended
 */
export async function endAppliedMember(
  context: DispatchContext,
  review: PusharyWorkflowReview,
  verified: VerifiedAnswer,
): Promise<PusharyDispatchResult | null> {
  const snapshot = await loadRunSnapshot(context.mastra, review.workflowId, review.runId)
  const payload = record(record(snapshot?.context[review.stepId])?.suspendPayload)
  const members = Array.isArray(payload?.approvers) ? (payload.approvers as SetMember[]) : []
  const self = members.find((member) => member.decisionId === review.decisionId)
  if (!self || self.status === 'pending') return null
  const approvals = members.filter((member) => member.approved).length
  const reason = `the answer was applied; the step waits on the other approvers (${approvals} of ${
    review.approverSet?.required ?? '?'
  } approvals so far)`
  try {
    await context.store.finish(review.decisionId, 'completed', reason)
  } catch (error) {
    return {
      status: 'uncertain',
      decisionId: review.decisionId,
      reason,
      persistenceError: errorMessage(error),
    }
  }
  return {
    status: 'resumed',
    decisionId: review.decisionId,
    workflowId: review.workflowId,
    runId: review.runId,
    answer: verified.answer,
    runStatus: snapshot?.status ?? 'suspended',
  }
}

/**
 * Ends one member's review once the step returned its settled set: the
 * decision, if still open, is withdrawn first; then the review is claimed
 * (noting when it was answered) and finished with the set's record.
 *
 * @example
 * if (review.approverSet && progress === 'completed') return endSetMember(context, review, snapshot, verified)
 */
export async function endSetMember(
  context: DispatchContext,
  review: PusharyWorkflowReview,
  set: SettledSet,
  verified: VerifiedAnswer | PusharyDispatchResult,
): Promise<PusharyDispatchResult> {
  const decisionId = review.decisionId
  const answered = 'answer' in verified && 'decision' in verified ? verified : null
  if (!answered) {
    // Still open (or unreadable): withdraw it so it leaves the phone.
    try {
      await context.client.decisions.cancel(decisionId)
    } catch (error) {
      return {
        status: 'pending',
        decisionId,
        reason: `${describeSet(set)}; withdrawing this decision failed (${errorMessage(error)}); retried by the next reconcile`,
      }
    }
  }
  const { counted, reason } = memberEnding(review, set, answered)
  const claim = await context.store.claim(
    decisionId,
    review.runId,
    SET_MEMBER_ENDING,
    answered ? { answeredAt: answered.answeredAt } : undefined,
  )
  if (claim === 'busy') return { status: 'busy', decisionId, reason }
  if (claim === 'settled') return { status: 'duplicate', decisionId, reason }
  return finishMember(context, decisionId, counted, reason)
}

/** The claim reason a member's review is ended under; recovery tells it from a resume's claim. */
const SET_MEMBER_ENDING = 'ending an approver of a settled set'

/** How one member ends by the settled set: counted (`completed`) or not (`stale`), and why. */
function memberEnding(
  review: PusharyWorkflowReview,
  set: SettledSet,
  answered: VerifiedAnswer | null,
): { counted: boolean; reason: string } {
  const self = set.approvers.find((member) => member.decisionId === review.decisionId)
  const counted = answered !== null && self !== undefined && self.status !== 'pending' && self.late !== true
  const what =
    answered?.answer.status === 'answered'
      ? `${review.externalId} answered ${JSON.stringify(answered.answer.value)}${
          answered.decision.answeredAt ? ` at ${answered.decision.answeredAt}` : ''
        }`
      : answered
        ? `the decision of ${review.externalId} is ${answered.answer.status}`
        : `${review.externalId} had not answered`
  const reason = counted
    ? `${what}, counted: ${describeSet(set)}`
    : answered && answered.answer.status === 'answered'
      ? `${what} after ${describeSet(set)}; the late answer changes nothing`
      : `${what}; withdrawn (cancelled at the service): ${describeSet(set)}`
  return { counted, reason }
}

async function finishMember(
  context: DispatchContext,
  decisionId: string,
  counted: boolean,
  reason: string,
): Promise<PusharyDispatchResult> {
  try {
    await context.store.finish(decisionId, counted ? 'completed' : 'stale', reason)
  } catch (error) {
    return { status: 'uncertain', decisionId, reason, persistenceError: errorMessage(error) }
  }
  return counted ? { status: 'duplicate', decisionId, reason } : { status: 'stale', decisionId, reason }
}

/**
 * Recovery of a member review whose ending was cut short after its claim
 * (the claim taken to end it with the settled set's record, not to resume
 * the run): it ends as the set says, with no action outcome, since the
 * member whose resume settled the set records what the action did. `null`
 * when the claim was a resume's (the caller recovers it as one).
 *
 * @example
 * const ended = await recoverSetMemberEnding(context, review, snapshot, verified)
 * if (ended) return ended
 */
export async function recoverSetMemberEnding(
  context: DispatchContext,
  review: PusharyWorkflowReview,
  snapshot: RunSnapshotView,
  verified: VerifiedAnswer,
): Promise<PusharyDispatchResult | null> {
  const set = settledSetOf(snapshot.context, review.stepId)
  if (!set) return null
  const claim = (await context.store.history(review.decisionId)).findLast(
    (transition) => transition.from === 'pending' && transition.to === 'resuming',
  )
  if (claim?.reason !== SET_MEMBER_ENDING) return null
  const { counted, reason } = memberEnding(review, set, verified)
  return finishMember(context, review.decisionId, counted, `recovered: ${reason}`)
}

/**
 * After the review that settled the set ended: ends every other member
 * still `pending` (see {@link endSetMember}). Failures are logged and left to
 * reconcile, which meets the same members again.
 *
 * @example
 * await endOtherMembers(context, review)
 */
export async function endOtherMembers(
  context: DispatchContext,
  review: PusharyWorkflowReview,
  from?: RunSnapshotView | SettledSet | null,
): Promise<void> {
  // The resume that settled the set hands over the set it returned: no
  // snapshot read for it.
  let set = from && 'settledBy' in from ? from : null
  if (!set) {
    const run = from ?? (await loadRunSnapshot(context.mastra, review.workflowId, review.runId))
    set = run && 'context' in run ? settledSetOf(run.context, review.stepId) : null
  }
  if (!set) return
  // The set's output lists every member asked, escalated tiers included
  // (a member asked before an escalation does not know the later ones).
  const ids = [
    ...new Set([...(review.approverSet?.decisionIds ?? []), ...set.approvers.map((m) => m.decisionId)]),
  ]
  const log = context.mastra.getLogger()
  // Each member's review ends on its own (its own claim), all at once.
  const endOne = async (decisionId: string): Promise<void> => {
    try {
      const member = await context.store.get(decisionId)
      if (member?.state !== 'pending' || member.target !== 'workflow-step') return
      const verified = await verifiedAnswer(context, member)
      const result = await endSetMember(context, member, set, verified)
      if (result.status === 'pending' || result.status === 'uncertain') {
        log?.warn(
          `[pushary] approver decision ${decisionId} of run ${review.runId}: ${result.reason ?? result.status}`,
        )
      }
    } catch (error) {
      log?.warn(
        `[pushary] ending approver decision ${decisionId} of run ${review.runId} failed (${errorMessage(error)}); reconcile retries it`,
      )
    }
  }
  await Promise.all(ids.filter((decisionId) => decisionId !== review.decisionId).map(endOne))
}
