import type { Mastra } from '@mastra/core/mastra'
import type { PusharyClient } from '../pushary/client.js'

/** Cancels a decision the failing step asked; a failed cancel is logged, never hides the step's own error. */
export async function withdrawAsked(
  client: PusharyClient,
  mastra: Mastra | undefined,
  decisionId: string,
  cause: unknown,
): Promise<void> {
  const log = mastra?.getLogger()
  const why = cause instanceof Error ? cause.message : String(cause)
  try {
    await client.decisions.cancel(decisionId)
    log?.warn(
      `[pushary] withdrew decision ${decisionId} (cancelled, its link with it): the approval step failed after asking (${why}); check the step's store and onFallback`,
    )
  } catch (error) {
    log?.error(
      `[pushary] decision ${decisionId} stays open although its step failed (${why}); cancelling it failed: ${error instanceof Error ? error.message : String(error)}. Cancel it with client.decisions.cancel`,
    )
  }
}
