/**
 * The decision service's operations, shared by the HTTP API and the reviewer
 * page so both paths validate, persist, enqueue callbacks and publish events
 * in exactly the same way.
 */
import { randomBytes } from 'node:crypto'
import type { Client } from '@libsql/client'
import type { z } from 'zod/v4'
import type { createDecisionInputSchema } from '../pushary/decision-schemas.js'
import { answerPusharyQuestion } from '../pushary/question.js'
import { isStorableText, STORABLE_TEXT_MESSAGE } from '../pushary/text-rules.js'
import type { DecisionReach } from '../pushary/wire-responses.js'
import { approverSetOf, inApproverSet, listApproverSet } from './approver-sets.js'
import { SITE_PRINCIPAL } from './bound-keys.js'
import type { CallbackOutbox } from './callbacks-outbox.js'
import type { DecisionEvents } from './decision-events.js'
import {
  createDecisionsRepo,
  type DecisionListFilter,
  type DecisionRecord,
  type TransitionOutcome,
} from './decisions-repo.js'
import { createEnrollmentRepo } from './enrollment-repo.js'
import { requestDigest, sameRequest } from './request-digest.js'
import type { AnswerOutcome, AnswerSource, ReviewerDeps } from './service-types.js'

/** Validated `POST /decisions` body. */
export type ParsedDecisionInput = z.output<typeof createDecisionInputSchema>

/** Default lifetime of a decision. */
export const DEFAULT_EXPIRES_IN_SECONDS = 3_600

/** A typed answer longer than this is refused (the question limits bound everything else). */
export const INPUT_ANSWER_MAX = 2_000

/** Outcome of creating a decision. */
export type CreateOutcome =
  | { status: 'created' | 'idempotent'; decision: DecisionRecord; reach: DecisionReach | null }
  | { status: 'unreachable'; message: string; reach: DecisionReach | null }
  | { status: 'key_reused'; message: string }

/** Outcome of cancelling a decision. */
export type CancelOutcome =
  | { status: 'not_found' }
  | { status: 'done'; cancelled: boolean; decision: DecisionRecord }

/** Everything the routes and the reviewer page call. */
export interface DecisionService {
  /** `askedBy` is `site` (the default) or a bound key's prefix: who asked, and the scope of its idempotency key. */
  create(input: ParsedDecisionInput, askedBy?: string): Promise<CreateOutcome>
  /** Reads a decision, expiring it first when its deadline has passed. */
  get(decisionId: string): Promise<DecisionRecord | null>
  list(filter: DecisionListFilter): Promise<DecisionRecord[]>
  answer(decisionId: string, answer: string, source: AnswerSource): Promise<AnswerOutcome>
  cancel(decisionId: string): Promise<CancelOutcome>
  /** Expires every overdue pending decision; returns how many. */
  sweep(): Promise<number>
  reachability(externalId: string): Promise<DecisionReach>
  enroll(externalId: string): Promise<{ token: string; expiresInSeconds: number }>
  reviewerDeps: ReviewerDeps
  /** In sandbox mode, schedules answers for sandbox decisions left pending by a previous run. */
  resumeSandbox(): Promise<void>
  /** Cancels scheduled sandbox answers. */
  close(): void
}

interface ServiceDeps {
  db: Client
  events: DecisionEvents
  outbox: CallbackOutbox
  now: () => number
  publicUrl: string
  sandbox: boolean
  onError: (error: unknown) => void
}

/**
 * The idempotency key as stored: each key that asks has its own namespace,
 * so one key can neither replay nor learn of (by a 409) another's request.
 * The site key's keys are stored as given, as before keys were scoped; a
 * bound key's are prefixed with its key prefix and NUL, which a caller's key
 * cannot contain (`storableString`), so no two scopes can meet.
 */
function scopedIdempotencyKey(askedBy: string, key: string): string {
  return askedBy === SITE_PRINCIPAL ? key : `${askedBy}\u0000${key}`
}

/**
 * Wires the repositories, event bus and outbox into the service operations.
 *
 * @example
 * const service = createDecisionService({ db, events, outbox, now: Date.now, publicUrl, sandbox: false, onError })
 * const created = await service.create({ question: 'Ship?' })
 */
