/**
 * Moves overdue pending decisions to `expired` on a timer. Reads expire
 * lazily too, so the interval only bounds how late callbacks and long-poll
 * wake-ups for unread decisions can be.
 */

/** A running sweeper. */
export interface ExpirySweeper {
  /** Stops the timer and waits for a sweep in progress. */
  stop(): Promise<void>
}

/**
 * Starts sweeping every `intervalMs`.
 *
 * @example
 * const sweeper = startExpirySweeper({ sweep: () => service.sweep(), intervalMs: 1000, onError: console.error })
 * await sweeper.stop()
 */
export function startExpirySweeper(options: {
  sweep: () => Promise<number>
  intervalMs: number
  onError: (error: unknown) => void
}): ExpirySweeper {
  let running: Promise<void> | null = null
  const tick = () => {
    if (running !== null) return
    running = options
      .sweep()
      .then(() => undefined, options.onError)
      .finally(() => {
        running = null
      })
  }
  const timer = setInterval(tick, Math.max(10, options.intervalMs))
  timer.unref()
  tick()
  return {
    async stop() {
      clearInterval(timer)
      await running
    },
  }
}
