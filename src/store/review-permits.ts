/**
 * The permit beside a review: which permit a protected step spent for the
 * review's decision and the exact action it presented. One per review, set
 * once; recovery reads it as evidence of what may have run.
 */
import type { z } from 'zod/v4'
import { idSchema } from '../pushary/identity.js'
import { reviewPermitSchema } from './review-schema.js'
import type { PusharyReviewStore } from './review-store.js'
import { PusharyStoreError } from './store-error.js'

/** A database's half of the permit calls; part of every store driver. */
export interface ReviewPermitDriver {
  /** Sets the review's permit unless one is set; `'missing'` when no review has this ID. */
  updatePermit(decisionId: string, permit: string): Promise<'set' | 'kept' | 'missing'>
  selectPermit(decisionId: string): Promise<string | null>
}

type Open = <T>(operation: string, body: () => Promise<T>) => Promise<T>

function checked<T>(schema: z.ZodType<T>, value: unknown, operation: string, field: string): T {
  const parsed = schema.safeParse(value)
  if (parsed.success) return parsed.data
  throw PusharyStoreError.fromZod(parsed.error, { operation, code: 'invalid_argument', fieldPrefix: field })
}

function parseStored(stored: string, decisionId: string) {
  let raw: unknown
  try {
    raw = JSON.parse(stored)
  } catch {
    raw = null
  }
  const parsed = reviewPermitSchema.safeParse(raw)
  if (parsed.success) return parsed.data
  throw new PusharyStoreError({
    code: 'corrupt_record',
    operation: 'permitOf',
    field: 'permit',
    message: `the permit stored for ${JSON.stringify(decisionId)} no longer parses`,
  })
}

/**
 * `recordPermit` and `permitOf` over a driver, inside the store's `open` guard.
 *
 * @example
 * const store = { ...permitCalls(driver, open) }
 */
export function permitCalls(
  driver: ReviewPermitDriver,
  open: Open,
): Pick<PusharyReviewStore, 'recordPermit' | 'permitOf'> {
  return {
    recordPermit: (decisionId, permit) =>
      open('recordPermit', async () => {
        const id = checked(idSchema, decisionId, 'recordPermit', 'decisionId')
        const value = checked(reviewPermitSchema, permit, 'recordPermit', 'permit')
        const outcome = await driver.updatePermit(id, JSON.stringify(value))
        if (outcome === 'missing') {
          throw new PusharyStoreError({
            code: 'not_found',
            operation: 'recordPermit',
            field: 'decisionId',
            message: `no review for decision ${JSON.stringify(id)}`,
          })
        }
        if (outcome === 'kept') {
          const stored = await driver.selectPermit(id)
          // The same permit again (a retried write) is a no-op; another one
          // means the decision was spent twice, which the service forbids.
          if (stored === null || parseStored(stored, id).permitId !== value.permitId) {
            throw new PusharyStoreError({
              code: 'permit_conflict',
              operation: 'recordPermit',
              field: 'permit.permitId',
              message: `review ${JSON.stringify(id)} already records another permit`,
            })
          }
        }
      }),

    permitOf: (decisionId) =>
      open('permitOf', async () => {
        const id = checked(idSchema, decisionId, 'permitOf', 'decisionId')
        const stored = await driver.selectPermit(id)
        return stored === null ? null : parseStored(stored, id)
      }),
  }
}
