/**
 * What a spent permit says about a review `recover` looks at. The wire has
 * no read of a permit, so recovery presents the same authorization and
 * action again: a spent authorization is refused `already_consumed` with the
 * `executionState` its receipt recorded (first report wins). Only a review
 * whose store records a permit is probed, so the probe can never be the
 * first spend of an approval.
 */
import type { PusharyClient } from '../pushary/client.js'
import type { PusharyReviewStore } from '../store/review-store.js'

/**
 * `none`: no permit recorded (recovery decides as before); `receipt`: the
 * action ran and reported `outcome`; `started`: the permit was spent without
 * a receipt (or its outcome can no longer be read), so the action may have
 * started.
 */
export type PermitEvidence =
  | { kind: 'none' }
  | { kind: 'receipt'; permitId: string; outcome: 'succeeded' | 'failed'; reason: string }
  | { kind: 'started'; permitId: string; reason: string }

/**
 * Reads the permit evidence of one review.
 *
 * @example
 * const evidence = await readPermitEvidence(client, store, decisionId)
 * if (evidence.kind === 'receipt') await store.finish(decisionId, 'completed', evidence.reason)
 */
export async function readPermitEvidence(
  client: Pick<PusharyClient, 'consumeAuthorization' | 'recordReceipt'>,
  store: Pick<PusharyReviewStore, 'permitOf'>,
  decisionId: string,
): Promise<PermitEvidence> {
  const permit = await store.permitOf(decisionId)
  if (permit === null) return { kind: 'none' }
  const { permitId } = permit
  const started = (why: string): PermitEvidence => ({
    kind: 'started',
    permitId,
    reason: `permit ${permitId} was spent (${permit.consumedAt}) but ${why}: the action may have started; confirm it, then store.recover(decisionId, "completed" | "stale", reason)`,
  })
  const probe = await client.consumeAuthorization({ authorizationId: decisionId, ...permit.action })
  if (probe.status === 'permitted') {
    // The service no longer knew the spend: this probe is not an action, so
    // its permit is closed at once and never used.
    await client.recordReceipt(probe.permitId, { outcome: 'failed', summary: 'recovery probe; nothing ran' })
    return started('the service no longer knows it')
  }
  if (probe.refusal !== 'already_consumed')
    return started(`the service now refuses to report it (${probe.refusal})`)
  if (probe.executionState === 'succeeded' || probe.executionState === 'failed') {
    return {
      kind: 'receipt',
      permitId,
      outcome: probe.executionState,
      reason: `recovered from permit ${permitId}'s receipt: the action ran and ${probe.executionState}`,
    }
  }
  return started('no receipt was recorded')
}
