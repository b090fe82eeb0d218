/**
 * The configuration checks every agent entry point runs before anything
 * else (before any request to the decision service and any write): the
 * review store, the agent, and the agent's Mastra with durable storage.
 * Without them a person could be asked a question no review stands behind
 * (a missing store found only after the decision was created), or answer a
 * review no other process can resume (Mastra's in-memory fallback storage,
 * gone when the process exits).
 */
import type { Mastra } from '@mastra/core/mastra'
import { PusharyValidationError } from '../pushary/errors.js'
import type { PusharyAgentReviewStore } from '../store/agent-review-store.js'

/** Mastra's own fallback when `new Mastra({ storage })` was not given (`InMemoryStore`). */
const IN_MEMORY_STORAGE = 'InMemoryStorage'

/**
 * What a review's agent must offer: listing its suspended runs and the native
 * approve/decline calls, generate and stream (a native `Agent` or
 * `DurableAgent` has them all).
 */
export const APPROVABLE_AGENT_METHODS = [
  'listSuspendedRuns',
  'approveToolCallGenerate',
  'declineToolCallGenerate',
  'approveToolCall',
  'declineToolCall',
] as const

function fail(operation: string, field: string, message: string): never {
  throw new PusharyValidationError({ code: 'invalid_options', operation, field, message })
}

/**
 * The review store, refused unless it has the four agent-review operations.
 *
 * @example
 * const store = checkedReviewStore(target.store, 'openPusharyAgentReview')
 */
export function checkedReviewStore(
  store: unknown,
  operation: string,
  field = 'store',
): PusharyAgentReviewStore {
  if (!store || typeof store !== 'object') {
    fail(
      operation,
      field,
      'a review store is required (createSqliteReviewStore, createPostgresReviewStore or your own table)',
    )
  }
  for (const method of ['save', 'get', 'claim', 'finish'] as const) {
    if (typeof (store as Record<string, unknown>)[method] !== 'function') {
      fail(operation, `${field}.${method}`, `the review store has no ${method}() operation`)
    }
  }
  return store as PusharyAgentReviewStore
}

/**
 * The agent, refused unless it is an object with the named native methods.
 *
 * @example
 * checkedAgent(target.agent, 'resolvePusharyApprovals', ['listSuspendedRuns'])
 */
export function checkedAgent<T>(agent: T, operation: string, methods: readonly string[], field = 'agent'): T {
  if (!agent || typeof agent !== 'object') fail(operation, field, 'the agent is required')
  for (const method of methods) {
    if (typeof (agent as Record<string, unknown>)[method] !== 'function') {
      fail(operation, `${field}.${method}`, `the agent has no ${method}() (pass a Mastra Agent)`)
    }
  }
  return agent
}

/**
 * The agent's Mastra (the one passed, else `agent.getMastraInstance()`),
 * refused when there is none or when its storage is Mastra's in-memory
 * fallback: the suspended run and the review workflow run must outlive the
 * process so that any process can resume the answer.
 *
 * @example
 * const mastra = durableMastraOf(target.agent, target.mastra, 'openPusharyAgentReview')
 */
export function durableMastraOf(agent: unknown, mastra: Mastra | undefined, operation: string): Mastra {
  const found =
    mastra ?? (agent as { getMastraInstance?: () => Mastra | undefined } | null)?.getMastraInstance?.()
  if (!found) {
    fail(operation, 'agent', 'register the agent on a Mastra with storage (or pass target.mastra)')
  }
  const field = mastra ? 'mastra.storage' : 'agent.mastra.storage'
  let storage: { name?: unknown } | undefined
  try {
    storage = found.getStorage() as { name?: unknown } | undefined
  } catch (error) {
    throw new PusharyValidationError({
      code: 'invalid_options',
      operation,
      field,
      message: 'the Mastra storage could not be read',
      cause: error,
    })
  }
  if (!storage)
    fail(operation, field, "the agent's Mastra has no storage; configure @mastra/libsql or @mastra/pg")
  if (storage.name === IN_MEMORY_STORAGE) {
    fail(
      operation,
      field,
      "the agent's Mastra uses in-memory storage (no `storage` given): a suspended run and its review would be lost with this process; configure @mastra/libsql or @mastra/pg",
    )
  }
  return found
}
