/**
 * The public dispatcher: the resume engine (`resume/dispatcher.ts`) with every
 * kind of review registered. A workflow step's review is the engine's own; a
 * multi-item parent is resumed, settled and recovered by the workflows room,
 * an agent review by this room. It lives here, the highest room that composes
 * approvals, so the resume path never imports the rooms above it.
 */
import type { Mastra } from '@mastra/core/mastra'
import type { PusharyDispatcher, PusharyDispatcherOptions } from '../resume/dispatch-types.js'
import { createDispatcher } from '../resume/dispatcher.js'
import type { ReviewKinds } from '../resume/review-kinds.js'
import { findConfigurationIssues, type PusharyConfigurationReport } from '../resume/worker-capability.js'
import type { PusharyReviewStore } from '../store/review-store.js'
import { resumeBatchParent, settleBatchParent } from '../workflows/batch-parent.js'
import { settleSuspendedBatches } from '../workflows/batch-reconcile.js'
import { recoverBatchParent } from '../workflows/batch-recovery.js'
import { agentCapabilityProblem, resumeAgentForDispatch } from './agent-dispatch.js'
import { recoverAgentForDispatch } from './agent-recovery.js'

/** Every kind of review the package asks about, and how each is resumed. */
const KINDS: ReviewKinds = {
  parent: {
    // A pending parent review (reconcile): only once every item is settled.
    resume: (input) => resumeBatchParent({ ...input, waitForChildren: true }),
    // After a child finished: the one path that may scan with a remembered batch.
    settle: (input) => settleBatchParent({ ...input, reuseKnownBatch: true }),
    settleSuspended: settleSuspendedBatches,
    recover: recoverBatchParent,
  },
  agent: {
    capabilityProblem: agentCapabilityProblem,
    resume: resumeAgentForDispatch,
    recover: recoverAgentForDispatch,
  },
}

/**
 * Builds the dispatcher. Collaborators are passed in; nothing is global.
 *
 * @example
 * const dispatcher = createPusharyDispatcher({ mastra, client, store, webhookSecret: process.env.PUSHARY_WEBHOOK_SECRET })
 * setInterval(() => void dispatcher.reconcile({ limit: 100 }), 30_000)
 */
export function createPusharyDispatcher(options: PusharyDispatcherOptions): PusharyDispatcher {
  return createDispatcher(options, KINDS)
}

/**
 * Walks every pending review (in pages of `pageSize`) and lists those this
 * worker could not resume, agent reviews included: what
 * `dispatcher.checkConfiguration()` reports, for callers without a dispatcher.
 *
 * @example
 * const report = await checkWorkerConfiguration({ mastra, store })
 */
export function checkWorkerConfiguration(input: {
  mastra: Mastra
  store: Pick<PusharyReviewStore, 'listByState'>
  pageSize?: number
}): Promise<PusharyConfigurationReport> {
  return findConfigurationIssues({ ...input, checkAgent: KINDS.agent.capabilityProblem })
}
