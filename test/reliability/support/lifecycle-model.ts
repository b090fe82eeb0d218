/**
 * A model of the review lifecycle for fast-check's model-based testing. The
 * commands (open, answer, callback, reconcile, crash, recover, operator
 * recovery) drive the real system: Mastra runs on LibSQL, the SQLite review
 * store, the local decision service over loopback and the dispatcher. After
 * every command the real store is compared with the model, and every
 * recorded history must be a path the lifecycle machine allows: the machine
 * (`nextReviewState`) is the oracle for each transition, the model for which
 * transitions should have happened, and the side-effect table for how often
 * each refund ran.
 *
 * A crash is what a SIGKILL leaves behind, produced in-process: a claim whose
 * holder is gone (`CrashAfterClaim`), or a claim whose run resumed and ran its
 * refund but whose review was never finished (`CrashBeforeFinish`). The real
 * kills are in `crash-points.test.ts`.
 */
import type fc from 'fast-check'
import { expect } from 'vitest'
import {
  nextReviewState,
  type ReviewEventType,
  type ReviewState,
} from '../../../src/machines/review-lifecycle.js'
import { SIGNATURE_HEADER, signWebhookBody } from '../../../src/pushary/callbacks.js'
import { RETRYABLE_DISPATCH_STATUSES } from '../../../src/resume/dispatch-types.js'
import { resumePusharyApproval } from '../../../src/resume/resume-guard.js'
import { isPusharyStoreError } from '../../../src/store/store-error.js'
import { listEffects, type TestEnv } from '../../helpers/mastra.js'
import { recoverAfterLease, type TestApp } from '../../workflows/fixtures/app.js'

export type Verdict = 'yes' | 'no' | 'cancel'

export interface ModelReview {
  decision: 'pending' | Verdict
  state: ReviewState
  /** Expected events after the initial save, in order. */
  events: ReviewEventType[]
  effects: number
  run: 'suspended' | 'success'
  /** When a crash-left claim was taken: `Date.now()` just before and just after `store.claim`. */
  claimed?: { before: number; after: number }
}

/** The claim lease the model's app uses (`buildApp(..., { claimLeaseMs })`). */
export const MODEL_CLAIM_LEASE_MS = 200

/**
 * What a resumer reports for a crash-left claim: `busy` while its lease may
 * still run, `recovery_needed` once it has surely run out. Between the two
 * (the clock readings around the claim and the dispatch cannot tell) either
 * answer is right.
 */
function crashLeftClaimResults(
  review: ModelReview,
  dispatchedAt: { before: number; after: number },
): string[] {
  const claimed = review.claimed
  if (!claimed) return ['busy']
  if (dispatchedAt.before - claimed.after >= MODEL_CLAIM_LEASE_MS) return ['recovery_needed']
  if (dispatchedAt.after - claimed.before < MODEL_CLAIM_LEASE_MS) return ['busy']
  return ['busy', 'recovery_needed']
}

export interface Model {
  reviews: ModelReview[]
}

export interface Real {
  env: TestEnv
  /** This sequence's own files (Mastra, review store, side effects). */
  dir: string
  app: TestApp
  reviews: { decisionId: string; runId: string; op: string }[]
  tag: string
  /** How many commands ran and callbacks were sent, for the figures. */
  counter: { commands: number; callbacks: number }
}

type Command = fc.AsyncCommand<Model, Real, boolean>

/** What any successful resume of a pending review does to the model. */
function resumed(review: ModelReview): void {
  review.state = 'completed'
  review.events.push('CLAIM', 'RESUMED')
  // A run that already finished (an operator reopened it) is completed without running again.
  if (review.run === 'suspended' && review.decision === 'yes') review.effects++
  review.run = 'success'
}

function resumable(review: ModelReview): boolean {
  return review.state === 'pending' && review.decision !== 'pending'
}

/** Store, history and side effects agree with the model; every step is one the machine allows. */
export async function verify(model: Model, real: Real): Promise<void> {
  real.counter.commands++
  const effects = await listEffects(real.dir)
  for (const [index, expected] of model.reviews.entries()) {
    const { decisionId, op } = real.reviews[index] as Real['reviews'][number]
    const label = `review ${index} (${decisionId})`
    expect((await real.app.store.get(decisionId))?.state, label).toBe(expected.state)
    const history = await real.app.store.history(decisionId)
    expect(history[0], label).toMatchObject({ from: null, to: 'pending', event: null })
    for (let step = 1; step < history.length; step++) {
      const entry = history[step] as (typeof history)[number]
      expect(entry.from, label).toBe(history[step - 1]?.to)
      expect(entry.event, label).not.toBeNull()
      expect(nextReviewState(entry.from as ReviewState, entry.event as ReviewEventType), label).toBe(entry.to)
    }
    expect(
      history.slice(1).map((entry) => entry.event),
      label,
    ).toEqual(expected.events)
    const ran = effects.filter((effect) => effect.key === op).length
    expect(ran, label).toBe(expected.effects)
    expect(ran, label).toBeLessThanOrEqual(expected.decision === 'yes' ? 1 : 0)
  }
}

