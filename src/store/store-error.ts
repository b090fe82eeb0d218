import type { z } from 'zod/v4'
import { PusharyError, type PusharyIssue, summarizeZodError } from '../pushary/errors.js'

/**
 * Every `code` a {@link PusharyStoreError} carries. What the caller does next:
 * - `invalid_review`, `invalid_argument`, `invalid_options`: fix the input; nothing was written.
 * - `conflicting_binding`: a different binding already owns this decision ID; never overwrite it.
 * - `not_found`: no review under this decision ID (a caller bug or an early callback; `get` first).
 * - `run_mismatch`: the claim names a different run than the saved binding.
 * - `not_claimed`: `finish` on a review that is not `resuming`.
 * - `not_recoverable`: `recover` on a review that is neither `uncertain` nor `resuming`.
 * - `permit_conflict`: the review already records a different permit; the action was permitted once.
 * - `corrupt_record`: a stored row no longer parses; inspect the database.
 * - `database_busy`: the database stayed locked after bounded retries; retry later.
 * - `storage_failed`: any other database error (see `cause`).
 * - `closed`: the store was closed.
 *
 * @example
 * const code: PusharyStoreErrorCode = 'conflicting_binding'
 */
export type PusharyStoreErrorCode =
  | 'invalid_review'
  | 'invalid_argument'
  | 'invalid_options'
  | 'conflicting_binding'
  | 'not_found'
  | 'run_mismatch'
  | 'not_claimed'
  | 'not_recoverable'
  | 'permit_conflict'
  | 'corrupt_record'
  | 'database_busy'
  | 'storage_failed'
  | 'closed'

/**
 * A review store failure. `operation` names the store method, `field` the
 * offending field (dotted path, `''` when none), `issues` keeps zod issues.
 * Public because the README's recovery path, `store.recover`, throws it
 * (`not_recoverable`) when the lifecycle forbids the transition.
 *
 * @example
 * try { await store.save(review) } catch (error) {
 *   if (error instanceof PusharyStoreError && error.code === 'conflicting_binding') alertOperator(error)
 * }
 */
export class PusharyStoreError extends PusharyError {
  override name = 'PusharyStoreError'
  declare readonly code: PusharyStoreErrorCode
  readonly operation: string
  readonly field: string
  readonly issues: readonly PusharyIssue[]

  constructor(input: {
    code: PusharyStoreErrorCode
    operation: string
    message: string
    field?: string
    issues?: readonly PusharyIssue[]
    cause?: unknown
  }) {
    const field = input.field ?? ''
    const where = field === '' ? '' : ` (field "${field}")`
    super(input.code, `Pushary review store ${input.operation}: ${input.message}${where}`, {
      cause: input.cause,
    })
    this.operation = input.operation
    this.field = field
    this.issues = Object.freeze(input.issues ?? [])
  }

  /**
   * Builds one typed error from a ZodError: the first issue names the field.
   *
   * @example
   * throw PusharyStoreError.fromZod(parsed.error, { operation: 'save', code: 'invalid_review' })
   */
  static fromZod(
    error: z.ZodError,
    context: { operation: string; code: PusharyStoreErrorCode; fieldPrefix?: string },
  ): PusharyStoreError {
    return new PusharyStoreError({
      code: context.code,
      operation: context.operation,
      ...summarizeZodError(error, context.fieldPrefix),
      cause: error,
    })
  }
}

/**
 * Narrows an unknown error to a {@link PusharyStoreError}.
 *
 * @example
 * if (isPusharyStoreError(error) && error.code === 'database_busy') scheduleRetry()
 */
export function isPusharyStoreError(value: unknown): value is PusharyStoreError {
  return value instanceof PusharyStoreError
}
