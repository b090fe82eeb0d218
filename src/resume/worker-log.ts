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
  /**
   * Logs what an operator must act on (a resume this worker cannot do, a
   * review parked `uncertain`) and returns the result unchanged.
   */
  observe<T extends ObservedResult>(result: T): T
}

/** The fields of a dispatch result that {@link WorkerLog.observe} reads. */
interface ObservedResult {
  status: string
  decisionId?: string
  reason?: string
  missing?: string
}

/**
 * @example
 * const log = createWorkerLog(mastra, () => new Date())
 * log.warn('signature', 'callback refused: check PUSHARY_WEBHOOK_SECRET')
 */
export function createWorkerLog(mastra: Mastra, now: () => Date, intervalMs = 60_000): WorkerLog {
  const last = new Map<string, number>()
  const log: WorkerLog = {
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
    observe(result) {
      if (result.status === 'misconfigured') {
        // One line a minute per kind of gap, not one per review.
        log.warn(
          `misconfigured:${result.missing ?? result.reason}`,
          `cannot resume ${result.decisionId ?? 'a review'} on this worker, left pending and retried: ${result.reason}`,
        )
      } else if (result.status === 'uncertain') {
        log.warn(
          `uncertain:${result.decisionId}`,
          `review ${result.decisionId} is parked uncertain (${result.reason}); an operator resolves it: pushary-mastra reviews show ${result.decisionId}, then reviews recover`,
        )
      }
      return result
    },
  }
  return log
}
