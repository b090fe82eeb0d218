/**
 * Gathers calls that arrive together into one group. Concurrent requests
 * reach the same point over several event-loop turns (body, validation,
 * reads), so a group is closed only once a turn passes with no new arrival,
 * or after `maxTurns` turns. A lone call waits one extra turn.
 */

/**
 * Wraps `runGroup`, which receives the items of one group in arrival order
 * and returns one outcome per item, in the same order.
 *
 * @example
 * const insert = groupByTurns((rows: Row[]) => writeAllInOneTransaction(rows))
 * const [a, b] = await Promise.all([insert(rowA), insert(rowB)]) // one transaction
 */
export function groupByTurns<T, R>(
  runGroup: (items: T[]) => Promise<Promise<R>[]>,
  maxTurns = 8,
): (item: T) => Promise<R> {
  let queued: { item: T; settle: (outcome: Promise<R>) => void; fail: (error: unknown) => void }[] = []

  const run = async (): Promise<void> => {
    const group = queued
    queued = []
    try {
      const outcomes = await runGroup(group.map((entry) => entry.item))
      group.forEach((entry, index) => {
        entry.settle(outcomes[index] ?? Promise.reject(new Error('no outcome for a grouped call')))
      })
    } catch (error) {
      for (const entry of group) entry.fail(error)
    }
  }

  const closeWhenArrivalsStop = (turns: number, seen: number): void => {
    if (queued.length > seen && turns < maxTurns) {
      setImmediate(closeWhenArrivalsStop, turns + 1, queued.length)
      return
    }
    void run()
  }

  return (item) =>
    new Promise<R>((resolve, reject) => {
      queued.push({ item, settle: resolve, fail: reject })
      if (queued.length === 1) setImmediate(closeWhenArrivalsStop, 0, 0)
    })
}
