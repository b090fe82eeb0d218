/**
 * Permits (`POST /authorizations/consume`) and receipts
 * (`POST /authorizations/{permitId}/receipt`). An authorization is an
 * approved decision (answered confirm, affirmative) or a policy `allow`
 * verdict; it is spent at most once, and only for exactly the action that
 * was authorized. The single use is the UNIQUE `authorization_id` of the
 * permits table: of two racing consumes, one insert wins, in one or many
 * processes. A receipt records what the action did; the first one wins.
 */
import { randomBytes } from 'node:crypto'
import type { Client } from '@libsql/client'
import type { AuthorizeInput } from '../pushary/decision-schemas.js'
import { canonicalJson } from '../pushary/identity.js'
import { isApproved } from '../pushary/question.js'
import { unshownBoundFields } from './bound-fields.js'
import type { DecisionRecord } from './decisions-repo.js'

/** How long a policy `allow` verdict can be spent. */
export const POLICY_AUTHORIZATION_TTL_MS = 5 * 60_000
/** How long a person's approval can be spent after the answer. */
export const HUMAN_AUTHORIZATION_TTL_MS = 24 * 60 * 60_000
/** Lifetime of an issued permit. */
export const PERMIT_TTL_MS = 10 * 60_000
/**
 * How long after its permit expired a receipt is still taken: an action
 * started with a valid permit may finish a little later. Past that, a
 * receipt is refused (`expired`), so a stale or replayed report cannot
 * rewrite what a long-dead permit did.
 */
export const RECEIPT_GRACE_MS = 5 * 60_000
/** Receipt summaries are bounded; longer text is cut (by code point, so no pair is split). */
export const RECEIPT_SUMMARY_MAX = 500

/** The action an authorization covers, in the wire's field names. */
export interface PermitAction {
  toolName: string | null
  toolTarget: string | null
  actor: string | null
  environment: string | null
  externalId: string | null
  parameters: Record<string, string | number | boolean> | null
}

/** Why a consume was refused, as the wire names it. */
export type PermitRefusalCode = 'not_authorized' | 'action_mismatch' | 'expired' | 'already_consumed'

/**
 * The local service's finer reason, sent as the error body's `code` beside
 * the hosted `refusal` (the hosted shape has an optional machine-readable
 * `code`; its four refusal values stay the only `refusal`s).
 * `bound_field_not_shown`: the approved decision holds a bound field the
 * reviewer's card could not draw exactly, so no one saw what the permit
 * would cover (refusal `not_authorized`).
 */
export type PermitRefusalReason = PermitRefusalCode | 'bound_field_not_shown'

/** Execution state of a permit's action. */
export type ExecutionState = 'running' | 'succeeded' | 'failed'

/** Outcome of a consume. */
export type ConsumeOutcome =
  | { status: 'permitted'; permitId: string; authority: Record<string, unknown>; expiresAt: string }
  | {
      status: 'refused'
      refusal: PermitRefusalCode
      message: string
      executionState?: ExecutionState
      /** Set when finer than `refusal`; the wire's `code` (defaults to `refusal`). */
      reason?: PermitRefusalReason
      /** The field the refusal is about, in wire names. */
      field?: string
    }

/** Outcome of a receipt. */
export type ReceiptOutcome =
  | { status: 'recorded'; executionState: ExecutionState }
  | { status: 'not_found' }
  | { status: 'expired'; message: string }

/** The permit operations of the local service. */
export interface PermitService {
  /** Keeps an `allow` verdict so it can be spent once. */
  rememberAllow(authorizationId: string, policy: string, input: AuthorizeInput): Promise<void>
  consume(authorizationId: string, requested: PermitAction): Promise<ConsumeOutcome>
  receipt(
    permitId: string,
    outcome: 'succeeded' | 'failed',
    summary: string | undefined,
  ): Promise<ReceiptOutcome>
}

const FIELDS: readonly (keyof PermitAction)[] = [
  'toolName',
  'toolTarget',
  'actor',
  'environment',
  'externalId',
  'parameters',
]

/**
 * The action with absent, null and empty-parameter fields made alike, so a
 * comparison sees only real differences.
 *
 * @example
 * normalizeAction({ toolName: 'refund.create', parameters: {} }).parameters // null
 */
export function normalizeAction(action: Partial<Record<keyof PermitAction, unknown>>): PermitAction {
  const parameters = action.parameters as PermitAction['parameters'] | undefined
  const textOf = (value: unknown) => (typeof value === 'string' ? value : null)
  return {
    toolName: textOf(action.toolName),
    toolTarget: textOf(action.toolTarget),
    actor: textOf(action.actor),
    environment: textOf(action.environment),
    externalId: textOf(action.externalId),
    parameters: parameters && Object.keys(parameters).length > 0 ? parameters : null,
  }
}

/** The fields in which `requested` differs from `approved` (parameters compared key-order-free, types kept). */
function differingFields(approved: PermitAction, requested: PermitAction): string[] {
  return FIELDS.filter((field) => canonicalJson(approved[field]) !== canonicalJson(requested[field]))
}

const refused = (refusal: PermitRefusalCode, message: string): ConsumeOutcome => ({
  status: 'refused',
  refusal,
  message,
})

/**
 * Builds the permit operations over the service database.
 *
 * @example
 * const permits = createPermitService({ db, getDecision: service.get, now: Date.now })
 */