export function createDecisionService(deps: ServiceDeps): DecisionService {
  const repo = createDecisionsRepo(deps.db)
  const enrollments = createEnrollmentRepo(deps.db)
  const sandboxTimers = new Set<NodeJS.Timeout>()

  // Publish only after the transaction committed, so listeners that re-read see it.
  const settled = (outcome: TransitionOutcome): void => {
    if (outcome.status === 'changed' || outcome.status === 'expired') {
      const { decision } = outcome
      deps.events.publish({
        decisionId: decision.decisionId,
        externalId: decision.externalId,
        status: decision.status,
        approverSet: approverSetOf(decision.context)?.key ?? null,
      })
      if (decision.callbackUrl !== null) deps.outbox.wake()
    }
  }

  const expireIfOverdue = async (decision: DecisionRecord): Promise<DecisionRecord> => {
    if (decision.status !== 'pending' || decision.expiresMs > deps.now()) return decision
    const outcome = await repo.transition(decision.decisionId, 'expired', { nowMs: deps.now() })
    settled(outcome)
    return outcome.status === 'not_found' ? decision : outcome.decision
  }

  const reachability = async (externalId: string): Promise<DecisionReach> => {
    const deviceCount = await enrollments.deviceCount(externalId, deps.now())
    const reachable = deviceCount > 0
    return {
      externalId,
      deliverability: reachable ? 'push' : 'fallback',
      reachable,
      // A count, as on the hosted API: the reviewer page is this service's one channel.
      reachableChannels: reachable ? 1 : 0,
      deviceCount,
      webEndpoints: deviceCount,
      hint: reachable
        ? `${deviceCount} enrolled device${deviceCount === 1 ? '' : 's'} will be notified.`
        : `Nobody is enrolled for this customer. Create an enrolment link (POST /enroll) or share ${deps.publicUrl}/review/<decisionId>.`,
    }
  }

  const answer = async (decisionId: string, value: string, source: AnswerSource): Promise<AnswerOutcome> => {
    const current = await repo.get(decisionId)
    if (current === null) return { status: 'not_found', message: `No decision ${decisionId}.` }
    const decision = await expireIfOverdue(current)
    switch (decision.status) {
      case 'pending':
        break
      case 'answered':
        return { status: 'already_answered', message: 'This decision has already been answered.' }
      case 'expired':
        return { status: 'expired', message: 'This decision expired before it was answered.' }
      case 'cancelled':
        return { status: 'cancelled', message: 'This decision was cancelled.' }
      default: {
        const unreachable: never = decision.status
        return { status: 'not_found', message: `Unknown status ${String(unreachable)}.` }
      }
    }
    // Checked here, the one path of API relays and reviewer taps: a value the
    // store would read back cut or changed must not be recorded as the answer
    // while the callback carries it whole.
    if (!isStorableText(value)) {
      return { status: 'invalid_answer', message: `The answer ${STORABLE_TEXT_MESSAGE}.` }
    }
    // A relayed confirm answer is kept as given (the hosted API publishes no
    // rule for it); only the package's affirmative words read as approval.
    if (decision.type !== 'select' && (value.trim().length === 0 || value.length > INPUT_ANSWER_MAX)) {
      return {
        status: 'invalid_answer',
        message: `A typed answer must be 1 to ${INPUT_ANSWER_MAX} characters and not blank.`,
      }
    }
    try {
      answerPusharyQuestion(
        {
          question: decision.question,
          type: decision.type,
          ...(decision.options ? { options: decision.options } : {}),
        },
        'answered',
        value,
      )
    } catch (error) {
      return {
        status: 'invalid_answer',
        message:
          decision.type === 'select'
            ? `The answer must be one of: ${(decision.options ?? []).join(', ')}.`
            : error instanceof Error
              ? error.message
              : 'Invalid answer.',
      }
    }
    const outcome = await repo.transition(decisionId, 'answered', { nowMs: deps.now(), value, source })
    settled(outcome)
    switch (outcome.status) {
      case 'changed':
        return { status: 'answered', decision: outcome.decision }
      case 'expired':
        return { status: 'expired', message: 'This decision expired before it was answered.' }
      case 'not_found':
        return { status: 'not_found', message: `No decision ${decisionId}.` }
      case 'not_pending':
        // Lost a race with another answer, a cancel or the sweeper.
        return outcome.decision.status === 'cancelled'
          ? { status: 'cancelled', message: 'This decision was cancelled.' }
          : outcome.decision.status === 'expired'
            ? { status: 'expired', message: 'This decision expired before it was answered.' }
            : { status: 'already_answered', message: 'This decision has already been answered.' }
      default: {
        const unreachable: never = outcome
        return unreachable
      }
    }
  }

  const scheduleSandboxAnswer = (decision: DecisionRecord): void => {
    const outcome = decision.sandboxOutcome
    if (!deps.sandbox || (outcome !== 'approve' && outcome !== 'deny')) return
    // Answer on a later tick so the create response reports `pending`, as the
    // hosted sandbox does; `no_answer` is left to expire.
    const timer = setTimeout(() => {
      sandboxTimers.delete(timer)
      answer(decision.decisionId, outcome === 'approve' ? 'yes' : 'no', 'sandbox').catch(deps.onError)
    }, 25)
    sandboxTimers.add(timer)
  }

  const KEY_REUSED = {
    status: 'key_reused',
    message:
      'This idempotencyKey was already used for a different question, type, options or customer; use a new key.',
  } as const

  const service: DecisionService = {
    async create(input, askedBy = SITE_PRINCIPAL) {
      const nowMs = deps.now()
      const idempotencyKey =
        input.idempotencyKey === undefined ? null : scopedIdempotencyKey(askedBy, input.idempotencyKey)
      const type = input.type ?? 'confirm'
      const content = {
        type,
        question: input.question,
        options: type === 'select' ? (input.options ?? null) : null,
        placeholder: input.placeholder ?? null,
        context: input.context ?? null,
        externalId: input.externalId ?? null,
        email: input.email ?? null,
        agentName: input.agentName ?? null,
        toolName: input.toolName ?? null,
        toolTarget: input.toolTarget ?? null,
        actor: input.actor ?? null,
        environment: input.environment ?? null,
        parameters: input.parameters ?? null,
        presentation: input.presentation ?? null,
      }
      const digest = requestDigest(content)
      const reach = input.externalId === undefined ? null : await reachability(input.externalId)
      if (input.requireReachable === true && !reach?.reachable) {
        // A repeated key still returns the decision it already created.
        const prior = idempotencyKey === null ? null : await repo.getByIdempotencyKey(idempotencyKey)
        if (prior !== null) {
          if (!sameRequest(prior, digest)) return KEY_REUSED
          return { status: 'idempotent', decision: await expireIfOverdue(prior), reach }
        }
        return {
          status: 'unreachable',
          message:
            input.externalId === undefined
              ? 'requireReachable needs an externalId with an enrolled device.'
              : 'Nobody is enrolled for this externalId, and requireReachable was set.',
          reach,
        }
      }
      const { decision, idempotent } = await repo.insert({
        ...content,
        decisionId: `dec_${randomBytes(12).toString('hex')}`,
        callbackUrl: input.callbackUrl ?? null,
        sandboxOutcome: input.sandboxOutcome ?? null,
        idempotencyKey,
        requestDigest: digest,
        askedBy,
        createdMs: nowMs,
        expiresMs: nowMs + (input.expiresInSeconds ?? DEFAULT_EXPIRES_IN_SECONDS) * 1000,
      })
      if (idempotent) {
        // The key already names another request: its answer belongs to a
        // question this caller is not asking.
        if (!sameRequest(decision, digest)) return KEY_REUSED
        return { status: 'idempotent', decision: await expireIfOverdue(decision), reach }
      }
      deps.events.publish({
        decisionId: decision.decisionId,
        externalId: decision.externalId,
        status: 'pending',
        approverSet: approverSetOf(decision.context)?.key ?? null,
      })
      scheduleSandboxAnswer(decision)
      return { status: 'created', decision, reach }
    },

    async get(decisionId) {
      const decision = await repo.get(decisionId)
      return decision === null ? null : expireIfOverdue(decision)
    },

    list: (filter) => repo.list(filter),

    answer,

    async cancel(decisionId) {
      const outcome = await repo.transition(decisionId, 'cancelled', { nowMs: deps.now() })
      settled(outcome)
      switch (outcome.status) {
        case 'not_found':
          return { status: 'not_found' }
        case 'changed':
          return { status: 'done', cancelled: true, decision: outcome.decision }
        case 'expired':
        case 'not_pending':
          return { status: 'done', cancelled: false, decision: outcome.decision }
        default: {
          const unreachable: never = outcome
          return unreachable
        }
      }
    },

    async sweep() {
      let count = 0
      for (;;) {
        const ids = await repo.overdue(deps.now(), 100)
        for (const id of ids) {
          const outcome = await repo.transition(id, 'expired', { nowMs: deps.now() })
          settled(outcome)
          if (outcome.status === 'changed') count += 1
        }
        if (ids.length < 100) return count
      }
    },

    reachability,

    enroll: (externalId) => enrollments.createEnrollment(externalId, deps.now()),

    reviewerDeps: {
      listPendingFor: (externalId) => repo.listPendingFor(externalId, deps.now()),
      getDecision: (decisionId) => service.get(decisionId),
      answerDecision: (decisionId, value, source) => answer(decisionId, value, source),
      consumeEnrollment: (token) => enrollments.consumeEnrollment(token, deps.now()),
      peekEnrollment: (token) => enrollments.peekEnrollment(token, deps.now()),
      registerDevice: (externalId) => enrollments.registerDevice(externalId, deps.now()),
      deviceFromToken: (deviceToken) => enrollments.deviceFromToken(deviceToken, deps.now()),
      listApproverSet: (key, decisionId) => listApproverSet(deps.db, key, decisionId),
      inApproverSet: (key, externalId) => inApproverSet(deps.db, key, externalId),
      subscribe: (listener) => deps.events.subscribe(listener),
      publicUrl: deps.publicUrl,
    },

    async resumeSandbox() {
      if (!deps.sandbox) return
      for (const decision of await repo.pendingSandbox()) scheduleSandboxAnswer(decision)
    },

    close() {
      for (const timer of sandboxTimers) clearTimeout(timer)
      sandboxTimers.clear()
    },
  }

  return service
}
