/**
 * Conversions between stored rows and validated records, shared by every
 * store through `store-core.ts`.
 */
import { canonicalJson } from '../pushary/identity.js'
import {
  type PusharyReview,
  pusharyReviewSchema,
  type ReviewTransition,
  reviewTransitionSchema,
} from './review-schema.js'
import { PusharyStoreError } from './store-error.js'

/** A review row as stored: the canonical binding JSON plus the live state. */
export interface StoredReviewRow {
  readonly decisionId: string
  readonly runId: string
  readonly binding: string
  readonly state: string
  /** When the row last changed state; the version a recovery takes over with. */
  readonly stateChangedAt: string
}

/** A transition row as stored. */
export interface StoredTransitionRow {
  readonly decisionId: string
  readonly from: string | null
  readonly to: string
  readonly event: string | null
  readonly reason: string | null
  readonly at: string
}

/** The binding is everything but `state`, in canonical JSON so equal bindings compare equal byte for byte. */
export function bindingOf(review: PusharyReview): string {
  const { state: _state, ...binding } = review
  return canonicalJson(binding)
}

/**
 * Whether two bindings name the same review. `expiresAt` is what the service
 * reported when the decision was created (`review-schema.ts`), not identity:
 * a replayed save that computed it a moment later is the same review.
 */
export function sameBinding(stored: string, incoming: string): boolean {
  if (stored === incoming) return true
  const identity = (binding: string) => {
    const { expiresAt: _expiresAt, ...rest } = JSON.parse(binding) as Record<string, unknown>
    return canonicalJson(rest)
  }
  return identity(stored) === identity(incoming)
}

/** The first top-level field where two bindings differ, to name it in the conflict error. */
export function firstDifference(stored: string, incoming: string): string {
  const a = JSON.parse(stored) as Record<string, unknown>
  const b = JSON.parse(incoming) as Record<string, unknown>
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])]
    .filter((key) => key !== 'expiresAt')
    .sort()
  return keys.find((key) => canonicalJson(a[key] ?? null) !== canonicalJson(b[key] ?? null)) ?? ''
}

export function parseRow(row: StoredReviewRow, operation: string): PusharyReview {
  let payload: unknown
  try {
    payload = { ...(JSON.parse(row.binding) as object), state: row.state }
  } catch (cause) {
    throw new PusharyStoreError({
      code: 'corrupt_record',
      operation,
      field: 'binding',
      message: `stored binding of decision ${JSON.stringify(row.decisionId)} is not JSON`,
      cause,
    })
  }
  const parsed = pusharyReviewSchema.safeParse(payload)
  if (parsed.success) return parsed.data
  throw PusharyStoreError.fromZod(parsed.error, { operation, code: 'corrupt_record' })
}

export function parseTransition(row: StoredTransitionRow): ReviewTransition {
  const parsed = reviewTransitionSchema.safeParse(row)
  if (parsed.success) return parsed.data
  throw PusharyStoreError.fromZod(parsed.error, { operation: 'history', code: 'corrupt_record' })
}

/** `now`, moved just past `previous` when the clock has not advanced, so every claim version differs. */
export function laterThan(previous: string, now: string): string {
  if (now > previous) return now
  return new Date(Date.parse(previous) + 1).toISOString()
}

/**
 * A review row as a database driver returns it (snake_case columns), as the
 * store core reads it. Shared by the SQLite and PostgreSQL drivers.
 *
 * @example
 * const row = storedReviewRow(result.rows[0])
 */
export function storedReviewRow(row: Record<string, unknown>): StoredReviewRow {
  return {
    decisionId: String(row.decision_id),
    runId: String(row.run_id),
    binding: String(row.binding),
    state: String(row.state),
    stateChangedAt: String(row.state_changed_at),
  }
}

/** A nullable text column: `null` stays `null`, anything else becomes its string. */
export function nullableText(value: unknown): string | null {
  return value === null || value === undefined ? null : String(value)
}
