/**
 * The asking side of approval spans: whether Mastra is tracing the step that
 * asks (no observability configured, or a run not sampled, costs one property
 * read), and the `pushary.ask` span under that step's span. Span types and
 * option shapes are Mastra's (`@mastra/core/observability`); nothing here
 * exports or stores spans itself: whatever exporter the app configured does.
 */
import type { AnySpan, SpanType, TracingContext } from '@mastra/core/observability'
import { customerMetadata, type PusharyTraceCustomerMode, traceCustomerMode } from './customer-attribute.js'
import type { PusharyTraceRef } from './trace-ref.js'

/** Mastra's span type for custom operations (a type-only import keeps the enum's module unloaded). */
export const GENERIC_SPAN = 'generic' as SpanType.GENERIC

/** What the asking step knows about its question when it records the ask. */
export interface AskSpanDetails {
  decisionId: string
  questionType: string
  risk?: string | undefined
  externalId: string
  /** `push` to a device or `fallback` (an approval link handed to `onFallback`; never the link itself). */
  delivery: 'push' | 'fallback'
}

/** A live, exported span of the step that is asking, and the customer mode, when Mastra traces it. */
export interface AskTracing {
  span: AnySpan
  customer: PusharyTraceCustomerMode
}

/**
 * The tracing of the asking step, or `undefined` when Mastra is not tracing
 * it (no observability, not sampled). Called before the question is created,
 * so a bad `PUSHARY_TRACE_CUSTOMER` is refused before anyone is asked.
 *
 * @example
 * const tracing = askTracing(tracingContext)
 */
export function askTracing(tracingContext: TracingContext | undefined): AskTracing | undefined {
  const span = tracingContext?.currentSpan
  if (!span?.isValid) return undefined
  return { span, customer: traceCustomerMode() }
}

/**
 * The metadata every approval span carries: decision, question type, risk,
 * customer as configured. Never the question's or the answer's text.
 *
 * @example
 * approvalMetadata({ decisionId: 'd_1', questionType: 'confirm', externalId: 'c_1' }, 'hashed')
 */
export function approvalMetadata(
  details: { decisionId: string; questionType: string; risk?: string | undefined; externalId: string },
  customer: PusharyTraceCustomerMode,
): Record<string, unknown> {
  return {
    'pushary.decisionId': details.decisionId,
    'pushary.questionType': details.questionType,
    ...(details.risk === undefined ? {} : { 'pushary.risk': details.risk }),
    ...customerMetadata(details.externalId, customer),
  }
}

/**
 * Records `pushary.ask` (from `askedAt`, when the step began asking, to now:
 * create, save and delivery) under the asking step's span, and returns the
 * reference the step keeps in its suspend payload for the resume's spans.
 *
 * @example
 * const trace = recordAskSpan(tracing, askedAt, { decisionId, questionType: 'confirm', externalId, delivery: 'push' })
 */
export function recordAskSpan(tracing: AskTracing, askedAt: Date, details: AskSpanDetails): PusharyTraceRef {
  const ask = tracing.span.createChildSpan({
    type: GENERIC_SPAN,
    name: 'pushary.ask',
    startTime: askedAt,
    metadata: {
      ...approvalMetadata(details, tracing.customer),
      'pushary.delivery': details.delivery,
      'pushary.fallbackLink': details.delivery === 'fallback',
      'pushary.outcome': 'asked',
    },
  })
  ask.end()
  return {
    traceId: tracing.span.traceId,
    spanId: tracing.span.id,
    askedAt: askedAt.toISOString(),
    ...(details.risk === undefined ? {} : { risk: details.risk }),
  }
}
