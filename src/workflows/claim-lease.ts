/**
 * The claim lease. The holder of a `resuming` claim moves the claim's time
 * forward while it works (`store.keepAlive`), so recovery can tell a claim
 * whose holder died (its time stopped moving) from a live one, and never
 * takes over a live claim. Nothing is reset because time passed: a claim
 * is only taken over, by one recoverer, once its holder stopped proving it
 * is alive.
 */
import type { PusharyReviewStore } from '../store/review-store.js'

/** Default lease: a claim whose time has not moved for this long has lost its holder. */
export const DEFAULT_CLAIM_LEASE_MS = 30_000

/**
 * Runs `work` while keeping the claim on `decisionId` alive, beating five
 * times per lease.
 *
 * @example
 * await whileHoldingClaim(store, decisionId, 30_000, () => resumeRun())
 */
export async function whileHoldingClaim<T>(
  store: PusharyReviewStore,
  decisionId: string,
  leaseMs: number,
  work: () => Promise<T>,
): Promise<T> {
  let since = (await store.claimState(decisionId))?.since ?? null
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
 * claim's time as `store.claimState` returned it.
 *
 * @example
 * if (!claimHolderGone(claim.since, 30_000, new Date())) return { status: 'busy' }
 */
export function claimHolderGone(since: string, leaseMs: number, now: Date): boolean {
  return now.getTime() - Date.parse(since) >= leaseMs
}
