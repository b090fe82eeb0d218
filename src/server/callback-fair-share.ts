/**
 * Which due callbacks start now. The outbox has a fixed number of slots; a
 * receiver that accepts a connection and never answers holds its slot until
 * the attempt's timeout. Served first come, first served, 16 such receivers
 * at 4 slots each took all 64 and another customer's callback to a healthy
 * receiver waited for their timeouts (12 s, then more than 30 s). So the
 * slots are shared out instead:
 *
 * - round-robin: the next slot goes to the customer, then the receiver
 *   (`host:port`), with the fewest deliveries in flight, oldest due first;
 * - caps: per receiver (4), per customer (a quarter of all slots), and one
 *   slot only for a receiver whose last attempt failed (it hung or refused);
 * - a reserve: the last quarter of the slots goes only to a receiver with
 *   nothing in flight whose last attempt did not fail, so however many slow
 *   receivers are busy, a healthy one still starts at once.
 *
 * Pure: the outbox passes what is in flight and what is due.
 */

/** A due delivery as the scan reads it. */
export interface DueCallback {
  readonly deliveryId: number
  /** `host:port` of the callback URL, lower-cased. */
  readonly receiver: string
  /** The decision's customer (`externalId`), `''` for none. */
  readonly customer: string
  readonly dueMs: number
}

/** The slot limits, resolved. */
export interface FairShareLimits {
  readonly maxConcurrency: number
  readonly perReceiver: number
  readonly perCustomer: number
  /** Slots kept for receivers with nothing in flight. */
  readonly reserve: number
}

/** What is in flight now. */
export interface FlightLoad {
  readonly total: number
  readonly receivers: ReadonlyMap<string, number>
  readonly customers: ReadonlyMap<string, number>
  /** True when the receiver's last attempt failed. */
  readonly failing: (receiver: string) => boolean
}

/**
 * Default limits for `maxConcurrency` slots and `perReceiver`; explicit
 * options win.
 *
 * @example
 * resolveFairShare({ maxConcurrency: 64, perReceiver: 4 }) // perCustomer 16, reserve 16
 */
export function resolveFairShare(options: {
  maxConcurrency: number
  perReceiver: number
  perCustomer?: number | undefined
}): FairShareLimits {
  const quarter = Math.max(1, Math.floor(options.maxConcurrency / 4))
  return {
    maxConcurrency: options.maxConcurrency,
    perReceiver: options.perReceiver,
    perCustomer: Math.max(1, options.perCustomer ?? quarter),
    // With a single slot there is nothing to keep back.
    reserve: options.maxConcurrency > 1 ? quarter : 0,
  }
}

/**
 * The deliveries to start now, in order, from `due` (any order) given the
 * current `load`. Never more than the free slots.
 *
 * @example
 * for (const next of chooseFairly(due, load, limits)) start(next.deliveryId)
 */
export function chooseFairly(
  due: readonly DueCallback[],
  load: FlightLoad,
  limits: FairShareLimits,
): DueCallback[] {
  const receivers = new Map(load.receivers)
  const customers = new Map(load.customers)
  let total = load.total
  const queues = new Map<string, DueCallback[]>()
  for (const entry of due) {
    const queue = queues.get(entry.receiver) ?? []
    queue.push(entry)
    queues.set(entry.receiver, queue)
  }
  for (const queue of queues.values()) queue.sort((a, b) => a.dueMs - b.dueMs || a.deliveryId - b.deliveryId)

  const admissible = (entry: DueCallback): boolean => {
    const atReceiver = receivers.get(entry.receiver) ?? 0
    const failing = load.failing(entry.receiver)
    if (atReceiver >= (failing ? 1 : limits.perReceiver)) return false
    if ((customers.get(entry.customer) ?? 0) >= limits.perCustomer) return false
    if (total < limits.maxConcurrency - limits.reserve) return true
    return total < limits.maxConcurrency && atReceiver === 0 && !failing
  }

  const chosen: DueCallback[] = []
  while (total < limits.maxConcurrency && queues.size > 0) {
    let best: DueCallback | null = null
    let bestKey: readonly number[] = []
    for (const [receiver, queue] of queues) {
      // A receiver's queue is in due order; the first entry that may start
      // stands for it (another customer's row may be admissible when the
      // first one's customer is at its cap).
      const entry = queue.find(admissible)
      if (entry === undefined) {
        queues.delete(receiver)
        continue
      }
      const key = [
        customers.get(entry.customer) ?? 0,
        receivers.get(receiver) ?? 0,
        entry.dueMs,
        entry.deliveryId,
      ]
      if (best === null || compareKeys(key, bestKey) < 0) {
        best = entry
        bestKey = key
      }
    }
    if (best === null) break
    chosen.push(best)
    total += 1
    receivers.set(best.receiver, (receivers.get(best.receiver) ?? 0) + 1)
    customers.set(best.customer, (customers.get(best.customer) ?? 0) + 1)
    const queue = queues.get(best.receiver) ?? []
    queue.splice(queue.indexOf(best), 1)
    if (queue.length === 0) queues.delete(best.receiver)
  }
  return chosen
}

function compareKeys(a: readonly number[], b: readonly number[]): number {
  for (let index = 0; index < a.length; index += 1) {
    const difference = (a[index] ?? 0) - (b[index] ?? 0)
    if (difference !== 0) return difference
  }
  return 0
}
