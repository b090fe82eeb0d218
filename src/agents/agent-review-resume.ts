/**
 * The one resume path of agent reviews. The dispatcher calls it for reviews
 * whose target is `agent`; `resumePusharyAgentReview` is this same function
 * behind the README's signature.
 *
 * Order matters: the decision is re-read and checked against the saved
 * binding, and the answer validated, BEFORE the claim (a refusal leaves the
 * review pending and unclaimed); everything after the claim that fails ends
 * the review `uncertain`, which is never retried automatically. Mastra's
 * agent loop may run a tool twice under concurrent approvals, so the claim is
 * taken before every approve, decline or resume.
 */
import type { Mastra } from '@mastra/core/mastra'
import type { PusharyClient } from '../pushary/client.js'
import { PusharyValidationError } from '../pushary/errors.js'
import { idSchema } from '../pushary/identity.js'
import { answerPusharyQuestion, type PusharyAnswer } from '../pushary/question.js'
import { type ActionEnding, finishWithOutcome } from '../resume/action-evidence.js'
import { claimNotingAnswer, logVerifiedAnswer } from '../resume/answer-notes.js'
import { DEFAULT_CLAIM_LEASE_MS, hasClaimLease, whileHoldingClaim } from '../resume/claim-lease.js'
import { storedStateResult } from '../resume/review-status.js'
import { readReviewedDecision } from '../steps/decision-expiry.js'
import type { PusharyAgentReviewStore } from '../store/agent-review-store.js'
import { type PusharyAgentReview, pusharyAgentReviewSchema } from '../store/review-schema.js'
import { agentWorkflowBinding, checkAgentDecision } from './agent-binding.js'
import { type ReviewRunState, reviewRunState, staleCallCause } from './agent-resume-causes.js'
import { agentToolProblem, questionResumeData, resumeDataProblem } from './agent-resume-data.js'
import type { AgentResumeRefusal, PusharyAgentResumeOutcome } from './agent-resume-outcome.js'
import {
  claimRefused,
  endAgentReview,
  endCounted,
  endStale,
  releaseClaim,
  resumedByAnother,
} from './agent-resume-outcome.js'
import { resumeAgentReviewRun } from './agent-review-run.js'
import { agentResumeSpans } from './agent-review-spans.js'
import { agentRunCreatedAtOf } from './agent-review-workflow.js'
import { type SettledAgentSet, setAnswer, settledAgentSetOf } from './agent-set-answer.js'
import {
  endMemberElsewhere,
  endOtherMembers,
  endSettledMember,
  settledSetOfRun,
} from './agent-set-endings.js'
import type { PusharyResumableAgent } from './agent-shapes.js'
import { autoResumedBy } from './auto-resume.js'
import { withDurableApprovals } from './durable-approvals.js'
import { findSuspendedRun } from './suspended-run.js'
import { agentRunEnding } from './tool-call-outcome.js'

export type { AgentResumeRefusal, PusharyAgentResumeOutcome } from './agent-resume-outcome.js'

