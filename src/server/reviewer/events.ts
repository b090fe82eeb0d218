/**
 * Server-sent events for one enrolled device. Events carry only the decision
 * id and status; the page re-fetches the list fragment, so what the device may
 * see is decided in one place (the list route), never by event payloads.
 * Another member's change to an approvers' set this customer is asked in is
 * an `approvers` event with an empty payload: it names nobody else's decision.
 */
import type { Context } from 'hono'
import { streamSSE } from 'hono/streaming'
import type { ReviewerDeps } from '../service-types.js'
import type { ReviewerEnv } from './device-auth.js'

/** Tuning for the event stream. */
export interface ReviewerEventOptions {
  /** Interval of `: keep-alive` comments that stop proxies timing the stream out. Default 15 000 ms. */
  readonly keepAliveMs?: number
  /** Reconnect delay the browser is told to use. Default 2 000 ms. */
  readonly retryMs?: number
  /** How often an open stream re-checks that its device is still enrolled. Default 1 000 ms. */
  readonly recheckMs?: number
  /** Called once when the stream ends (client gone, device revoked or server closing). */
  readonly onClose?: () => void
}

/**
 * Streams `decision` events for the device's customer until the client
 * disconnects or the device is revoked, then unsubscribes. A revoke is
 * written by another process (`pushary-mastra devices revoke`), so the
 * stream re-checks its device before every event and on a short timer.
 *
 * @example
 * app.get('/review/events', (c) => streamReviewerEvents(c, deps, { keepAliveMs: 15_000 }))
 */
export function streamReviewerEvents(
  c: Context<ReviewerEnv>,
  deps: Pick<ReviewerDeps, 'subscribe' | 'deviceFromToken' | 'inApproverSet'>,
  options: ReviewerEventOptions = {},
): Response {
  const externalId = c.get('externalId')
  const keepAliveMs = options.keepAliveMs ?? 15_000
  const retryMs = options.retryMs ?? 2_000
  const recheckMs = options.recheckMs ?? 1_000
  const deviceToken = c.get('deviceToken')
  const deviceId = c.get('deviceId')
  c.header('Cache-Control', 'no-store')
  // Disables response buffering in nginx-style proxies in front of the service.
  c.header('X-Accel-Buffering', 'no')
  return streamSSE(c, async (stream) => {
    // Writes are chained so a burst of events never interleaves frames.
    let chain: Promise<unknown> = Promise.resolve()
    const enqueue = (write: () => Promise<unknown>): void => {
      chain = chain.then(write).catch(() => undefined)
    }
    let stop: () => void = () => {}
    const closed = new Promise<void>((resolve) => {
      stop = resolve
      stream.onAbort(resolve)
    })
    let revoked = false
    // Fail closed: a device that cannot be confirmed (revoked, idle, moved
    // to another customer, or the lookup failed) gets nothing more.
    const stillEnrolled = async (): Promise<boolean> => {
      if (revoked) return false
      const device = await deps.deviceFromToken(deviceToken).catch(() => null)
      if (device?.deviceId === deviceId && device.externalId === externalId) return true
      revoked = true
      stop()
      return false
    }
    const unsubscribe = deps.subscribe((event) => {
      if (event.externalId === externalId) {
        enqueue(async () => {
          if (!(await stillEnrolled())) return
          await stream.writeSSE({
            event: 'decision',
            data: JSON.stringify({ decisionId: event.decisionId, status: event.status }),
          })
        })
        return
      }
      const set = event.approverSet
      if (typeof set !== 'string') return
      enqueue(async () => {
        if (!(await stillEnrolled())) return
        // A failed lookup sends nothing: the next event or reconnect refreshes anyway.
        if (!(await deps.inApproverSet(set, externalId).catch(() => false))) return
        await stream.writeSSE({ event: 'approvers', data: '{}' })
      })
    })
    const keepAlive = setInterval(() => enqueue(() => stream.write(': keep-alive\n\n')), keepAliveMs)
    const recheck = setInterval(() => void stillEnrolled(), recheckMs)
    try {
      // Subscribed before `ready`, so the client's refresh on `ready` cannot miss a change.
      enqueue(() => stream.writeSSE({ event: 'ready', data: '{}', retry: retryMs }))
      await closed
    } finally {
      clearInterval(keepAlive)
      clearInterval(recheck)
      unsubscribe()
      options.onClose?.()
    }
  })
}
