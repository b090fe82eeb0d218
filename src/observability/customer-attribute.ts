/**
 * How the customer asked appears on approval spans. Traces often leave the
 * application (Langfuse, Datadog, any OpenTelemetry backend), and the
 * customer ID is the application's own identifier of a person, so the
 * default is a hash: the same customer gives the same value across spans
 * and runs (an operator can still group and search by it), without the ID.
 */
import { createHash } from 'node:crypto'
import { PusharyValidationError } from '../pushary/errors.js'

/** `hashed` (default), `raw` (the ID as given) or `omitted` (no customer attribute). */
export type PusharyTraceCustomerMode = 'hashed' | 'raw' | 'omitted'

/** The environment variable an operator sets to choose the mode. */
export const TRACE_CUSTOMER_ENV = 'PUSHARY_TRACE_CUSTOMER'

const MODES: readonly PusharyTraceCustomerMode[] = ['hashed', 'raw', 'omitted']

/**
 * The configured mode; unset means `hashed`. Anything else is refused with a
 * typed error naming the variable (the asking step checks it before asking).
 *
 * @example
 * traceCustomerMode({ PUSHARY_TRACE_CUSTOMER: 'omitted' }) // 'omitted'
 */
export function traceCustomerMode(env: NodeJS.ProcessEnv = process.env): PusharyTraceCustomerMode {
  const value = env[TRACE_CUSTOMER_ENV]
  if (value === undefined || value === '') return 'hashed'
  const mode = MODES.find((known) => known === value.trim().toLowerCase())
  if (mode) return mode
  throw new PusharyValidationError({
    code: 'invalid_options',
    operation: 'approval tracing',
    field: TRACE_CUSTOMER_ENV,
    message: `${TRACE_CUSTOMER_ENV} must be hashed, raw or omitted (got ${JSON.stringify(value.slice(0, 40))})`,
  })
}

/**
 * The span metadata for the customer under `mode`: `{}` when omitted.
 *
 * @example
 * customerMetadata('customer_1', 'hashed') // { 'pushary.customer': 'sha256:…' }
 */
export function customerMetadata(externalId: string, mode: PusharyTraceCustomerMode): Record<string, string> {
  switch (mode) {
    case 'omitted':
      return {}
    case 'raw':
      return { 'pushary.customer': externalId }
    case 'hashed':
      return {
        'pushary.customer': `sha256:${createHash('sha256').update(`pushary-customer:${externalId}`).digest('hex').slice(0, 16)}`,
      }
    default: {
      const unreachable: never = mode
      return unreachable
    }
  }
}