async function startRun(real: Real): Promise<void> {
  const op = `model-${real.tag}-${real.reviews.length}-${Math.random().toString(36).slice(2, 8)}`
  const workflow = real.app.mastra.getWorkflowById('refund-single' as never) as unknown as {
    createRun(): Promise<{ runId: string; start(p: { inputData: unknown }): Promise<{ status: string }> }>
  }
  const run = await workflow.createRun()
  expect((await run.start({ inputData: { operationId: op, question: `Refund ${op}?` } })).status).toBe(
    'suspended',
  )
  const review = (await real.app.store.listByState('pending', { limit: 1000 })).find(
    (candidate) => candidate.runId === run.runId,
  )
  real.reviews.push({ decisionId: review?.decisionId as string, runId: run.runId, op })
}

abstract class OnReview implements Command {
  constructor(readonly index: number) {}
  check(model: Readonly<Model>): boolean {
    return model.reviews.length > 0
  }
  protected pick(model: Model, real: Real) {
    const at = this.index % model.reviews.length
    return { at, review: model.reviews[at] as ModelReview, ids: real.reviews[at] as Real['reviews'][number] }
  }
  abstract run(model: Model, real: Real): Promise<void>
  abstract toString(): string
}

export class Open implements Command {
  check(model: Readonly<Model>): boolean {
    return model.reviews.length < 4
  }
  async run(model: Model, real: Real): Promise<void> {
    await startRun(real)
    model.reviews.push({ decision: 'pending', state: 'pending', events: [], effects: 0, run: 'suspended' })
    await verify(model, real)
  }
  toString(): string {
    return 'Open'
  }
}

export class Answer extends OnReview {
  constructor(
    index: number,
    readonly verdict: Verdict,
  ) {
    super(index)
  }
  async run(model: Model, real: Real): Promise<void> {
    const { review, ids } = this.pick(model, real)
    if (review.decision !== 'pending') return
    if (this.verdict === 'cancel') await real.env.client.decisions.cancel(ids.decisionId)
    else await real.env.client.decisions.answer(ids.decisionId, this.verdict)
    review.decision = this.verdict
    await verify(model, real)
  }
  toString(): string {
    return `Answer(${this.index}, ${this.verdict})`
  }
}

/** A signed callback whose body always says `yes`: the body is a hint, never the answer. */
export class Callback extends OnReview {
  async run(model: Model, real: Real): Promise<void> {
    const { review, ids } = this.pick(model, real)
    const body = JSON.stringify({
      event: 'decision.answered',
      correlationId: ids.decisionId,
      decisionId: ids.decisionId,
      status: 'answered',
      answer: 'yes',
      value: 'yes',
    })
    real.counter.callbacks++
    const before = Date.now()
    const response = await real.app.dispatcher.handleCallback(
      new Request('http://127.0.0.1/callback', {
        method: 'POST',
        headers: { [SIGNATURE_HEADER]: signWebhookBody(body, real.env.webhookSecret) },
        body,
      }),
    )
    const after = Date.now()
    const result = (await response.json()) as { status: string }
    const retry = (RETRYABLE_DISPATCH_STATUSES as readonly string[]).includes(result.status)
    expect(response.status).toBe(retry ? 503 : 200)
    const expected =
      review.state === 'pending'
        ? [review.decision === 'pending' ? 'pending' : review.run === 'suspended' ? 'resumed' : 'duplicate']
        : review.state === 'resuming'
          ? crashLeftClaimResults(review, { before, after })
          : [{ completed: 'duplicate', stale: 'stale', uncertain: 'uncertain' }[review.state]]
    expect(expected).toContain(result.status)
    if (resumable(review)) resumed(review)
    await verify(model, real)
  }
  toString(): string {
    return `Callback(${this.index})`
  }
}

/** The same genuine callback delivered three times at once, with a reconcile racing them. */
export class CallbackBurst extends OnReview {
  async run(model: Model, real: Real): Promise<void> {
    const { ids } = this.pick(model, real)
    const body = JSON.stringify({ decisionId: ids.decisionId, correlationId: ids.decisionId, answer: 'yes' })
    const deliver = () =>
      real.app.dispatcher.handleCallback(
        new Request('http://127.0.0.1/callback', {
          method: 'POST',
          headers: { [SIGNATURE_HEADER]: signWebhookBody(body, real.env.webhookSecret) },
          body,
        }),
      )
    real.counter.callbacks += 3
    const [responses] = await Promise.all([
      Promise.all([deliver(), deliver(), deliver()]),
      real.app.dispatcher.reconcile({ limit: 1000 }),
    ])
    const statuses = await Promise.all(
      responses.map(async (r) => ((await r.json()) as { status: string }).status),
    )
    expect(responses.every((r) => r.status === 200 || r.status === 503)).toBe(true)
    // At most one of the racers resumes; when the review was resumable, the reconcile may be the one.
    expect(statuses.filter((status) => status === 'resumed').length).toBeLessThanOrEqual(1)
    for (const other of model.reviews) if (resumable(other)) resumed(other)
    await verify(model, real)
  }
  toString(): string {
    return `CallbackBurst(${this.index})`
  }
}

