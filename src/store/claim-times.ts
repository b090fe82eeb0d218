/**
 * The claim times a store wrote itself. A claim's time is its lease: the
 * holder keeps it alive by compare-and-set on exactly that value
 * (`keepAlive`). The store that just wrote a claim knows the value without
 * reading it back, so the holder's lease starts from it; a store that did
 * not write one (another process's, or a store of the user's own) is asked
 * with `claimState` as before. Each time is handed out once.
 */

/** Claims a store wrote and no lease has taken yet; more than this and the oldest are dropped. */
const MAX_REMEMBERED = 1000

const written = new WeakMap<object, Map<string, string>>()

/**
 * Records that `store` itself claimed (or took over) `decisionId` at `at`.
 *
 * @example
 * rememberClaimTime(store, decisionId, at)
 */
export function rememberClaimTime(store: object, decisionId: string, at: string): void {
  let times = written.get(store)
  if (times === undefined) {
    times = new Map()
    written.set(store, times)
  }
  times.delete(decisionId)
  times.set(decisionId, at)
  if (times.size > MAX_REMEMBERED) {
    const oldest = times.keys().next().value
    if (oldest !== undefined) times.delete(oldest)
  }
}

/**
 * The time `store` wrote when it last claimed `decisionId`, once; `undefined`
 * when it wrote none (or the time was already taken or forgotten).
 *
 * @example
 * const since = takeClaimTime(store, decisionId) ?? (await store.claimState(decisionId))?.since
 */
export function takeClaimTime(store: object, decisionId: string): string | undefined {
  const times = written.get(store)
  const at = times?.get(decisionId)
  times?.delete(decisionId)
  return at
}

/**
 * Drops what `store` remembered of `decisionId` (its claim ended).
 *
 * @example
 * forgetClaimTime(store, decisionId)
 */
export function forgetClaimTime(store: object, decisionId: string): void {
  written.get(store)?.delete(decisionId)
}
