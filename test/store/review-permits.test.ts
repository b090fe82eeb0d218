/**
 * The permit kept beside a review, on every store (a real SQLite file and a
 * real PostgreSQL schema): set once, read back as written, refused when
 * malformed or for a missing review, and added to tables created before
 * permits existed.
 */
import { afterAll, describe, expect, it } from 'vitest'
import type { ReviewPermit } from '../../src/store/review-schema.js'
import { isPusharyStoreError, type PusharyStoreErrorCode } from '../../src/store/store-error.js'
import { workflowReview } from './support/reviews.js'
import { STORE_KINDS, stopTestPostgres } from './support/stores.js'

async function storeError(
  promise: Promise<unknown>,
): Promise<{ code: PusharyStoreErrorCode; field: string }> {
  try {
    await promise
  } catch (error) {
    if (isPusharyStoreError(error)) return { code: error.code, field: error.field }
    throw error
  }
  throw new Error('expected a PusharyStoreError, but the call succeeded')
}

const permit = (permitId: string): ReviewPermit => ({
  permitId,
  action: {
    toolName: 'refund.create',
    toolTarget: 'order o-1',
    externalId: 'customer_1',
    parameters: { amountMinor: 4800, express: true, currency: 'EUR' },
  },
  consumedAt: '2026-12-03T10:00:00.000Z',
})

afterAll(async () => {
  await stopTestPostgres()
})

describe.each(STORE_KINDS)('$name review store: the review permit', (kind) => {
  it('keeps one permit per review, read back as written from another store instance; the same one again is a no-op, another is refused', async () => {
    const harness = await kind.setup('permits')
    try {
      const store = harness.open()
      const review = workflowReview()
      await store.save(review)
      expect(await store.permitOf(review.decisionId)).toBeNull()
      await store.recordPermit(review.decisionId, permit('pmt_first'))
      await store.recordPermit(review.decisionId, permit('pmt_first'))
      expect(await storeError(store.recordPermit(review.decisionId, permit('pmt_second')))).toEqual({
        code: 'permit_conflict',
        field: 'permit.permitId',
      })
      expect(await harness.open().permitOf(review.decisionId)).toEqual(permit('pmt_first'))
      // The permit is no part of the binding: the same save is still a no-op.
      await store.save(review)
      expect((await store.get(review.decisionId))?.state).toBe('pending')
    } finally {
      await harness.dispose()
    }
  })

  it('refuses a malformed permit naming the field, and a review that does not exist, writing nothing', async () => {
    const harness = await kind.setup('permits_bad')
    try {
      const store = harness.open()
      const review = workflowReview()
      await store.save(review)
      const bad = { ...permit('pmt_1'), action: { toolName: '' } }
      expect((await storeError(store.recordPermit(review.decisionId, bad))).field).toMatch(/^permit\.action/)
      expect(await store.permitOf(review.decisionId)).toBeNull()
      expect(await storeError(store.recordPermit('dec_nobody', permit('pmt_1')))).toEqual({
        code: 'not_found',
        field: 'decisionId',
      })
    } finally {
      await harness.dispose()
    }
  })

  it('adds the permit column to a reviews table created before permits, and two openers migrate it once', async () => {
    const harness = await kind.setup('permits_migrate')
    try {
      await harness.createPrePermitTable()
      const [first, second] = [harness.open(), harness.open()]
      const review = workflowReview()
      await Promise.all([first.save(review), second.listByState('pending', { limit: 10 })])
      await second.recordPermit(review.decisionId, permit('pmt_old_table'))
      expect((await first.permitOf(review.decisionId))?.permitId).toBe('pmt_old_table')
    } finally {
      await harness.dispose()
    }
  })
})
