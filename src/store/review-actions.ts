/**
 * The action outcome beside a review: what happened to the approved action
 * (`ran`, `failed`, `refused`, `not_run`, `unknown`), read from the evidence
 * by whichever path ended the review. Unlike the permit it may be replaced:
 * an operator's confirmation or a later receipt refines an `unknown`.
 */
import { z } from 'zod/v4'
import { idSchema } from '../pushary/identity.js'
import {
  type PusharyActionOutcome,
  pusharyActionOutcomeSchema,
  type ReviewAction,
  reviewActionSchema,
} from './review-schema.js'
import type { PusharyReviewStore } from './review-store.js'
import { PusharyStoreError } from './store-error.js'

/** A database's half of the action calls; part of every store driver. */
export interface ReviewActionDriver {
  /** Sets the review's action outcome; `false` when no review has this ID. */
  updateAction(decisionId: string, action: string): Promise<boolean>
  selectAction(decisionId: string): Promise<string | null>
}

type Open = <T>(operation: string, body: () => Promise<T>) => Promise<T>

const recordSchema = z.object({ outcome: pusharyActionOutcomeSchema, reason: z.string().min(1).max(2000) })

/**
 * Reads a stored action outcome; one that no longer parses is an error, never
 * a guess (a record an operator trusts is not repaired silently).
 *
 * @example
 * const action = parseStoredAction(row.action, 'dec_1')
 */
export function parseStoredAction(stored: string, decisionId: string): ReviewAction {
  let raw: unknown
  try {
    raw = JSON.parse(stored)
  } catch {
    raw = null
  }
  const parsed = reviewActionSchema.safeParse(raw)
  if (parsed.success) return parsed.data
  throw new PusharyStoreError({
    code: 'corrupt_record',
    operation: 'actionOf',
    field: 'action',
    message: `the action outcome stored for ${JSON.stringify(decisionId)} no longer parses`,
  })
}

/**
 * A caller's action outcome checked and stamped with its time, serialized as
 * stored; bad input is a typed error naming `action.<field>`, before any write.
 *
 * @example
 * const stored = storedActionOf('finish', { outcome: 'ran', reason: 'the refund ran' }, new Date())
 */
export function storedActionOf(
  operation: string,
  action: { outcome: PusharyActionOutcome; reason: string },
  at: Date,
): string {
  const parsed = recordSchema.safeParse(action)
  if (!parsed.success) {
    throw PusharyStoreError.fromZod(parsed.error, {
      operation,
      code: 'invalid_argument',
      fieldPrefix: 'action',
    })
  }
  const value: ReviewAction = { ...parsed.data, at: at.toISOString() }
  return JSON.stringify(value)
}

/**
 * `recordAction` and `actionOf` over a driver, inside the store's `open` guard.
 *
 * @example
 * const store = { ...actionCalls(driver, open, () => new Date()) }
 */
export function actionCalls(
  driver: ReviewActionDriver,
  open: Open,
  now: () => Date,
): Pick<PusharyReviewStore, 'recordAction' | 'actionOf'> {
  return {
    recordAction: (decisionId, action) =>
      open('recordAction', async () => {
        const id = idSchema.safeParse(decisionId)
        if (!id.success) {
          throw PusharyStoreError.fromZod(id.error, {
            operation: 'recordAction',
            code: 'invalid_argument',
            fieldPrefix: 'decisionId',
          })
        }
        const value = storedActionOf('recordAction', action, now())
        if (!(await driver.updateAction(id.data, value))) {
          throw new PusharyStoreError({
            code: 'not_found',
            operation: 'recordAction',
            field: 'decisionId',
            message: `no review for decision ${JSON.stringify(id.data)}`,
          })
        }
      }),

    actionOf: (decisionId) =>
      open('actionOf', async () => {
        const id = idSchema.safeParse(decisionId)
        if (!id.success) {
          throw PusharyStoreError.fromZod(id.error, {
            operation: 'actionOf',
            code: 'invalid_argument',
            fieldPrefix: 'decisionId',
          })
        }
        const stored = await driver.selectAction(id.data)
        return stored === null ? null : parseStoredAction(stored, id.data)
      }),
  }
}
