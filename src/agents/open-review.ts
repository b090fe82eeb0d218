import type { Mastra } from '@mastra/core/mastra'
import { z } from 'zod/v4'
import { type PusharyConfig, resolvePusharyClient } from '../pushary/config.js'
import { PusharyValidationError } from '../pushary/errors.js'
import type { PusharyFallbackLink } from '../steps/approval-delivery.js'
import type { PusharyApprovers } from '../steps/approver-set.js'
import type { PusharyAgentReviewStore } from '../store/agent-review-store.js'
import type { PusharyAgentReview } from '../store/review-schema.js'
import {
  type AgentApproverSet,
  agentApproverSet,
  checkedRequester,
  checkSetCard,
  refuseOwnRequest,
  refuseSetQuestion,
  setExpiresAt,
  setMemberReviews,
} from './agent-approvers.js'
import { agentCardOf, checkedAgentTools, type PusharyAgentTools } from './agent-card.js'
import {
  APPROVABLE_AGENT_METHODS,
  checkedAgent,
  checkedReviewStore,
  durableMastraOf,
} from './agent-config.js'
import { startAgentReviewRun } from './agent-review-workflow.js'
import { normalizeSuspendedCall, type PusharyApprovableAgent } from './agent-shapes.js'
import { autoResumedBy } from './auto-resume.js'
import { withDurableApprovals } from './durable-approvals.js'
import { checkedId, type PusharyReviewSubject, prepareAgentReview } from './review-subject.js'
import { agentRunCreatedAt, findSuspendedRun } from './suspended-run.js'

/**
 * What {@link openPusharyAgentReview} needs: the exact suspended call, the
 * customer from your authenticated session, the business action version, and
 * the store your resumers share.
 *
 * @example
 * const target: PusharyAgentReviewTarget = { agent, agentId: 'order-agent', runId, toolCallId, externalId: customer.id,
 *   actionVersion: order.draftVersion, store }
 */
export interface PusharyAgentReviewTarget {
  agent: PusharyApprovableAgent
  agentId: string
  runId: string
  toolCallId: string
  /** The customer asked, from your authenticated session; or `approvers` instead. */
  externalId?: string
  /**
   * Several approvers instead of `externalId` (approval calls only): one
   * decision and one review each; the tool runs once `required` approve (default
   * all), and by default one denial declines (`veto`). Every member's review is
   * saved; the first one is returned, its `approverSet.decisionIds` naming all.
   */
  approvers?: PusharyApprovers
  /** Who asked for the action (from your session): never counts as an approver. */
  requestedBy?: string
  /** Stable for one validated draft; change it whenever the business action changes. */
  actionVersion: string
  store: PusharyAgentReviewStore
  /** Optional: reconciliation (`resumePusharyAgentReview` from a job) works without a public endpoint. */
  callbackUrl?: string
  /** Approval reviews only; a question review asks what the model asked. */
  question?: string
  expiresInSeconds?: number
  requireReachable?: boolean
  /**
   * Delivers an approval link yourself when the customer is named but has no
   * device (reachability `fallback`): the decision is then created with
   * `approvalUrl: true`. Without it such a customer is asked by push as usual.
   */
  onFallback?: (link: PusharyFallbackLink) => void | Promise<void>
  /** Sandbox keys only: the outcome the service answers with by itself (`approve`, `deny`, `no_answer`). */
  sandboxOutcome?: 'approve' | 'deny' | 'no_answer'
  subject?: PusharyReviewSubject
  /**
   * Per tool (keyed by the tool's name as the agent calls it): the risk the
   * card shows (default `medium`) and a description for the reviewer
   * (default the tool's own `description`).
   */
  tools?: PusharyAgentTools
  /** The agent's Mastra; default `agent.getMastraInstance()`. It needs storage. */
  mastra?: Mastra
}

const deliverySchema = z.object({
  callbackUrl: z.url({ protocol: /^https?$/ }).optional(),
  expiresInSeconds: z.number().int().min(1).max(2_592_000).optional(),
  requireReachable: z.boolean().optional(),
  sandboxOutcome: z.enum(['approve', 'deny', 'no_answer']).optional(),
})

/**
 * Opens the phone review of one suspended agent tool call, after Mastra
 * persisted the suspension (so the snapshot exists before anyone is
 * notified): a `requireApproval` call becomes a confirm question, a deferred
 * ask tool's suspension becomes the question the model asked. The review runs
 * as one run of the package agent review workflow; the binding (agent, run,
 * call, customer, question, input and subject fingerprints, action version)
 * is saved as `pending`. Reopening with the same inputs is idempotent; any
 * change of recipient, question, arguments, subject or version is a new
 * identity. Bad input is refused with a typed error before any request.
 *
 * @example
 * const review = await openPusharyAgentReview(config, {
 *   agent, agentId: 'order-agent', runId: run.runId, toolCallId: call.toolCallId!,
 *   externalId: customer.id, actionVersion: order.draftVersion, store: reviewStore,
 * })
 */
