/**
 * In-process bus for decision transitions. Long-polls and the reviewer page's
 * live updates listen here; the service publishes after each committed write,
 * so a listener that re-reads the database sees the new state.
 */
import type { DecisionEvent } from './service-types.js'

/** Publish/subscribe for decision events, plus a waiter for long-polls. */
export interface DecisionEvents {
  publish(event: DecisionEvent): void
  subscribe(listener: (event: DecisionEvent) => void): () => void
  /**
   * Resolves `true` when `decisionId` leaves `pending`, `false` after
   * `timeoutMs`, on `signal` abort, or when the bus closes.
   */
  waitForSettled(decisionId: string, timeoutMs: number, signal?: AbortSignal): Promise<boolean>
  /** Releases every waiter (with `false`) and drops every listener. */
  close(): void
}

/**
 * Creates an event bus owned by one service instance.
 *
 * @example
 * const events = createDecisionEvents()
 * const stop = events.subscribe((e) => console.log(e.decisionId, e.status))
 * events.publish({ decisionId: 'dec_1', externalId: null, status: 'answered' })
 * stop()
 */
export function createDecisionEvents(): DecisionEvents {
  const listeners = new Set<(event: DecisionEvent) => void>()
  const closers = new Set<() => void>()
  let closed = false

  const subscribe = (listener: (event: DecisionEvent) => void): (() => void) => {
    if (closed) return () => {}
    listeners.add(listener)
    return () => {
      listeners.delete(listener)
    }
  }

  return {
    publish(event) {
      for (const listener of [...listeners]) {
        try {
          listener(event)
        } catch (error) {
          // One broken listener (a closed SSE stream, say) must not stop the others.
          console.error('Pushary dev server: a decision listener threw', error)
        }
      }
    },
    subscribe,
    waitForSettled(decisionId, timeoutMs, signal) {
      if (closed || signal?.aborted || timeoutMs <= 0) return Promise.resolve(false)
      return new Promise<boolean>((resolve) => {
        const finish = (settled: boolean) => {
          clearTimeout(timer)
          unsubscribe()
          signal?.removeEventListener('abort', onAbort)
          closers.delete(onClose)
          resolve(settled)
        }
        const onAbort = () => finish(false)
        const onClose = () => finish(false)
        const timer = setTimeout(() => finish(false), timeoutMs)
        const unsubscribe = subscribe((event) => {
          if (event.decisionId === decisionId && event.status !== 'pending') finish(true)
        })
        signal?.addEventListener('abort', onAbort, { once: true })
        closers.add(onClose)
      })
    },
    close() {
      closed = true
      for (const close of [...closers]) close()
      listeners.clear()
    },
  }
}
