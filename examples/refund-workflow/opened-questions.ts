/**
 * What the demo does on Ctrl-C: it cancels the questions it opened, so the
 * phone is not left with a card that nothing will ever act on. Every question
 * is created through the demo's one client, so that client's `fetch` notes
 * each created decision, including one whose create is still on the wire
 * when Ctrl-C arrives.
 */
import type { PusharyClient, PusharyFetch } from '@pushary/mastra'

export interface OpenedQuestions {
  /** Pass as the client's `fetch`. */
  readonly fetch: PusharyFetch
  /** Cancels every question still open; returns what became of each. */
  cancelAll(client: PusharyClient): Promise<string[]>
}

export function createOpenedQuestions(): OpenedQuestions {
  const opened = new Set<string>()
  const creating = new Set<Promise<void>>()
  const isCreate = (url: string, init: RequestInit) =>
    (init.method ?? 'GET').toUpperCase() === 'POST' && new URL(url).pathname.endsWith('/decisions')

  return {
    fetch: (url, init) => {
      const sent = globalThis.fetch(url, init)
      if (!isCreate(url, init)) return sent
      // Noted from the moment it is sent: Ctrl-C may arrive before the answer.
      const noted = sent
        .then((response) => (response.ok ? response.clone().json() : null))
        .then((body: { decisionId?: unknown } | null) => {
          if (typeof body?.decisionId === 'string') opened.add(body.decisionId)
        })
        .catch(() => {})
      creating.add(noted)
      void noted.finally(() => creating.delete(noted))
      return sent
    },
    async cancelAll(client) {
      await Promise.allSettled([...creating])
      return Promise.all(
        [...opened].map(async (decisionId) => {
          try {
            const result = await client.decisions.cancel(decisionId)
            return `${decisionId} ${result.status}`
          } catch (error) {
            // Already answered or expired: nothing is waiting on the phone any more.
            return `${decisionId} not cancelled (${error instanceof Error ? error.message : String(error)})`
          }
        }),
      )
    },
  }
}
