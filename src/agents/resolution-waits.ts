/**
 * The two waits of a blocking resolve: for the person's answer (withdrawing
 * the question when the local wait ends), and for a concurrent resolver that
 * holds the review's workflow run, so its outcome is reported.
 */
import type { PusharyClient } from '../pushary/client.js'
import { resumeAgentReview } from './agent-review-resume.js'

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/**
 * Waits for the decision to leave `pending`; at the end of the local wait
 * cancels it (fail closed).
 *
 * @example
 * await waitForAnswer(client, decisionId, 55_000)
 */
export async function waitForAnswer(
  client: PusharyClient,
  decisionId: string,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const remaining = deadline - Date.now()
    const decision = await client.decisions.get(
      decisionId,
      remaining > 0 ? { wait: Math.min(50, Math.ceil(remaining / 1000)) } : {},
    )
    if (decision.status !== 'pending') return
    if (Date.now() >= deadline) break
  }
  // The local wait ended: withdraw the question so it resolves as cancelled,
  // which declines the call (fail closed; a late "yes" cannot approve it).
  await client.decisions.cancel(decisionId)
}

type ResumeInput = Parameters<typeof resumeAgentReview>[0]
type ResumeResult<TOutput> = Awaited<ReturnType<typeof resumeAgentReview<TOutput>>>

/**
 * One resume, waiting out a concurrent resolver that holds the review's
 * workflow run (it does not share this store) so that its outcome is
 * reported instead of a verdict this call never observed.
 *
 * @example
 * const outcome = await resumeOnce({ client, store, decisionId, agent, mastra }, 55_000)
 */
export async function resumeOnce<TOutput>(
  input: ResumeInput,
  waitMs: number,
): Promise<ResumeResult<TOutput>> {
  const deadline = Date.now() + waitMs
  for (;;) {
    let outcome: ResumeResult<TOutput>
    try {
      outcome = await resumeAgentReview<TOutput>(input)
    } catch (error) {
      return {
        status: 'uncertain',
        decisionId: input.decisionId,
        reason: message(error),
        reasonCode: 'resume_failed',
      }
    }
    const waiting = outcome.status === 'busy' && outcome.reasonCode === 'review_run_resuming'
    if (!waiting || Date.now() >= deadline) return outcome
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}
