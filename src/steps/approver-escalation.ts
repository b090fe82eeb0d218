/**
 * Escalation of several approvers: later tiers asked only when the earlier
 * ones have not settled the set within a delay ("ask Alice; if nobody has
 * decided in 10 minutes, ask Bob too").
 *
 * The timer is durable because it is data, not a process: the first ask's
 * time and how many tiers were asked so far ride in the step's suspend
 * payload (Mastra's snapshot). Whichever worker runs `reconcile` after the
 * delay wakes the run through a claimed resume of a waiting member's review;
 * the step itself re-reads the set and asks the tier only if it is still
 * due. The service's idempotency key (the approver's own) makes a repeated
 * ask land on the same decision, and the run's single resume serializes the
 * wakes, so a tier is asked once whatever crashed or raced.
 */
import { z } from 'zod/v4'
import { externalIdSchema } from '../pushary/identity.js'

/** Longest delay before a tier is asked: 30 days. */
export const ESCALATION_AFTER_MAX_SECONDS = 30 * 24 * 3600
/** Most tiers one set may escalate to. */
export const ESCALATION_TIERS_MAX = 10

/**
 * One later tier: `externalIds` asked `afterSeconds` after the first
 * approvers were asked, if the set has not been settled by then (or sooner,
 * as soon as every question asked so far has ended without settling it).
 *
 * @example
 * pusharyEscalationTierSchema.parse({ afterSeconds: 600, externalIds: ['bob'] })
 */
export const pusharyEscalationTierSchema = z.object({
  afterSeconds: z.number().int().min(1).max(ESCALATION_AFTER_MAX_SECONDS),
  externalIds: z.array(externalIdSchema).min(1),
})

/** A tier as the rule keeps it: the requester removed, never empty. */
export interface EscalationTier {
  afterSeconds: number
  externalIds: string[]
}

/**
 * Where a set's escalation stands, kept in the suspend payload: when the
 * first approvers were asked (the timer's start) and how many later tiers
 * have been asked.
 */
export const approverEscalationStateSchema = z.object({
  startedAt: z.iso.datetime(),
  asked: z.number().int().min(0),
})
/** @example const state: ApproverEscalationState = { startedAt: '2026-12-07T09:00:00.000Z', asked: 0 } */
export type ApproverEscalationState = z.infer<typeof approverEscalationStateSchema>

/**
 * When the next tier is due, or `null` when every tier was asked (or the
 * set has none).
 *
 * @example
 * nextEscalationAt(tiers, { startedAt: '2026-12-07T09:00:00.000Z', asked: 0 }) // 2026-12-07T09:10:00.000Z for 600 s
 */
export function nextEscalationAt(
  tiers: readonly EscalationTier[] | undefined,
  state: ApproverEscalationState | undefined,
): Date | null {
  if (!tiers || !state) return null
  const tier = tiers[state.asked]
  if (!tier) return null
  const start = Date.parse(state.startedAt)
  if (!Number.isFinite(start)) return null
  return new Date(start + tier.afterSeconds * 1000)
}

/**
 * How many tiers are due at `now` from `state` (0 when none). When nothing
 * asked so far is still open, the next tier is due at once: a set whose
 * every question ended unsettled would otherwise wait for a timer for
 * nothing.
 *
 * @example
 * dueTiers(rule.escalation, state, Date.now(), { nothingOpen: false })
 */
export function dueTiers(
  tiers: readonly EscalationTier[] | undefined,
  state: ApproverEscalationState | undefined,
  now: number,
  { nothingOpen }: { nothingOpen: boolean },
): number {
  if (!tiers || !state) return 0
  let due = 0
  let asked = state.asked
  while (asked < tiers.length) {
    const at = nextEscalationAt(tiers, { ...state, asked })
    const early = nothingOpen && due === 0
    if (!early && (at === null || at.getTime() > now)) break
    due++
    asked++
  }
  return due
}

/**
 * The approvers asked so far: the first ones, then each asked tier in order
 * (the order of the suspend payload's members).
 *
 * @example
 * askedApprovers(['alice'], [{ afterSeconds: 600, externalIds: ['bob'] }], 1) // ['alice', 'bob']
 */
export function askedApprovers(
  first: readonly string[],
  tiers: readonly EscalationTier[] | undefined,
  asked: number,
): string[] {
  return [...first, ...(tiers ?? []).slice(0, asked).flatMap((tier) => tier.externalIds)]
}

/**
 * A delay as a person reads it on a card: `45 s`, `10 min`, `2 h`, `3 d`.
 *
 * @example
 * readableDelay(600) // '10 min'
 */
export function readableDelay(seconds: number): string {
  if (seconds < 60) return `${seconds} s`
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`
  if (seconds < 86_400) return `${Math.round(seconds / 360) / 10} h`
  return `${Math.round(seconds / 8640) / 10} d`
}
