/**
 * Log lines an operator can act on, through the Mastra instance's logger
 * (never `console`), at most once per interval per cause: a flood of 401s or
 * of `misconfigured` resumes becomes one line a minute that names what to
 * check, not thousands and not silence.
 */
import type { Mastra } from '@mastra/core/mastra'

/** One rate-limited warning channel of a dispatcher. */
export interface WorkerLog {
  /** Logs `message` unless a line of the same `cause` was logged within the interval; returns whether it logged. */
  warn(cause: string, message: string): boolean
}

/**
 * @example
 * const log = createWorkerLog(mastra, () => new Date())
 * log.warn('signature', 'callback refused: check PUSHARY_WEBHOOK_SECRET')
 */
export function createWorkerLog(mastra: Mastra, now: () => Date, intervalMs = 60_000): WorkerLog {
  const last = new Map<string, number>()
  return {
    warn(cause, message) {
      const at = now().getTime()
      const previous = last.get(cause)
      if (previous !== undefined && at - previous < intervalMs) return false
      last.set(cause, at)
      try {
        mastra.getLogger()?.warn(`[pushary] ${message}`)
      } catch {
        // A logger that throws must not turn a log line into a failed resume.
      }
      return true
    },
  }
}