export interface AgentReviewResumeInput {
  client: PusharyClient
  store: PusharyAgentReviewStore
  decisionId: string
  /** The agent to resume; default: the agent registered under the review's `agentId`. */
  agent?: PusharyResumableAgent | undefined
  mastra?: Mastra | undefined
  /** When given, the saved review must belong to this agent and customer. */
  expect?: { agentId?: string | undefined; externalId?: string | undefined }
  currentActionVersion?: ((review: PusharyAgentReview) => Promise<string> | string) | undefined
  mode?: 'generate' | 'stream' | undefined
  /** The claim lease (default 30 s); see `whileHoldingClaim`. */
  claimLeaseMs?: number | undefined
  now?: (() => Date) | undefined
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

function mastraOf(input: AgentReviewResumeInput): Mastra | undefined {
  if (input.mastra) return input.mastra
  const agent = input.agent as { getMastraInstance?: () => Mastra | undefined } | undefined
  return agent?.getMastraInstance?.()
}

/**
 * Verifies, claims and resumes one agent review (see the module comment).
 *
 * @example
 * const outcome = await resumeAgentReview({ client, store, decisionId, agent })
 */
export async function resumeAgentReview<TOutput = unknown>(
  input: AgentReviewResumeInput,
): Promise<PusharyAgentResumeOutcome<TOutput> | AgentResumeRefusal> {
  const operation = 'resumePusharyAgentReview'
  const parsedId = idSchema.safeParse(input.decisionId)
  if (!parsedId.success) {
    throw PusharyValidationError.fromZod(parsedId.error, {
      operation,
      code: 'invalid_identifier',
      fieldPrefix: 'decisionId',
    })
  }
  const decisionId = parsedId.data
  const raw = await input.store.get(decisionId)
  if (!raw) {
    return {
      status: 'unknown',
      decisionId,
      reason: 'no review is saved for this decision yet',
      reasonCode: 'no_review',
    }
  }
  const parsed = pusharyAgentReviewSchema.safeParse(raw)
  if (!parsed.success) {
    throw PusharyValidationError.fromZod(parsed.error, {
      operation,
      code: 'invalid_response',
      fieldPrefix: 'review',
    })
  }
  const review = parsed.data
  for (const field of ['agentId', 'externalId'] as const) {
    const wanted = input.expect?.[field]
    if (wanted !== undefined && wanted !== review[field]) {
      throw new PusharyValidationError({
        code: field === 'externalId' ? 'invalid_external_id' : 'invalid_identifier',
        operation,
        field,
        message: 'the review belongs to a different customer or agent',
      })
    }
  }
  if (review.decisionId !== decisionId) {
    throw new PusharyValidationError({
      code: 'invalid_identifier',
      operation,
      field: 'decisionId',
      message: 'the store returned another decision',
    })
  }
  const leaseMs = input.claimLeaseMs ?? DEFAULT_CLAIM_LEASE_MS
  const blocked = await storedStateResult(input.store, review, {
    leaseMs,
    now: input.now?.() ?? new Date(),
  })
  if (blocked) return blocked

  // The callback body is never authority: the answer comes from the service.
  const decision = await readReviewedDecision(
    input.client,
    { ...agentWorkflowBinding(review, operation), decisionId, expiresAt: review.expiresAt },
    input.now?.() ?? new Date(),
  )
  const mismatch = checkAgentDecision(review, decision)
  if (mismatch) return { status: 'mismatch', decisionId, reason: mismatch }
  const mastra = mastraOf(input)
  if (review.approverSet && mastra) {
    // Several approvers: once the set is settled this member only ends, from its record.
    const set = await settledSetOfRun(mastra, review)
    if (set)
      return endSettledMember({
        store: input.store,
        client: input.client,
        review,
        decision,
        set,
        claimed: false,
      })
  }
  if (decision.status === 'pending') {
    return {
      status: 'pending',
      decisionId,
      reason: 'the person has not answered yet',
      reasonCode: 'not_answered',
    }
  }
  let answer: PusharyAnswer
  try {
    answer = answerPusharyQuestion(review.question, decision.status, decision.value)
  } catch (error) {
    return { status: 'invalid_answer', decisionId, reason: message(error) }
  }
  const answeredAt = logVerifiedAnswer({
    mastra,
    decisionId,
    runId: review.runId,
    decision,
    approved: answer.approved,
    target: 'agent',
    now: input.now?.() ?? new Date(),
  })
  const agent =
    input.agent ?? (mastra?.getAgentById(review.agentId) as unknown as PusharyResumableAgent | undefined)
  if (!mastra || !agent) {
    throw new PusharyValidationError({
      code: 'invalid_options',
      operation,
      field: 'agent',
      message: 'pass the agent (registered on a Mastra with storage) or a Mastra that has it',
    })
  }

  // An agent without the tool would "approve" a call nothing executes, and
  // the review would end completed with zero executions: refuse before the claim.
  const noTool = await agentToolProblem(agent, review.toolName)
  if (noTool) {
    throw new PusharyValidationError({
      code: 'invalid_options',
      operation,
      field: `agent.tools.${review.toolName}`,
      message: noTool,
    })
  }
  if (review.kind === 'question') {
    // Mastra consumes a suspension whose resume data fails the tool's resumeSchema: check first.
    const problem = await resumeDataProblem(agent, review.toolName, questionResumeData(decisionId))
    if (problem) {
      throw new PusharyValidationError({
        code: 'invalid_options',
        operation,
        field: `agent.tools.${review.toolName}.resumeSchema`,
        message: problem,
      })
    }
  }
  // Read before the claim: a memory that cannot be read leaves the review pending (retried), never uncertain.
  const autoResumed = await autoResumedBy(agent, review)
  // A storage that does not know the review run is refused here, before the
  // claim. This read is also where the review run stands for the resume: a
  // resume of the review run that bypassed this store after it (the only kind
  // the claim does not exclude) is caught below, by the agent run no longer
  // holding the call, or by Mastra's own claim on the review run (`taken`),
  // each of which reads the review run again.
  const before = await reviewRunState(mastra, review, operation)

  const spans = await agentResumeSpans(
    mastra,
    review,
    decision,
    answer,
    before.state === 'waiting' ? before.context : undefined,
  )
  const claim = await claimNotingAnswer(input.store, decisionId, review.runId, answeredAt)
  spans.claimed(claim)
  if (claim !== 'claimed') return spans.ended(await claimRefused(input.store, review, claim))

  const scope = {
    ...(review.threadId === undefined ? {} : { threadId: review.threadId }),
    ...(review.resourceId === undefined ? {} : { resourceId: review.resourceId }),
  }
  let output: TOutput | undefined
  let ending: ActionEnding | undefined
  // Set inside the claimed work below (a holder, so the compiler does not narrow it to null).
  let settled = null as SettledAgentSet | null
  // A run another caller resumed: for several approvers, a member of the set it settled.
  const elsewhere = (run: Exclude<ReviewRunState, { state: 'waiting' }>) =>
    review.approverSet
      ? endMemberElsewhere({ store: input.store, client: input.client, mastra, review, decision }, run)
      : resumedByAnother(input.store, decisionId, run)
  // The claim is kept alive while the native resume runs, so recovery never
  // takes over a live resumer (a four-operation store of the user's own
  // cannot tell; its claims are never taken over automatically).
  const holding = <T>(work: () => Promise<T>): Promise<T> =>
    hasClaimLease(input.store) ? whileHoldingClaim(input.store, decisionId, leaseMs, work) : work()
  const ended = await holding(async (): Promise<PusharyAgentResumeOutcome<TOutput> | null> => {
    try {
      // The review run first: a caller without this store may have resumed it,
      // and then the agent run is gone because of that resume, not "outside".
      if (before.state !== 'waiting') return await elsewhere(before)
      // The open kept the agent run's creation time in the review run's input.
      const listed = await findSuspendedRun(agent, review.runId, scope, agentRunCreatedAtOf(before.context))
      const suspended = listed ? await withDurableApprovals(mastra, listed) : undefined
      const changed = staleCallCause(review, suspended)
      if (changed) {
        const after = await reviewRunState(mastra, review, operation)
        if (after.state !== 'waiting') return await elsewhere(after)
        return await endStale(input.store, decisionId, changed)
      }
      const current = input.currentActionVersion
        ? await input.currentActionVersion(review)
        : review.actionVersion
      if (current !== review.actionVersion) {
        return await endStale(input.store, decisionId, {
          reasonCode: 'action_version_changed',
          reason: `The business action changed before resumption: version ${review.actionVersion} was reviewed, ${current} is current.`,
        })
      }
      if (autoResumed) {
        return await endStale(input.store, decisionId, { reasonCode: 'auto_resumed', reason: autoResumed })
      }
      // `before` above found the review run waiting on this decision.
      const run = await resumeAgentReviewRun({
        mastra,
        client: input.client,
        binding: review,
        answer,
        decision,
        hook: {
          agent,
          mode: input.mode ?? 'generate',
          decisionId,
          deliver: (delivered) => {
            output = delivered as TOutput
          },
        },
      })
      if (run.status === 'suspended') return await releaseClaim(input.store, decisionId)
      if (run.status === 'counted') {
        return await endCounted(input.store, decisionId, {
          approvals: run.approvals,
          required: review.approverSet?.required ?? 0,
        })
      }
      if (run.status === 'taken') {
        const taken = await reviewRunState(mastra, review, operation)
        if (taken.state !== 'waiting') return await elsewhere(taken)
        throw new Error('the review workflow run refused the resume but still waits on this decision')
      }
      // Evidence before status: the run ended `success` even when the tool
      // threw or refused its input; only the tool's own result says it ran.
      const result = 'result' in run ? run.result : undefined
      const read = agentRunEnding(review.kind, result)
      ending = read
      settled = settledAgentSetOf((result as { approverSet?: unknown } | null)?.approverSet)
      if (read.state !== 'completed') return await endAgentReview(input.store, decisionId, read, output)
      await finishWithOutcome(input.store, decisionId, 'completed', undefined, read)
    } catch (error) {
      const reason = message(error)
      try {
        await finishWithOutcome(input.store, decisionId, 'uncertain', reason, { outcome: 'unknown', reason })
        return {
          status: 'uncertain',
          decisionId,
          reason,
          reasonCode: 'resume_failed',
          actionOutcome: 'unknown',
          ...(output === undefined ? {} : { output }),
        }
      } catch (persistence) {
        return {
          status: 'uncertain',
          decisionId,
          reason,
          reasonCode: 'resume_failed',
          actionOutcome: 'unknown',
          ...(output === undefined ? {} : { output }),
          persistenceError: message(persistence),
        }
      }
    }
    return null
  })
  // The set's other members end once this review did (their claims wait on it).
  if (settled)
    await endOtherMembers({ store: input.store, client: input.client, mastra, review, set: settled })
  if (ended) return spans.ended(ended)

  const resumed = {
    status: 'resumed' as const,
    decisionId,
    review: { ...review, state: 'completed' as const },
    // Several approvers: the set's verdict, not this member's own answer.
    answer: settled ? setAnswer(settled) : answer,
    output: output as TOutput,
    ...(ending?.outcome == null ? {} : { actionOutcome: ending.outcome }),
    ...(settled ? { approvers: settled.approvers, settledBy: settled.settledBy } : {}),
  }
  spans.ended(resumed)
  try {
    const finish = (output as { finishReason?: unknown } | undefined)?.finishReason
    const reason = finish instanceof Promise ? await finish : finish
    // A generation that finished leaves nothing pending, even while a
    // DurableAgent still lists the run (it deletes its snapshot later).
    if (reason !== 'suspended') return { ...resumed, pending: [] }
    const still = await findSuspendedRun(
      agent,
      review.runId,
      scope,
      before.state === 'waiting' ? agentRunCreatedAtOf(before.context) : undefined,
    )
    const pending = still ? [still] : []
    if (pending.length === 0) {
      return {
        ...resumed,
        pending,
        discoveryError: 'Mastra returned a suspension but its snapshot is not discoverable.',
      }
    }
    return { ...resumed, pending }
  } catch (error) {
    return { ...resumed, pending: [], discoveryError: message(error) }
  }
}
