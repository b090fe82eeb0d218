/**
 * The claim lease. The holder of a `resuming` claim moves the claim's time
 * forward while it works (`store.keepAlive`), so recovery can tell a claim
 * whose holder died (its time stopped moving) from a live one, and never
 * takes over a live claim. Nothing is reset because time passed: a claim
 * is only taken over, by one recoverer, once its holder stopped proving it
 * is alive. Workflow, batch-parent and agent resumes all hold their claims
 * through this one module.
 *
 * One clock: the store writes a claim's time with its own clock (PostgreSQL's
 * server, SQLite's host) and reports that clock with the claim
 * (`claimState().now`), so whether a holder is gone is judged on the store's
 * clock alone. A host whose clock runs ahead never sees a live claim as
 * expired, and one whose clock runs behind never makes its own look so.
 */
import { takeClaimTime } from '../store/claim-times.js'
import type { PusharyReviewStore } from '../store/review-store.js'

/** Default lease: a claim whose time has not moved for this long has lost its holder. */
export const DEFAULT_CLAIM_LEASE_MS = 30_000

/** The store operations the lease needs; the package stores have them, a user's four-operation agent table may not. */
export type ClaimLeaseStore = Pick<PusharyReviewStore, 'claimState' | 'keepAlive'>

/**
 * Whether `store` can keep claims alive (and tell a dead holder from a live one).
 *
 * @example
 * if (hasClaimLease(store)) await whileHoldingClaim(store, decisionId, leaseMs, work)
 */
export function hasClaimLease(store: object): store is ClaimLeaseStore {
  const candidate = store as Partial<ClaimLeaseStore>
  return typeof candidate.claimState === 'function' && typeof candidate.keepAlive === 'function'
}

/**
 * Runs `work` while keeping the claim on `decisionId` alive, beating five
 * times per lease.
 *
 * @example
 * await whileHoldingClaim(store, decisionId, 30_000, () => resumeRun())
 */
export async function whileHoldingClaim<T>(
  store: ClaimLeaseStore,
  decisionId: string,
  leaseMs: number,
  work: () => Promise<T>,
): Promise<T> {
  // The claim's time as this process's store wrote it, else as stored.
  let since = takeClaimTime(store, decisionId) ?? (await store.claimState(decisionId))?.since ?? null
  let beat: Promise<unknown> = Promise.resolve()
  const timer = setInterval(
    () => {
      if (since === null) return
      const seen = since
      beat = beat
        .then(() => store.keepAlive(decisionId, seen))
        .then(
          (next) => {
            since = next
          },
          () => undefined,
        )
    },
    Math.max(20, Math.floor(leaseMs / 5)),
  )
  try {
    return await work()
  } finally {
    clearInterval(timer)
    await beat
  }
}

/**
 * Whether the claim's holder stopped keeping it alive. `since` is the
 * claim's time as `store.claimState` returned it, and `now` the time to
 * judge it at: {@link leaseClock}, the store's clock.
 *
 * @example
 * if (!claimHolderGone(claim.since, 30_000, leaseClock(claim, new Date()))) return { status: 'busy' }
 */
export function claimHolderGone(since: string, leaseMs: number, now: Date): boolean {
  return now.getTime() - Date.parse(since) >= leaseMs
}

/**
 * The time a claim's lease is judged at: the store's clock as `claimState`
 * reported it with the claim. `fallback` (the caller's clock) only for a
 * store that does not report its clock, which is sound on one host only.
 *
 * @example
 * const claim = await store.claimState(decisionId)
 * if (claim && claimHolderGone(claim.since, 30_000, leaseClock(claim, new Date()))) await recover()
 */
export function leaseClock(claim: { readonly now?: string | undefined }, fallback: Date): Date {
  const now = claim.now === undefined ? Number.NaN : Date.parse(claim.now)
  return Number.isNaN(now) ? fallback : new Date(now)
}

/**
 * What a resumer reports for a review another holder claimed: `busy` while
 * that holder keeps the claim alive (or the store cannot tell), and
 * `recovery_needed` once the claim stopped moving for a whole lease (the
 * holder crashed), so a retry loop stops instead of spinning on a claim
 * nobody will finish. `now` is used only when the store does not report its
 * own clock ({@link leaseClock}).
 *
 * @example
 * return claimedElsewhere(store, decisionId, 30_000, new Date())
 */
export async function claimedElsewhere(
  store: object,
  decisionId: string,
  leaseMs: number,
  now: Date,
): Promise<
  { status: 'busy'; decisionId: string } | { status: 'recovery_needed'; decisionId: string; reason: string }
> {
  if (!hasClaimLease(store)) return { status: 'busy', decisionId }
  const claim = await store.claimState(decisionId)
  if (claim?.state === 'resuming' && claimHolderGone(claim.since, leaseMs, leaseClock(claim, now))) {
    return {
      status: 'recovery_needed',
      decisionId,
      reason: `claimed since ${claim.since} and no longer kept alive; call dispatcher.recover(decisionId)`,
    }
  }
  return { status: 'busy', decisionId }
}

/**
 * Takes over a crash-left claim for recovery: only once its holder stopped
 * keeping it alive for a whole lease, and only for the one recoverer whose
 * compare-and-set on the claim's time wins. `null` when taken over, else the
 * `busy` result to return. The lease is judged on the store's clock
 * ({@link leaseClock}); `now` only when the store does not report one.
 *
 * @example
 * const refused = await takeOverClaim(store, decisionId, 30_000, new Date())
 * if (refused) return refused
 */
export async function takeOverClaim(
  store: Pick<PusharyReviewStore, 'claimState' | 'reclaim'>,
  decisionId: string,
  leaseMs: number,
  now: Date,
): Promise<{ status: 'busy'; decisionId: string; reason: string } | null> {
  const claim = await store.claimState(decisionId)
  if (claim?.state !== 'resuming')
    return { status: 'busy', decisionId, reason: 'the review is no longer claimed' }
  if (!claimHolderGone(claim.since, leaseMs, leaseClock(claim, now))) {
    return {
      status: 'busy',
      decisionId,
      reason: 'the claim holder is alive (it keeps its claim fresh); retry later',
    }
  }
  const won = await store.reclaim(decisionId, claim.since, 'dispatcher.recover took over a crash-left claim')
  return won ? null : { status: 'busy', decisionId, reason: 'another recoverer took the claim over' }
}
