/**
 * What the store core applies to every call before it touches a driver:
 * where each lifecycle event moves a review (read off the machine once),
 * the argument schemas (built once, not per call: a store call sits on every
 * resume), and the refusals every database shares.
 */
import { z } from 'zod/v4'
import {
  nextReviewState,
  REVIEW_EVENTS,
  REVIEW_STATES,
  type ReviewEventType,
  type ReviewState,
} from '../machines/review-lifecycle.js'
import { idSchema } from '../pushary/identity.js'
import type { ReviewFinishState, ReviewRecoveryOutcome } from './review-store.js'
import { PusharyStoreError } from './store-error.js'

export const FINISH_EVENTS: Record<ReviewFinishState, ReviewEventType> = {
  pending: 'NOT_APPLIED',
  completed: 'RESUMED',
  stale: 'STALE_DETECTED',
  uncertain: 'FAILED_AFTER_CLAIM',
}

export const RECOVERY_EVENTS: Record<ReviewRecoveryOutcome, ReviewEventType> = {
  completed: 'OPERATOR_CONFIRMED_EXECUTED',
  stale: 'OPERATOR_CONFIRMED_NOT_EXECUTED',
  pending: 'OPERATOR_REOPENED',
}

export const MAX_LIST_LIMIT = 1000

// Where each event moves a review from each state it applies in, read off the
// lifecycle once, for the drivers that write a transition as one statement.
type Move = { readonly from: ReviewState; readonly to: ReviewState }
export const MOVES = {} as Record<ReviewEventType, readonly Move[]>
for (const event of REVIEW_EVENTS) {
  MOVES[event] = REVIEW_STATES.flatMap((from) => {
    const to = nextReviewState(from, event)
    return to === null ? [] : [{ from, to }]
  })
}

// The one state a claim starts from, read off the lifecycle so the
// one-statement claim moves rows exactly as the machine does.
export const CLAIMABLE = MOVES.CLAIM

// Argument schemas are built once here, not per call: a store call sits on
// every resume, and building a zod schema costs more than checking with it.
export const optionalIdSchema = idSchema.optional()
export const optionalTextSchema = z.string().optional()
export const finishStateSchema = z.enum(['pending', 'completed', 'stale', 'uncertain'])
export const recoveryOutcomeSchema = z.enum(['completed', 'stale', 'pending'])
export const claimTimeSchema = z.iso.datetime()
export const optionalTimeSchema = z.iso.datetime().optional()
export const listLimitSchema = z.number().int().min(1).max(MAX_LIST_LIMIT)

/** The value `schema` accepts, or a typed `invalid_argument` naming `field`. */
export function checked<T>(schema: z.ZodType<T>, value: unknown, operation: string, field: string): T {
  const parsed = schema.safeParse(value)
  if (parsed.success) return parsed.data
  throw PusharyStoreError.fromZod(parsed.error, { operation, code: 'invalid_argument', fieldPrefix: field })
}

/** A claim of a missing review, or under another run, is a caller's mistake: it throws. */
export function refuseUnclaimable<T extends { readonly runId: string }>(
  id: string,
  run: string,
  row: T | null,
): asserts row is T {
  if (row === null) {
    throw new PusharyStoreError({
      code: 'not_found',
      operation: 'claim',
      field: 'decisionId',
      message: `no review for decision ${JSON.stringify(id)}; call get first, or save before claiming`,
    })
  }
  if (row.runId !== run) {
    throw new PusharyStoreError({
      code: 'run_mismatch',
      operation: 'claim',
      field: 'runId',
      message: `decision ${JSON.stringify(id)} is bound to run ${JSON.stringify(row.runId)}, not ${JSON.stringify(run)}`,
    })
  }
}

/** Database errors that are not ours become `storage_failed`; ours pass through. */
export async function guarded<T>(operation: string, body: () => Promise<T>): Promise<T> {
  try {
    return await body()
  } catch (error) {
    if (error instanceof PusharyStoreError) throw error
    throw new PusharyStoreError({
      code: 'storage_failed',
      operation,
      message: error instanceof Error ? error.message : String(error),
      cause: error,
    })
  }
}
