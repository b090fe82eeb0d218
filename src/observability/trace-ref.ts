/**
 * Where an approval was asked in Mastra's trace, kept in the approval step's
 * suspend payload (Mastra persists it with the run), so a resume in another
 * process, later, records its spans in the same trace under the step that
 * asked. Only identifiers and the asking time: nothing a reviewer typed.
 */
import { z } from 'zod/v4'

/**
 * The asking trace: Mastra's trace ID, the span of the step (or tool call)
 * that asked, and when it asked (the asking host's clock, ISO).
 *
 * @example
 * pusharyTraceRefSchema.parse({ traceId: 'ab12', spanId: 'cd34', askedAt: '2026-01-01T00:00:00.000Z' })
 */
export const pusharyTraceRefSchema = z.object({
  traceId: z.string().regex(/^[0-9a-f]{1,32}$/),
  spanId: z.string().regex(/^[0-9a-f]{1,16}$/),
  askedAt: z.iso.datetime(),
  /** The card's risk when the question carried one (`low`, `medium`, `high` or the app's own word). */
  risk: z.string().max(64).optional(),
})

/** @example const ref: PusharyTraceRef = { traceId: 'ab12', spanId: 'cd34', askedAt: new Date().toISOString() } */
export type PusharyTraceRef = z.infer<typeof pusharyTraceRefSchema>

/**
 * The trace reference a suspended step left in the run's snapshot context,
 * or `undefined` (no tracing when it asked, a run suspended by an earlier
 * release, or a `.foreach` item, whose payloads Mastra keeps per iteration).
 *
 * @example
 * const ref = traceRefOf(snapshot.context, 'approve')
 */
export function traceRefOf(
  context: Record<string, unknown> | undefined,
  stepId: string,
): PusharyTraceRef | undefined {
  const step = context?.[stepId] as { suspendPayload?: { trace?: unknown } } | undefined
  const parsed = pusharyTraceRefSchema.safeParse(step?.suspendPayload?.trace)
  return parsed.success ? parsed.data : undefined
}