export class Reconcile implements Command {
  check(): boolean {
    return true
  }
  async run(model: Model, real: Real): Promise<void> {
    await real.app.dispatcher.reconcile({ limit: 1000 })
    for (const review of model.reviews) if (resumable(review)) resumed(review)
    await verify(model, real)
  }
  toString(): string {
    return 'Reconcile'
  }
}

/** A resumer that won the claim and died before touching the run. */
export class CrashAfterClaim extends OnReview {
  override check(model: Readonly<Model>): boolean {
    return model.reviews.some(resumable)
  }
  async run(model: Model, real: Real): Promise<void> {
    const { review, ids } = this.pick(model, real)
    if (!resumable(review)) return
    const before = Date.now()
    expect(await real.app.store.claim(ids.decisionId, ids.runId)).toBe('claimed')
    review.claimed = { before, after: Date.now() }
    review.state = 'resuming'
    review.events.push('CLAIM')
    await verify(model, real)
  }
  toString(): string {
    return `CrashAfterClaim(${this.index})`
  }
}

/** A resumer that won the claim, resumed the run (the refund ran) and died before finishing the review. */
export class CrashBeforeFinish extends OnReview {
  override check(model: Readonly<Model>): boolean {
    return model.reviews.some(resumable)
  }
  async run(model: Model, real: Real): Promise<void> {
    const { review, ids } = this.pick(model, real)
    if (!resumable(review) || review.run !== 'suspended') return
    const decision = await real.env.client.decisions.get(ids.decisionId)
    const before = Date.now()
    expect(await real.app.store.claim(ids.decisionId, ids.runId)).toBe('claimed')
    review.claimed = { before, after: Date.now() }
    await resumePusharyApproval({
      mastra: real.app.mastra,
      workflowId: 'refund-single',
      runId: ids.runId,
      label: ids.decisionId,
      resumeData: { answer: decision.status === 'answered' ? decision.value : null, status: decision.status },
    })
    review.state = 'resuming'
    review.events.push('CLAIM')
    review.run = 'success'
    if (review.decision === 'yes') review.effects++
    await verify(model, real)
  }
  toString(): string {
    return `CrashBeforeFinish(${this.index})`
  }
}

/** `dispatcher.recover`: takes over a crash-left claim, never re-runs a finished run. */
export class Recover extends OnReview {
  async run(model: Model, real: Real): Promise<void> {
    const { review, ids } = this.pick(model, real)
    // A crash-left claim is taken over once its lease ran out (its holder stopped beating).
    const result = await recoverAfterLease(real.app, ids.decisionId)
    if (review.state === 'pending') {
      if (resumable(review)) resumed(review)
    } else if (review.state === 'resuming') {
      expect(result.status).toBe(review.run === 'suspended' ? 'resumed' : 'duplicate')
      review.state = 'completed'
      review.events.push('RECLAIM', 'RESUMED')
      if (review.run === 'suspended' && review.decision === 'yes') review.effects++
      review.run = 'success'
    }
    await verify(model, real)
  }
  toString(): string {
    return `Recover(${this.index})`
  }
}

const OPERATOR_EVENTS = {
  completed: 'OPERATOR_CONFIRMED_EXECUTED',
  stale: 'OPERATOR_CONFIRMED_NOT_EXECUTED',
  pending: 'OPERATOR_REOPENED',
} as const

/** `store.recover` (what `pushary-mastra reviews recover` runs): only what the machine allows. */
export class OperatorRecover extends OnReview {
  constructor(
    index: number,
    readonly outcome: keyof typeof OPERATOR_EVENTS,
  ) {
    super(index)
  }
  async run(model: Model, real: Real): Promise<void> {
    const { review, ids } = this.pick(model, real)
    const event = OPERATOR_EVENTS[this.outcome]
    const next = nextReviewState(review.state, event)
    const attempt = real.app.store.recover(
      ids.decisionId,
      this.outcome,
      `model: operator says ${this.outcome}`,
    )
    if (next === null) {
      const error = await attempt.then(
        () => null,
        (caught: unknown) => caught,
      )
      expect(isPusharyStoreError(error) && error.code).toBe('not_recoverable')
    } else {
      await attempt
      review.state = next
      review.events.push(event)
    }
    await verify(model, real)
  }
  toString(): string {
    return `OperatorRecover(${this.index}, ${this.outcome})`
  }
}
