import type { Mastra } from '@mastra/core/mastra'
import { type PusharyConfig, resolvePusharyClient } from '../pushary/config.js'
import { PusharyValidationError } from '../pushary/errors.js'
import type { PusharySuspendedAgentRun } from '../resume/dispatch-types.js'
import type { PusharyReasonCode } from '../resume/review-status.js'
import type { PusharyFallbackLink } from '../steps/approval-delivery.js'
import type { PusharyApprovers } from '../steps/approver-set.js'
import type { PusharyAgentReviewStore } from '../store/agent-review-store.js'
import type { PusharyAgentReview } from '../store/review-schema.js'
import {
  checkResolverRecipients,
  checkSetCard,
  type PusharyApproverOutcome,
  resolverRecipients,
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
import { settledApprovers } from './agent-set-endings.js'
import { type NormalizedCall, normalizeSuspendedCall, type PusharyResumableAgent } from './agent-shapes.js'
import { resolveByPolicy } from './approval-policy.js'
import { withDurableApprovals } from './durable-approvals.js'
import { nothingFoundReason } from './nothing-found.js'
import { resumeOnce, settleAgentSet, waitForAnswer } from './resolution-waits.js'
import { checkedId, type PusharyReviewSubject, prepareAgentReview } from './review-subject.js'
import { createRunLocalStore } from './run-local-store.js'
import { findSuspendedRun } from './suspended-run.js'

/**
 * One suspended approval handed to the `subject`/`question`/`externalId` resolvers.
 *
 * @example
 * const subject = (pending: PusharyPendingApproval) => ({ toolTarget: `order ${(pending.args as { orderId: string }).orderId}` })
 */
export interface PusharyPendingApproval {
  runId: string
  threadId?: string | undefined
  resourceId?: string | undefined
  toolCallId: string | undefined
  toolName: string | undefined
  args: unknown
}

/**
 * Configuration of {@link resolvePusharyApprovals}.
 *
 * @example
 * const config: PusharyApprovalConfig = { apiKey, externalId: customer.id, policy: false, maxApprovals: 5 }
 */
export interface PusharyApprovalConfig extends PusharyConfig {
  /** From your authenticated session, never from tool arguments; or `approvers` instead. */
  externalId?: string | ((pending: PusharyPendingApproval) => string)
  /**
   * Several approvers instead of `externalId`: one decision each; the call is
   * approved once `required` approve (default all), and by default one
   * denial declines it (`veto`). A policy `deny` still declines; an `allow`
   * does not replace the people you named.
   */
  approvers?: PusharyApprovers | ((pending: PusharyPendingApproval) => PusharyApprovers)
  /** Who asked for the action (from your session): never counts as an approver. */
  requestedBy?: string | ((pending: PusharyPendingApproval) => string)
  /** `false`: a person must answer even where a workspace policy would allow. Default: ask `/authorize` first. */
  policy?: boolean
  subject?: (pending: PusharyPendingApproval) => PusharyReviewSubject
  /** Per tool: the risk the card shows (default `medium`) and a description for the reviewer (default the tool's own). */
  tools?: PusharyAgentTools
  question?: (pending: PusharyPendingApproval) => string
  /** 1–100, default 10. */
  maxApprovals?: number
  /** Local wait per approval, default 55 000 ms; an unanswered call is then declined. */
  timeoutMs?: number
  expiresInSeconds?: number
  requireReachable?: boolean
  /** Sandbox keys only: the outcome the service answers with by itself (`approve`, `deny`, `no_answer`). */
  sandboxOutcome?: 'approve' | 'deny' | 'no_answer'
  /** Delivers an approval link yourself to a customer without a device (see `pusharyApprovalStep`). */
  onFallback?: (link: PusharyFallbackLink) => void | Promise<void>
  /** Shared claim store across processes; without it the review workflow run's own claim guards the resume. */
  store?: PusharyAgentReviewStore
  actionVersion?: string
}

/** @example const target: PusharyApprovalTarget = { agent, runs } */
export interface PusharyApprovalTarget {
  agent: PusharyResumableAgent
  runs?: PusharySuspendedAgentRun[]
  threadId?: string
  resourceId?: string
  /** `true` returns each resumed generation as the native (settled, replayable) stream. */
  stream?: boolean
  mastra?: Mastra
}

/** @example for (const review of outcome.resolved) if (review.output) await save(review.output) */
export interface PusharyResolvedApproval<TOutput = unknown> {
  runId: string
  toolName?: string | undefined
  toolCallId?: string | undefined
  approved: boolean
  reason?: string
  /**
   * Why this entry is not this call's own resume: `resumed_elsewhere` when a
   * concurrent resolver resumed it first (`approved` is that resolver's
   * verdict, `output` is with it), or the code of a failed resume.
   */
  reasonCode?: PusharyReasonCode
  output?: TOutput
  reviewError?: string
  resumeError?: string
  discoveryError?: string
  /** Several approvers: each one's answer (`approved`, `answeredAt`, `late`), once the set settled. */
  approvers?: PusharyApproverOutcome[]
  /** Several approvers: the decisions whose answers settled the set. */
  settledBy?: string[]
}

/** @example if (!outcome.allApproved) await handlePendingRuns(outcome.pending) */
export interface PusharyApprovalOutcome<TOutput = unknown> {
  resolved: PusharyResolvedApproval<TOutput>[]
  pending: PusharySuspendedAgentRun[]
  /** Suspended approvals found (handled or left pending); `0` reads as nothing to approve, never as approval. */
  found: number
  /** True only when at least one approval was found and every one was approved. */
  allApproved: boolean
  /** Set when nothing was found: `nothing_found`, with `reason` naming the likely cause. */
  reasonCode?: 'nothing_found'
  reason?: string
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

async function finishOf(output: unknown): Promise<unknown> {
  const reason = (output as { finishReason?: unknown } | null)?.finishReason
  return reason instanceof Promise ? await reason : reason
}

function validate(
  config: PusharyApprovalConfig,
  target: PusharyApprovalTarget,
): { maxApprovals: number; mastra: Mastra; tools: PusharyAgentTools } {
  const operation = 'resolvePusharyApprovals'
  const fail = (field: string, text: string): never => {
    throw new PusharyValidationError({ code: 'invalid_options', operation, field, message: text })
  }
  if (!target || typeof target !== 'object' || !target.agent) fail('target.agent', 'the agent is required')
  if (config.onFallback !== undefined && typeof config.onFallback !== 'function') {
    fail('config.onFallback', 'must be a function that delivers the approval link')
  }
  checkedAgent(target.agent, operation, APPROVABLE_AGENT_METHODS, 'target.agent')
  if (config.store !== undefined) checkedReviewStore(config.store, operation, 'config.store')
  // Every approval runs as a review workflow run on the agent's Mastra: refused
  // here, before any run is listed or anyone is asked, not per call later.
  const mastra = durableMastraOf(target.agent, target.mastra, operation)
  if (!target.runs && !target.threadId && !target.resourceId) {
    fail(
      'target',
      'provide trusted runs or a customer-scoped threadId/resourceId; unfiltered global resolution is refused',
    )
  }
  const max = config.maxApprovals ?? 10
  if (!Number.isInteger(max) || max < 1 || max > 100)
    fail('config.maxApprovals', 'must be an integer from 1 to 100')
  if (config.approvers !== undefined) checkResolverRecipients(config, operation)
  else if (typeof config.externalId === 'string') {
    checkedId(config.externalId, 'config.externalId', operation, true)
    checkResolverRecipients(config, operation)
  } else if (typeof config.externalId !== 'function') fail('config.externalId', 'the customer is required')
  else checkResolverRecipients(config, operation)
  return { maxApprovals: max, mastra, tools: checkedAgentTools(config.tools, operation, 'config.tools') }
}

/**
 * Resolves Mastra's native tool approvals (`requireApproval`,
 * `requireToolApproval`, the supervisor's delegated ones) with a phone
 * answer, blocking until the customer answers or the local wait ends.
 * Every approval is a run of the package agent review workflow. Returns the
 * generations (`resolved[].output`) and the runs left waiting; stops a run at
 * a data question, `maxApprovals` or an error, keeping earlier generations.
 *
 * @example
 * const outcome = await resolvePusharyApprovals(
 *   { ...config, externalId: customer.id, policy: false, maxApprovals: 5 },
 *   { agent, runs: runs.filter((run) => run.runId === output.runId) },
 * )
 */
export async function resolvePusharyApprovals<TOutput = unknown>(
  config: PusharyApprovalConfig,
  target: PusharyApprovalTarget,
): Promise<PusharyApprovalOutcome<TOutput>> {
  const operation = 'resolvePusharyApprovals'
  const { maxApprovals, mastra, tools } = validate(config, target)
  const client = resolvePusharyClient(config, operation)
  const agent = target.agent
  const scope = {
    ...(target.threadId ? { threadId: target.threadId } : {}),
    ...(target.resourceId ? { resourceId: target.resourceId } : {}),
  }
  const initial = target.runs ?? (await agent.listSuspendedRuns(scope)).runs
  const resolved: PusharyResolvedApproval<TOutput>[] = []
  const pending: PusharySuspendedAgentRun[] = []
  const mode = target.stream ? 'stream' : 'generate'
  let found = 0

  for (const first of initial) {
    let run: PusharySuspendedAgentRun | undefined = first
    const seen = new Set<string>()
    while (run) {
      let current: PusharySuspendedAgentRun = run
      run = undefined
      try {
        current = await withDurableApprovals(mastra, current)
      } catch (error) {
        resolved.push({ runId: current.runId, approved: false, discoveryError: message(error) })
        pending.push(current)
        break
      }
      const call: NormalizedCall | undefined = current.toolCalls
        .map(normalizeSuspendedCall)
        .find((candidate) => candidate.kind === 'approval' && !seen.has(String(candidate.toolCallId)))
      if (call) found++
      if (!call || resolved.length >= maxApprovals) {
        pending.push(current)
        break
      }
      seen.add(String(call.toolCallId))
      const entry: PusharyResolvedApproval<TOutput> = {
        runId: current.runId,
        toolName: call.toolName,
        toolCallId: call.toolCallId,
        approved: false,
      }
      const view: PusharyPendingApproval = {
        runId: current.runId,
        threadId: current.threadId,
        resourceId: current.resourceId,
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        args: call.args,
      }
      let decisionId: string
      let store: PusharyAgentReviewStore
      let members: PusharyAgentReview[] | undefined
      try {
        if (!call.toolCallId || !call.toolName)
          throw new Error('suspended approvals require a toolCallId and toolName')
        const { externalId, set } = resolverRecipients(config, view, operation)
        const question = config.question?.(view)
        const subject = config.subject?.(view)
        const agentId = (agent as { id?: string }).id ?? 'agent'
        const card = await agentCardOf({
          agent,
          agentId,
          call,
          tools,
          given: subject?.presentation,
        })
        const { binding, stepSubject } = prepareAgentReview({
          operation,
          agentId,
          run: current,
          call,
          externalId,
          actionVersion: config.actionVersion ?? 'current',
          question,
          subject,
          card,
          approverSet: set,
        })
        if (set) checkSetCard(set, stepSubject.parameters, operation)
        if (config.policy !== false) {
          const ids = { runId: current.runId, toolCallId: call.toolCallId }
          const byPolicy = await resolveByPolicy({
            client,
            agent,
            mode,
            binding,
            stepSubject,
            externalId,
            set,
            ids,
          })
          if (byPolicy) {
            entry.approved = byPolicy.approved
            if (byPolicy.reason) entry.reason = byPolicy.reason
            entry.output = byPolicy.output as TOutput
            resolved.push(entry)
            if ((await finishOf(byPolicy.output)) === 'suspended') {
              run = await findSuspendedRun(agent, current.runId, scope)
            }
            continue
          }
        }
        store = config.store ?? createRunLocalStore()
        const started = await startAgentReviewRun({
          mastra,
          client,
          binding,
          ask: {
            subject: stepSubject,
            delivery: {
              ...(config.expiresInSeconds ? { expiresInSeconds: config.expiresInSeconds } : {}),
              ...(config.requireReachable ? { requireReachable: config.requireReachable } : {}),
              ...(config.sandboxOutcome ? { sandboxOutcome: config.sandboxOutcome } : {}),
            },
          },
          ...(config.onFallback ? { onFallback: config.onFallback } : {}),
          operation,
        })
        decisionId = started.decisionId
        if (set) {
          members = setMemberReviews(binding, started.approvers ?? [], setExpiresAt(config))
          for (const member of members) await store.save(member)
        } else {
          await store.save({
            target: 'agent',
            ...binding,
            decisionId,
            correlationId: decisionId,
            ...(started.expiresAt === undefined ? {} : { expiresAt: started.expiresAt }),
            state: 'pending',
          })
          await waitForAnswer(client, decisionId, config.timeoutMs ?? 55_000)
        }
      } catch (error) {
        resolved.push({ ...entry, reviewError: message(error) })
        pending.push(current)
        break
      }
      const resume: Parameters<typeof resumeOnce>[0] = { client, store, decisionId, agent, mastra, mode }
      const outcome = members
        ? await settleAgentSet<TOutput>(resume, members, config.timeoutMs ?? 55_000)
        : await resumeOnce<TOutput>(resume, config.timeoutMs ?? 55_000)
      if (outcome.status === 'duplicate' && outcome.reasonCode === 'resumed_elsewhere' && outcome.action) {
        // A concurrent resolver won: report its verdict, and leave the run's
        // later suspensions (if any) to it, listed as pending here.
        entry.approved = outcome.action === 'approved'
        entry.reason = outcome.reason
        entry.reasonCode = outcome.reasonCode
        if (members) Object.assign(entry, await settledApprovers(mastra, members[0]))
        resolved.push(entry)
        const again = await findSuspendedRun(agent, current.runId, scope).catch(() => undefined)
        if (again) pending.push(again)
        break
      }
      if (outcome.status !== 'resumed') {
        const reason = 'reason' in outcome && outcome.reason ? outcome.reason : outcome.status
        resolved.push({
          ...entry,
          resumeError: `${outcome.status}: ${reason}`,
          ...('reasonCode' in outcome && outcome.reasonCode ? { reasonCode: outcome.reasonCode } : {}),
        })
        pending.push(current)
        break
      }
      entry.approved = outcome.answer.approved
      if (!entry.approved)
        entry.reason = members
          ? 'The approvers declined.'
          : outcome.answer.status === 'answered'
            ? 'The customer declined.'
            : `The review ${outcome.answer.status}.`
      if (outcome.approvers) entry.approvers = outcome.approvers
      if (outcome.settledBy) entry.settledBy = outcome.settledBy
      entry.output = outcome.output
      if (outcome.discoveryError) entry.discoveryError = outcome.discoveryError
      resolved.push(entry)
      run = outcome.pending[0]
    }
  }
  // Vacuous truth is no approval: nothing found is reported as such.
  const allApproved =
    found > 0 &&
    resolved.length > 0 &&
    pending.length === 0 &&
    resolved.every(
      (entry) => entry.approved && !entry.reviewError && !entry.resumeError && !entry.discoveryError,
    )
  if (found > 0) return { resolved, pending, found, allApproved }
  return {
    resolved,
    pending,
    found,
    allApproved,
    reasonCode: 'nothing_found',
    reason: await nothingFoundReason(agent, mastra, target.runs?.length, scope, initial.length),
  }
}