export function createPermitService(deps: {
  db: Client
  getDecision: (decisionId: string) => Promise<DecisionRecord | null>
  now: () => number
}): PermitService {
  const { db } = deps
  const iso = (ms: number) => new Date(ms).toISOString()

  const authorizationOf = async (
    id: string,
  ): Promise<
    { approved: PermitAction; authority: Record<string, unknown>; expiresMs: number } | ConsumeOutcome
  > => {
    const policy = await db.execute({
      sql: 'SELECT action, policy, expires_ms FROM policy_authorizations WHERE authorization_id = ?',
      args: [id],
    })
    const row = policy.rows[0]
    if (row !== undefined) {
      const approved = normalizeAction(JSON.parse(String(row.action)) as Record<string, unknown>)
      return {
        approved,
        authority: { kind: 'policy', policyId: String(row.policy), rulePattern: approved.toolName },
        expiresMs: Number(row.expires_ms),
      }
    }
    const decision = await deps.getDecision(id)
    if (decision === null)
      return refused('not_authorized', 'No approved decision or allow verdict has this id.')
    if (decision.status === 'expired') return refused('expired', 'The decision expired without an answer.')
    if (!isApproved(decision) || decision.answeredAt === null) {
      return refused('not_authorized', `The decision is ${decision.status} and was not approved.`)
    }
    // What you see is what you approve: a bound field the card drew with
    // markers in place of invisible characters (stored before the rule
    // refused them) was never seen as the action will receive it.
    const unshown = unshownBoundFields(decision)
    if (unshown.length > 0) {
      return {
        status: 'refused',
        refusal: 'not_authorized',
        reason: 'bound_field_not_shown',
        field: unshown[0] as string,
        message: `The approval cannot be spent: the reviewer's card could not show ${unshown.join(', ')} exactly (invisible characters), so the person never saw what the permit would cover.`,
      }
    }
    return {
      approved: normalizeAction(decision),
      authority: {
        kind: 'human',
        answeredAt: decision.answeredAt,
        ...(decision.answerSource ? { answerSource: decision.answerSource } : {}),
        ...(decision.externalId === null ? {} : { approverExternalId: decision.externalId }),
      },
      expiresMs: Date.parse(decision.answeredAt) + HUMAN_AUTHORIZATION_TTL_MS,
    }
  }

  return {
    async rememberAllow(authorizationId, policy, input) {
      const nowMs = deps.now()
      await db.execute({
        sql: `INSERT INTO policy_authorizations (authorization_id, action, policy, created_at, expires_ms)
              VALUES (?, ?, ?, ?, ?)`,
        args: [
          authorizationId,
          JSON.stringify(normalizeAction(input)),
          policy,
          iso(nowMs),
          nowMs + POLICY_AUTHORIZATION_TTL_MS,
        ],
      })
    },

    async consume(authorizationId, requested) {
      const found = await authorizationOf(authorizationId)
      if ('status' in found) return found
      const nowMs = deps.now()
      if (found.expiresMs <= nowMs) return refused('expired', 'The authorization can no longer be spent.')
      const differing = differingFields(found.approved, normalizeAction(requested))
      if (differing.length > 0) {
        return refused(
          'action_mismatch',
          `The action differs from what was authorized in: ${differing.join(', ')}.`,
        )
      }
      const permitId = `pmt_${randomBytes(12).toString('hex')}`
      const expiresAt = iso(nowMs + PERMIT_TTL_MS)
      // The UNIQUE authorization_id makes this insert the one race winner.
      const inserted = await db.execute({
        sql: `INSERT INTO permits (permit_id, authorization_id, action, authority, created_at, expires_at, execution_state)
              VALUES (?, ?, ?, ?, ?, ?, 'running') ON CONFLICT (authorization_id) DO NOTHING`,
        args: [
          permitId,
          authorizationId,
          JSON.stringify(found.approved),
          JSON.stringify(found.authority),
          iso(nowMs),
          expiresAt,
        ],
      })
      if (inserted.rowsAffected === 1) {
        return { status: 'permitted', permitId, authority: found.authority, expiresAt }
      }
      const prior = await db.execute({
        sql: 'SELECT execution_state FROM permits WHERE authorization_id = ?',
        args: [authorizationId],
      })
      return {
        status: 'refused',
        refusal: 'already_consumed',
        message: 'This authorization was already spent; its action must not run again.',
        executionState: String(prior.rows[0]?.execution_state ?? 'running') as ExecutionState,
      }
    },

    async receipt(permitId, outcome, summary) {
      const permit = await db.execute({
        sql: 'SELECT expires_at FROM permits WHERE permit_id = ?',
        args: [permitId],
      })
      const expiresAt = permit.rows[0]?.expires_at
      if (expiresAt === undefined) return { status: 'not_found' }
      const expiresMs = Date.parse(String(expiresAt))
      // An unreadable expiry is treated as long past (fail closed).
      if (!(deps.now() <= expiresMs + RECEIPT_GRACE_MS)) {
        return {
          status: 'expired',
          message: `The permit expired at ${String(expiresAt)}; receipts are taken until ${RECEIPT_GRACE_MS / 60_000} minutes after that.`,
        }
      }
      // First report wins: only a permit still `running` takes an outcome.
      await db.execute({
        sql: `UPDATE permits SET execution_state = ?, receipt_summary = ?, receipt_at = ?
              WHERE permit_id = ? AND execution_state = 'running'`,
        args: [
          outcome,
          summary === undefined ? null : Array.from(summary).slice(0, RECEIPT_SUMMARY_MAX).join(''),
          iso(deps.now()),
          permitId,
        ],
      })
      const row = await db.execute({
        sql: 'SELECT execution_state FROM permits WHERE permit_id = ?',
        args: [permitId],
      })
      const state = row.rows[0]?.execution_state
      if (state === undefined) return { status: 'not_found' }
      return { status: 'recorded', executionState: String(state) as ExecutionState }
    },
  }
}
