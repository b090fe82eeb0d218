import type { Mastra } from '@mastra/core/mastra'
import { type PusharyConfig, resolvePusharyClient } from '../pushary/config.js'
import { PusharyValidationError } from '../pushary/errors.js'
import { logDispatchEnding } from '../resume/dispatch-notes.js'
import type { PusharyAgentReviewStore } from '../store/agent-review-store.js'
import type { PusharyAgentReview } from '../store/review-schema.js'
import {
  APPROVABLE_AGENT_METHODS,
  checkedAgent,
  checkedReviewStore,
  durableMastraOf,
} from './agent-config.js'
import {
  type AgentResumeRefusal,
  type PusharyAgentResumeOutcome,
  resumeAgentReview,
} from './agent-review-resume.js'
import type { PusharyResumableAgent } from './agent-shapes.js'

/**
 * What {@link resumePusharyAgentReview} needs. `agentId` and `externalId`
 * must match the saved review (a review of another customer or agent is
 * refused).
 *
 * @example
 * const target: PusharyAgentResumeTarget = { agent, agentId: saved.agentId, externalId: saved.externalId,
 *   decisionId: saved.decisionId, store, currentActionVersion: (review) => readCurrentDraftVersion(review) }
 */
export interface PusharyAgentResumeTarget {
  agent: PusharyResumableAgent
  agentId: string
  externalId: string
  decisionId: string
  store: PusharyAgentReviewStore
  /** The business action's version now; a difference ends the review `stale` without resuming. */
  currentActionVersion?: (review: PusharyAgentReview) => Promise<string> | string
  /** `true` returns the native stream (settled, replayable) as `output` instead of the generate output. */
  stream?: boolean
  mastra?: Mastra
  /**
   * The claim lease (default 30 s, as the dispatcher's `claimLeaseMs`): while
   * resuming, the claim is kept alive five times per lease (with a store that
   * has `claimState`/`keepAlive`, as both package stores do), and a claim
   * whose time stopped moving for a whole lease is reported `busy` with
   * `recoveryNeeded: true`.
   */
  claimLeaseMs?: number
}

/**
 * Resumes one agent review from the service's current answer: re-reads the
 * decision (the callback is never authority), checks it against the saved
 * binding and the native suspended call, claims the review, then resumes
 * the review's workflow run, whose last step approves, declines with a
 * reason, or resumes the question tool with the answer. The same path the
 * dispatcher takes. Tampered context, another customer's decision or a
 * changed question throw `binding_mismatch` and leave the review pending.
 * The claim is kept alive while resuming; a claim whose process died is
 * `busy` with `recoveryNeeded: true` once it stopped moving for a whole
 * lease (call `dispatcher.recover`; retrying never helps).
 *
 * @example
 * const result = await resumePusharyAgentReview(config, {
 *   agent, agentId: saved.agentId, externalId: saved.externalId, decisionId: saved.decisionId, store: reviewStore,
 * })
 * if (result.status === 'busy' && result.recoveryNeeded) await alertOperator(result.reason)
 * else if (['unknown', 'busy', 'pending'].includes(result.status)) return new Response('Retry later', { status: 503 })
 */
export async function resumePusharyAgentReview<TOutput = unknown>(
  config: PusharyConfig,
  target: PusharyAgentResumeTarget,
): Promise<PusharyAgentResumeOutcome<TOutput>> {
  const operation = 'resumePusharyAgentReview'
  if (!target || typeof target !== 'object') {
    throw new PusharyValidationError({
      code: 'invalid_options',
      operation,
      field: 'target',
      message: 'target is required',
    })
  }
  // The whole configuration is checked before the decision is read.
  const store = checkedReviewStore(target.store, operation)
  const agent = checkedAgent(target.agent, operation, APPROVABLE_AGENT_METHODS)
  const mastra = durableMastraOf(agent, target.mastra, operation)
  const client = resolvePusharyClient(config, operation)
  const result = await resumeAgentReview<TOutput>({
    client,
    store,
    decisionId: target.decisionId,
    agent,
    mastra,
    expect: { agentId: target.agentId, externalId: target.externalId },
    currentActionVersion: target.currentActionVersion,
    mode: target.stream ? 'stream' : 'generate',
    claimLeaseMs: target.claimLeaseMs,
  })
  // The `resumed` info line, as the dispatcher logs it for the reviews it resumes.
  logDispatchEnding(mastra, result)
  if (result.status === 'recovery_needed') {
    // The README's statuses stay closed: a crash-left claim is `busy` that retrying never clears.
    return {
      status: 'busy',
      decisionId: result.decisionId,
      reason: result.reason,
      reasonCode: result.reasonCode,
      recoveryNeeded: true,
    }
  }
  if (isRefusal(result)) {
    const mismatch = result.status === 'mismatch'
    throw new PusharyValidationError({
      code: mismatch ? 'binding_mismatch' : 'invalid_answer',
      operation,
      field: mismatch ? `decision.${mismatchField(result.reason)}` : 'decision.value',
      message: `decision does not match the saved customer and action binding: ${result.reason}`,
    })
  }
  return result
}

/** The decision field a mismatch reason names (`question differs …` → `question`). */
function mismatchField(reason: string): string {
  const field = /^(decisionId|externalId|type|question|options|context)\b/.exec(reason)?.[1]
  return field ?? 'context'
}

function isRefusal(result: {
  status: string
}): result is AgentResumeRefusal & { status: 'mismatch' | 'invalid_answer' } {
  return result.status === 'mismatch' || result.status === 'invalid_answer'
}
