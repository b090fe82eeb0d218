/**
 * A readiness probe for a decision service a test or a demo started itself:
 * wait, within a bound, until it answers an authenticated read, before the
 * first question is created. A service still binding, starting (503) or
 * briefly unreachable is waited for; a refusal that waiting cannot fix (a
 * wrong API key, a wrong path) is thrown at once.
 */
import {
  PusharyAbortError,
  PusharyApiError,
  type PusharyClient,
  PusharyNetworkError,
  PusharyTimeoutError,
} from '@pushary/mastra'
import { PusharyTestingError } from './testing-error.js'

/**
 * Options of {@link waitForPusharyService}.
 *
 * @example
 * await waitForPusharyService(client, { timeoutMs: 30_000 })
 */
export interface WaitForServiceOptions {
  /** The bound on the whole wait, default 15 000 ms (1–600 000). */
  timeoutMs?: number
  /** Pause between probes, default 100 ms. */
  intervalMs?: number
}

function checkMs(field: string, value: number | undefined, fallback: number, max: number): number {
  if (value === undefined) return fallback
  if (!Number.isInteger(value) || value < 1 || value > max) {
    throw new PusharyTestingError({
      code: 'invalid_input',
      operation: 'waitForPusharyService',
      field,
      message: `${field} must be an integer from 1 to ${max}`,
    })
  }
  return value
}

/** True for what a starting or briefly overloaded service answers; false for what waiting cannot fix. */
function worthWaiting(error: unknown): boolean {
  if (error instanceof PusharyNetworkError || error instanceof PusharyTimeoutError) return true
  if (error instanceof PusharyAbortError) return true
  return error instanceof PusharyApiError && (error.status >= 500 || error.status === 429)
}

/**
 * Resolves once the service behind `client` answers an authenticated read
 * (`decisions.list` with `limit: 1`). Rejects with `PusharyTestingError`
 * `service_not_ready` naming the URL and the last failure when the bound
 * passes, or at once with the client's own error when the service refuses
 * (401 for a wrong key).
 *
 * @example
 * const client = createPusharyClient({ baseUrl: service.baseUrl, apiKey: service.apiKey })
 * await waitForPusharyService(client, { timeoutMs: 30_000 })
 * await client.decisions.create({ question: 'Refund EUR 48?', externalId: 'customer_1' })
 */
export async function waitForPusharyService(
  client: PusharyClient,
  options: WaitForServiceOptions = {},
): Promise<void> {
  const timeoutMs = checkMs('timeoutMs', options.timeoutMs, 15_000, 600_000)
  const intervalMs = checkMs('intervalMs', options.intervalMs, 100, 60_000)
  const deadline = Date.now() + timeoutMs
  let last: unknown
  for (;;) {
    const remaining = deadline - Date.now()
    if (remaining <= 0) break
    try {
      // One probe may not outlast the bound (a socket that accepts and never answers).
      await client.decisions.list({ limit: 1 }, { signal: AbortSignal.timeout(Math.min(remaining, 5_000)) })
      return
    } catch (error) {
      if (!worthWaiting(error)) throw error
      last = error
    }
    await new Promise((resolve) =>
      setTimeout(resolve, Math.min(intervalMs, Math.max(0, deadline - Date.now()))),
    )
  }
  const detail = last instanceof Error ? last.message : 'no probe finished'
  throw new PusharyTestingError({
    code: 'service_not_ready',
    operation: 'waitForPusharyService',
    field: 'baseUrl',
    message: `the decision service at ${client.baseUrl} did not answer within ${timeoutMs} ms (last: ${detail})`,
    cause: last,
  })
}
