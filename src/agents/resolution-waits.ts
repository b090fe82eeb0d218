/**
 * The waits of a blocking resolve: for the person's answer (withdrawing the
 * question when the local wait ends), for a concurrent resolver that holds
 * the review's workflow run, so its outcome is reported, and for several
 * approvers, each answer resumed as it arrives until the set settles.
 */
import type { PusharyClient } from '../pushary/client.js'
import type { PusharyAgentReview } from '../store/review-schema.js'
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

/** The first of `decisionIds` that is no longer pending, or `null` once `deadline` passed. */
async function nextAnswered(
  client: PusharyClient,
  decisionIds: readonly string[],
  deadline: number,
): Promise<string | null> {
  for (;;) {
    for (const [index, decisionId] of decisionIds.entries()) {
      const remaining = deadline - Date.now()
      // The service holds the first read open; the others are looked at in passing.
      const most = decisionIds.length === 1 ? 50 : 2
      const wait = index === 0 && remaining > 0 ? Math.min(most, Math.ceil(remaining / 1000)) : 0
      const decision = await client.decisions.get(decisionId, wait > 0 ? { wait } : {})
      if (decision.status !== 'pending') return decisionId
    }
    if (Date.now() >= deadline) return null
  }
}

/**
 * Several approvers, blocking: resumes each member as its answer arrives
 * (the review run counts it, `awaiting_approvers`) until one resume settles
 * the set and performs the native resume, or another resumer did. At the end
 * of the local wait every open question is withdrawn (fail closed) and one
 * more resume settles the set: declined, since the withdrawn ones never approve.
 *
 * @example
 * const outcome = await settleAgentSet({ client, store, decisionId, agent, mastra }, members, 55_000)
 */
export async function settleAgentSet<TOutput>(
  input: ResumeInput,
  members: readonly PusharyAgentReview[],
  waitMs: number,
): Promise<ResumeResult<TOutput>> {
  const deadline = Date.now() + waitMs
  const open = members.map((member) => member.decisionId)
  let withdrawn = false
  for (;;) {
    const next = await nextAnswered(input.client, open, withdrawn ? 0 : deadline)
    if (next === null) {
      if (withdrawn || open.length === 0) {
        return {
          status: 'pending',
          decisionId: input.decisionId,
          reason: "the approvers' questions are still open after they were withdrawn",
          reasonCode: 'not_answered',
        }
      }
      // The local wait ended: withdraw every open question (one answered
      // meanwhile refuses the cancel and is resumed with its answer).
      for (const decisionId of open) await input.client.decisions.cancel(decisionId).catch(() => undefined)
      withdrawn = true
      continue
    }
    open.splice(open.indexOf(next), 1)
    const outcome = await resumeOnce<TOutput>(
      { ...input, decisionId: next },
      Math.max(0, deadline - Date.now()),
    )
    if (outcome.status === 'pending' && outcome.reasonCode === 'awaiting_approvers') continue
    return outcome
  }
}
