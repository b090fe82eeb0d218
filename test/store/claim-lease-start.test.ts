/**
 * The claim lease starts from the claim time the store wrote itself: no
 * read-back after a claim of this process, the stored time for a claim of
 * another, and a takeover in between stops the beat instead of keeping the
 * new holder's claim alive.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { whileHoldingClaim } from '../../src/resume/claim-lease.js'
import type { PusharyReviewStore } from '../../src/store/review-store.js'
import { createSqliteReviewStore } from '../../src/store/sqlite-store.js'
import { agentReview } from './support/reviews.js'

const LEASE_MS = 100

let dir: string
let stores: PusharyReviewStore[]

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'pushary-lease-start-'))
  stores = []
})

afterEach(async () => {
  await Promise.all(stores.map((store) => store.close()))
  rmSync(dir, { recursive: true, force: true })
})

function openStore(): PusharyReviewStore {
  const store = createSqliteReviewStore({ url: `file:${join(dir, 'reviews.db')}` })
  stores.push(store)
  return store
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function claimedReview(store: PusharyReviewStore) {
  const review = agentReview()
  await store.save(review)
  expect(await store.claim(review.decisionId, review.runId)).toBe('claimed')
  const since = (await store.claimState(review.decisionId))?.since
  if (since === undefined) throw new Error('the claim has no time')
  return { id: review.decisionId, since }
}

describe('the claim lease of a fresh claim', () => {
  it('starts from the time this store wrote, without reading it back, and keeps the claim alive', async () => {
    const store = openStore()
    const review = agentReview()
    await store.save(review)
    expect(await store.claim(review.decisionId, review.runId)).toBe('claimed')
    const reads = vi.spyOn(store, 'claimState')
    await whileHoldingClaim(store, review.decisionId, LEASE_MS, () => pause(LEASE_MS))
    expect(reads).not.toHaveBeenCalled()
    reads.mockRestore()
    // The beats moved the claim's time: each compare-and-set matched exactly.
    const after = await store.claimState(review.decisionId)
    const history = await store.history(review.decisionId)
    expect(after?.state).toBe('resuming')
    expect(after?.since).not.toBe(history.at(-1)?.at)
  })

  it("reads the stored time when the claim is another store's", async () => {
    const claimer = openStore()
    const holder = openStore()
    const { id, since } = await claimedReview(claimer)
    const reads = vi.spyOn(holder, 'claimState')
    await whileHoldingClaim(holder, id, LEASE_MS, () => pause(LEASE_MS))
    expect(reads).toHaveBeenCalledTimes(1)
    reads.mockRestore()
    expect((await holder.claimState(id))?.since).not.toBe(since)
  })

  it('stops beating when another process took the claim over before the lease started', async () => {
    const store = openStore()
    const recoverer = openStore()
    const review = agentReview()
    await store.save(review)
    expect(await store.claim(review.decisionId, review.runId)).toBe('claimed')
    const written = (await recoverer.claimState(review.decisionId))?.since ?? ''
    expect(await recoverer.reclaim(review.decisionId, written, 'holder gone')).toBe(true)
    const taken = (await recoverer.claimState(review.decisionId))?.since
    await whileHoldingClaim(store, review.decisionId, LEASE_MS, () => pause(LEASE_MS))
    // The old holder's beat names its own claim time, which is gone: the
    // recoverer's claim is left exactly as the recoverer wrote it.
    expect((await store.claimState(review.decisionId))?.since).toBe(taken)
  })

  it('hands each written time out once: a second lease of the same claim reads it', async () => {
    const store = openStore()
    const review = agentReview()
    await store.save(review)
    expect(await store.claim(review.decisionId, review.runId)).toBe('claimed')
    await whileHoldingClaim(store, review.decisionId, LEASE_MS, async () => undefined)
    const reads = vi.spyOn(store, 'claimState')
    await whileHoldingClaim(store, review.decisionId, LEASE_MS, async () => undefined)
    expect(reads).toHaveBeenCalledTimes(1)
    reads.mockRestore()
  })
})
