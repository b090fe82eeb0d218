/**
 * The answer time a resume hands to its claim: the service's `answeredAt`
 * when it is a time the store takes, else the time the resume read the
 * decision. Whatever the service sends, the note never stops the claim: the
 * time returned is accepted by a real SQLite store's claim.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { logVerifiedAnswer } from '../../src/resume/answer-notes.js'
import { createSqliteReviewStore } from '../../src/store/sqlite-store.js'
import { workflowReview } from '../store/support/reviews.js'

const store = createSqliteReviewStore({ url: `file:${join(mkdtempSync(join(tmpdir(), 'notes-')), 'r.db')}` })
afterAll(() => store.close())
const now = new Date('2026-12-07T07:00:00.000Z')
const read = (answeredAt: unknown) =>
  logVerifiedAnswer({
    mastra: undefined,
    decisionId: 'dec_1',
    runId: 'run_1',
    decision: { status: 'answered', answeredAt: answeredAt as string },
    approved: true,
    target: 'workflow-step',
    now,
  })

describe('the answer time a resume notes with its claim', () => {
  it("keeps the service's answer time, normalized", () => {
    expect(read('2026-12-07T06:59:00+00:00')).toBe('2026-12-07T06:59:00.000Z')
  })

  it.each([null, undefined, '', 'yesterday', '+275760-09-13T00:00:00.000Z', '-000001-01-01T00:00:00.000Z'])(
    'falls back to the time it read the decision for %j, and the store takes the note',
    async (sent) => {
      const answeredAt = read(sent)
      expect(answeredAt).toBe(now.toISOString())
      const review = workflowReview()
      await store.save(review)
      expect(await store.claim(review.decisionId, review.runId, undefined, { answeredAt })).toBe('claimed')
    },
  )
})