export async function openPusharyAgentReview(
  config: PusharyConfig,
  target: PusharyAgentReviewTarget,
): Promise<PusharyAgentReview> {
  const operation = 'openPusharyAgentReview'
  if (!target || typeof target !== 'object') {
    throw new PusharyValidationError({
      code: 'invalid_options',
      operation,
      field: 'target',
      message: 'target is required',
    })
  }
  const runId = checkedId(target.runId, 'runId', operation)
  const toolCallId = checkedId(target.toolCallId, 'toolCallId', operation)
  checkedId(target.agentId, 'agentId', operation)
  const requestedBy = checkedRequester(target.requestedBy, operation, '')
  let set: AgentApproverSet | undefined
  if (target.approvers === undefined) {
    const externalId = checkedId(target.externalId, 'externalId', operation, true)
    refuseOwnRequest(requestedBy, externalId, operation, '')
  } else {
    set = agentApproverSet(
      { externalId: target.externalId, approvers: target.approvers, requestedBy },
      operation,
      '',
    )
    if (target.onFallback !== undefined) {
      throw new PusharyValidationError({
        code: 'invalid_options',
        operation,
        field: 'target.onFallback',
        message: 'approval links (onFallback) are not available for several approvers yet',
      })
    }
  }
  checkedId(target.actionVersion, 'actionVersion', operation)
  const delivery = deliverySchema.safeParse({
    callbackUrl: target.callbackUrl,
    expiresInSeconds: target.expiresInSeconds,
    requireReachable: target.requireReachable,
    sandboxOutcome: target.sandboxOutcome,
  })
  if (target.onFallback !== undefined && typeof target.onFallback !== 'function') {
    throw new PusharyValidationError({
      code: 'invalid_options',
      operation,
      field: 'target.onFallback',
      message: 'onFallback must be a function that delivers the approval link',
    })
  }
  if (!delivery.success) {
    throw PusharyValidationError.fromZod(delivery.error, {
      operation,
      code: 'invalid_options',
      fieldPrefix: 'target',
    })
  }
  // The whole configuration is checked before anything is asked: a missing
  // store found after the decision was created would leave a person asked
  // with no review behind the question.
  const tools = checkedAgentTools(target.tools, operation, 'target.tools')
  const store = checkedReviewStore(target.store, operation)
  checkedAgent(target.agent, operation, APPROVABLE_AGENT_METHODS)
  const mastra = durableMastraOf(target.agent, target.mastra, operation)
  const client = resolvePusharyClient(config, operation)

  const runCreatedAt = (await agentRunCreatedAt(target.agent, runId)) ?? null
  const listed = await findSuspendedRun(target.agent, runId, {}, runCreatedAt)
  const run = listed ? await withDurableApprovals(mastra, listed) : undefined
  const raw = run?.toolCalls.find((call) => call.toolCallId === toolCallId)
  if (!run || !raw) {
    throw new PusharyValidationError({
      code: 'invalid_identifier',
      operation,
      field: 'toolCallId',
      message: 'the exact agent tool call is not suspended',
    })
  }
  const autoResumed = await autoResumedBy(target.agent, { ...run, toolCallId })
  if (autoResumed) {
    throw new PusharyValidationError({
      code: 'invalid_identifier',
      operation,
      field: 'toolCallId',
      message: autoResumed,
    })
  }
  const call = normalizeSuspendedCall(raw)
  if (set) refuseSetQuestion(call.kind, operation)
  const card = await agentCardOf({
    agent: target.agent,
    agentId: target.agentId,
    call,
    tools,
    given: target.subject?.presentation,
  })
  const { binding, stepSubject } = prepareAgentReview({
    operation,
    agentId: target.agentId,
    run,
    call,
    externalId: set ? (set.externalIds[0] as string) : (target.externalId as string),
    actionVersion: target.actionVersion,
    question: target.question,
    subject: target.subject,
    card,
    approverSet: set,
  })
  if (set) checkSetCard(set, stepSubject.parameters, operation)
  const { decisionId, expiresAt, approvers } = await startAgentReviewRun({
    mastra,
    client,
    binding,
    ask: { subject: stepSubject, delivery: delivery.data },
    ...(runCreatedAt ? { agentRunCreatedAt: runCreatedAt } : {}),
    ...(target.onFallback ? { onFallback: target.onFallback } : {}),
    operation,
  })
  if (set) {
    // One review per approver, each resumable by its own decision.
    const members = setMemberReviews(binding, approvers ?? [], setExpiresAt(delivery.data))
    for (const member of members) await store.save(member)
    return members[0] as PusharyAgentReview
  }
  const review: PusharyAgentReview = {
    target: 'agent',
    ...binding,
    decisionId,
    correlationId: decisionId,
    ...(expiresAt === undefined ? {} : { expiresAt }),
    state: 'pending',
  }
  await store.save(review)
  return review
}
