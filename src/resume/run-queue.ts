/**
 * Serializes async work per key inside one process. Mastra lets a second
 * resume of the same run wait only 2 s for the first before losing it, so the
 * dispatcher queues resumes of one run instead of racing them.
 */
export interface KeyedQueue {
  run<T>(key: string, work: () => Promise<T>): Promise<T>
  /** Whether nothing is queued or running under `key`: work queued now starts without waiting. */
  idle(key: string): boolean
}

/**
 * @example
 * const queue = createKeyedQueue()
 * await queue.run(runId, () => resumeOne())
 */
export function createKeyedQueue(): KeyedQueue {
  const tails = new Map<string, Promise<unknown>>()
  return {
    run<T>(key: string, work: () => Promise<T>): Promise<T> {
      const previous = tails.get(key) ?? Promise.resolve()
      const next = previous.then(work, work)
      const tail = next.then(
        () => undefined,
        () => undefined,
      )
      tails.set(key, tail)
      void tail.then(() => {
        if (tails.get(key) === tail) tails.delete(key)
      })
      return next
    },
    idle: (key) => !tails.has(key),
  }
}
