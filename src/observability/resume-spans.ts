/**
 * The resuming side of approval spans, recorded by whoever resumes (the
 * dispatcher, `resumePusharyAgentReview`), often in another process, long
 * after the asking one exited. They join the asking trace (its trace ID)
 * under the span of the step that asked (`parentSpanId`, Mastra's own way of
 * linking a resumed run back), so one trace reads: asked, waited, answered,
 * claimed, resumed, ended.
 *
 * Nothing is recorded until a verified answer is in hand: a reconcile that
 * polls a pending decision every minute adds no span. Mastra cannot end a
 * span at a past instant, so `pushary.waiting` runs from the asking time
 * (kept in the run's snapshot) to the moment the claim winner took the
 * answer; the person's own latency (asked to answered, by the service's
 * `answeredAt`) is its `pushary.humanLatencyMs`.
 */
import type { Mastra } from '@mastra/core/mastra'
import type { AnySpan, ObservabilityInstance } from '@mastra/core/observability'
import { approvalMetadata, GENERIC_SPAN } from './approval-tracing.js'
import { type PusharyTraceCustomerMode, traceCustomerMode } from './customer-attribute.js'
import type { PusharyTraceRef } from './trace-ref.js'

/** What the resumer knows of the review. */
export interface ResumeSpanDetails {
  decisionId: string
  questionType: string
  externalId: string
  /** `workflow-step` or `agent`. */
  kind: string
}

/** The verified answer as the spans read it: its status and whether it approves; never its text. */
export interface VerifiedReading {
  status: string
  approved: boolean
  answeredAt?: string | null | undefined
}

/** The outcome of one resume attempt, as the resumer returns it. */
export interface ResumeEnding {
  status: string
  reason?: string | undefined
  reasonCode?: string | undefined
  actionOutcome?: string | undefined
}

/** Records one resume attempt's spans; every method is a no-op when nothing is traced. */
export interface ResumeSpans {
  answered(reading: VerifiedReading): void
  claimed(result: string): void
  ended<T extends ResumeEnding>(result: T): T
}

const NO_SPANS: ResumeSpans = {
  answered: () => {},
  claimed: () => {},
  ended: (result) => result,
}

/**
 * The observability instance this Mastra exports to, or `undefined` (none
 * configured: Mastra's no-op entrypoint selects no instance).
 *
 * @example
 * if (!tracingInstance(mastra)) return
 */
export function tracingInstance(mastra: Mastra | undefined): ObservabilityInstance | undefined {
  try {
    return (
      mastra as { observability?: Mastra['observability'] } | undefined
    )?.observability?.getSelectedInstance({})
  } catch {
    return undefined
  }
}

function customerModeOr(instance: ObservabilityInstance): PusharyTraceCustomerMode {
  try {
    return traceCustomerMode()
  } catch (error) {
    // The asking step refused this value before asking; a resume never fails on it.
    instance
      .getLogger?.()
      ?.warn(
        `[pushary] ${error instanceof Error ? error.message : String(error)}; customer omitted from spans`,
      )
    return 'omitted'
  }
}

function answerReading(reading: VerifiedReading): string {
  if (reading.status !== 'answered') return reading.status
  return reading.approved ? 'approved' : 'declined or answered'
}

/**
 * The spans of one resume attempt in the trace `ref` names; no-ops without
 * an instance or a reference (nothing traced when it asked).
 *
 * @example
 * const spans = startResumeSpans(mastra, traceRefOf(snapshot.context, review.stepId), details)
 * spans.answered({ status: 'answered', approved: true, answeredAt })
 */
export function startResumeSpans(
  mastra: Mastra | undefined,
  ref: PusharyTraceRef | undefined,
  details: ResumeSpanDetails,
): ResumeSpans {
  if (!ref) return NO_SPANS
  const instance = tracingInstance(mastra)
  if (!instance) return NO_SPANS
  const startedAt = new Date()
  const metadata = {
    ...approvalMetadata({ ...details, risk: ref.risk }, customerModeOr(instance)),
    'pushary.kind': details.kind,
    'pushary.askSpanId': ref.spanId,
  }
  const inAskingTrace = { traceId: ref.traceId, parentSpanId: ref.spanId }
  let resume: AnySpan | undefined
  let reading: VerifiedReading | undefined
  let claim: string | undefined
  return {
    answered(verified) {
      reading = verified
      resume = instance.startSpan({
        type: GENERIC_SPAN,
        name: 'pushary.resume',
        ...inAskingTrace,
        startTime: startedAt,
        metadata,
      })
      resume.createEventSpan({
        type: GENERIC_SPAN,
        name: 'pushary.answer',
        metadata: {
          'pushary.verified': true,
          'pushary.status': verified.status,
          'pushary.approved': verified.approved,
          'pushary.reading': answerReading(verified),
        },
      })
    },
    claimed(result) {
      if (!resume) return
      // Carried by the resume span when it ends: one span fewer than an event of its own.
      claim = result
      if (result !== 'claimed') return
      // Only the claim winner records the wait: one waiting span per approval.
      const answeredAt = reading?.answeredAt ? Date.parse(reading.answeredAt) : Number.NaN
      const askedAt = Date.parse(ref.askedAt)
      instance
        .startSpan({
          type: GENERIC_SPAN,
          name: 'pushary.waiting',
          ...inAskingTrace,
          startTime: new Date(askedAt),
          metadata: {
            ...metadata,
            ...(Number.isNaN(answeredAt)
              ? {}
              : {
                  'pushary.answeredAt': reading?.answeredAt,
                  'pushary.humanLatencyMs': answeredAt - askedAt,
                }),
          },
        })
        .end()
    },
    ended(result) {
      if (!resume) return result
      const outcome = {
        'pushary.outcome': result.status,
        ...(result.reason === undefined ? {} : { 'pushary.reason': result.reason }),
        ...(result.reasonCode === undefined ? {} : { 'pushary.reasonCode': result.reasonCode }),
        ...(result.actionOutcome === undefined ? {} : { 'pushary.actionOutcome': result.actionOutcome }),
      }
      resume.createEventSpan({ type: GENERIC_SPAN, name: 'pushary.end', metadata: outcome })
      resume.end({ metadata: { ...outcome, ...(claim === undefined ? {} : { 'pushary.claim': claim }) } })
      resume = undefined
      return result
    },
  }
}
