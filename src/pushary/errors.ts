import type { z } from 'zod/v4'

/**
 * One validation problem, shaped like a zod issue but owned by this package so
 * callers never depend on zod's internal issue types.
 *
 * @example
 * const issue: PusharyIssue = { code: 'too_big', path: ['externalId'], message: 'Too long' }
 */
export interface PusharyIssue {
  readonly code: string
  readonly path: readonly PropertyKey[]
  readonly message: string
}

/**
 * Every `code` a {@link PusharyValidationError} can carry. Closed on purpose:
 * callers switch on it.
 *
 * @example
 * const code: PusharyValidationCode = 'invalid_external_id'
 */
export type PusharyValidationCode =
  | 'invalid_api_key'
  | 'invalid_base_url'
  | 'invalid_external_id'
  | 'invalid_identifier'
  | 'invalid_question'
  | 'invalid_answer'
  | 'invalid_fingerprint_value'
  | 'invalid_decision_input'
  | 'invalid_options'
  | 'invalid_response'
  | 'invalid_idempotency_key'
  | 'invalid_permit_input'
  | 'invalid_key_input'
  | 'binding_mismatch'

/**
 * The `code` of the client's own (non-API) errors. A {@link PusharyApiError}
 * carries the service's `code` instead, which the client cannot close.
 *
 * @example
 * const code: PusharyErrorCode = 'timeout'
 */
export type PusharyErrorCode =
  | PusharyValidationCode
  | 'api_error'
  | 'timeout'
  | 'aborted'
  | 'network_error'
  | 'idempotency_key_reused'

/**
 * Base class of every error thrown by the Pushary client and helpers.
 * Public because it is the one class a caller catches to handle any of this
 * package's errors by its `code` (the store, dev server and resume errors
 * extend it too).
 *
 * @example
 * try { await client.decisions.get(id) } catch (error) {
 *   if (error instanceof PusharyError) console.error(error.code)
 * }
 */
export class PusharyError extends Error {
  override name = 'PusharyError'
  readonly code: string

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause })
    this.code = code
  }
}

/**
 * Bad input caught before any HTTP request or write. `field` is the dotted
 * path of the offending field; `issues` keeps the zod issues.
 *
 * @example
 * throw new PusharyValidationError({
 *   code: 'invalid_external_id', operation: 'decisions.create', field: 'externalId',
 *   message: 'externalId must not be blank',
 * })
 */
export class PusharyValidationError extends PusharyError {
  override name = 'PusharyValidationError'
  declare readonly code: PusharyValidationCode
  readonly field: string
  readonly operation: string
  readonly issues: readonly PusharyIssue[]

  constructor(input: {
    code: PusharyValidationCode
    operation: string
    field: string
    message: string
    issues?: readonly PusharyIssue[]
    cause?: unknown
  }) {
    const where = input.field === '' ? '' : ` (field "${input.field}")`
    super(input.code, `Pushary ${input.operation}: ${input.message}${where}`, { cause: input.cause })
    this.field = input.field
    this.operation = input.operation
    this.issues = Object.freeze(input.issues ?? [])
  }

  /**
   * Builds one typed error from a ZodError; the first issue names the field
   * and the message, all issues are kept.
   *
   * @example
   * const parsed = schema.safeParse(input)
   * if (!parsed.success) throw PusharyValidationError.fromZod(parsed.error, {
   *   operation: 'decisions.create', code: 'invalid_decision_input',
   * })
   */
  static fromZod(
    error: z.ZodError,
    context: { operation: string; code: PusharyValidationCode; fieldPrefix?: string },
  ): PusharyValidationError {
    return new PusharyValidationError({
      code: context.code,
      operation: context.operation,
      ...summarizeZodError(error, context.fieldPrefix),
      cause: error,
    })
  }
}

/**
 * The parts every typed validation error keeps from a ZodError: all issues
 * (frozen), the dotted field of the first one (after `fieldPrefix`) and its
 * message. Shared so every error class names fields the same way.
 *
 * @example
 * const { field, message, issues } = summarizeZodError(parsed.error, 'opts')
 */
export function summarizeZodError(
  error: z.ZodError,
  fieldPrefix?: string,
): { field: string; message: string; issues: readonly PusharyIssue[] } {
  const issues: PusharyIssue[] = error.issues.map((issue) => ({
    code: String(issue.code),
    path: Object.freeze([...issue.path]),
    message: issue.message,
  }))
  const first = issues[0]
  const path = first ? first.path.map(String).join('.') : ''
  const field = [fieldPrefix, path].filter((part) => part !== undefined && part !== '').join('.')
  return { field, message: first?.message ?? 'invalid input', issues }
}

/**
 * A non-2xx answer from the decision service. The getters tell the caller
 * what to do next: fix credentials, back off, or retry later.
 *
 * @example
 * if (isPusharyApiError(error) && error.isRateLimited) await sleep(1000)
 */
export class PusharyApiError extends PusharyError {
  override name = 'PusharyApiError'
  /** The body's `code` field when the service sent a string one, else `'not_found'` for a 404 and `'api_error'` otherwise. */
  declare readonly code: string
  readonly status: number
  readonly statusText: string
  /** The body's own `code` field exactly, `undefined` when absent. */
  readonly apiCode: string | undefined
  /** The parsed JSON body, or `{}` when the body was not JSON. */
  readonly body: unknown
  readonly operation: string

  constructor(input: { operation: string; status: number; statusText: string; body: unknown }) {
    const record = isRecord(input.body) ? input.body : {}
    const detail =
      typeof record.message === 'string'
        ? record.message
        : typeof record.error === 'string'
          ? record.error
          : `HTTP ${input.status}`
    // The hosted API's 404 body is a sentence without a code: name it, so a
    // caller can tell "unknown or purged decision" from other failures.
    const fallback = input.status === 404 ? 'not_found' : 'api_error'
    super(
      typeof record.code === 'string' ? record.code : fallback,
      `Pushary ${input.operation} failed with HTTP ${input.status}: ${detail}`,
    )
    this.status = input.status
    this.statusText = input.statusText
    this.body = input.body
    this.operation = input.operation
    this.apiCode = typeof record.code === 'string' ? record.code : undefined
  }

  /** True for 401 and 403: the key is missing, wrong, or lacks the plan or scope. */
  get isAuthError(): boolean {
    return this.status === 401 || this.status === 403
  }

  /** True for 429: back off before retrying. */
  get isRateLimited(): boolean {
    return this.status === 429
  }

  /** True for any status of 500 or above: a server fault, usually worth a later retry. */
  get isServerError(): boolean {
    return this.status >= 500
  }
}

/**
 * The local HTTP request timeout fired (it covers reading the body). The
 * remote decision, if one was created, is left untouched.
 *
 * @example
 * if (error instanceof PusharyTimeoutError) console.log(error.timeoutMs)
 */
export class PusharyTimeoutError extends PusharyError {
  override name = 'PusharyTimeoutError'
  declare readonly code: 'timeout'
  readonly timeoutMs: number
  readonly operation: string

  constructor(input: { operation: string; timeoutMs: number; cause?: unknown }) {
    super('timeout', `Pushary ${input.operation} timed out after ${input.timeoutMs} ms`, {
      cause: input.cause,
    })
    this.timeoutMs = input.timeoutMs
    this.operation = input.operation
  }
}

/**
 * The caller's `signal` aborted the local wait. An abort never cancels the
 * remote decision: the person can still answer it.
 *
 * @example
 * if (error instanceof PusharyAbortError) console.log('stopped waiting', error.reason)
 */
export class PusharyAbortError extends PusharyError {
  override name = 'PusharyAbortError'
  declare readonly code: 'aborted'
  readonly reason: unknown
  readonly operation: string

  constructor(input: { operation: string; reason: unknown }) {
    super('aborted', `Pushary ${input.operation} was aborted by the caller`, { cause: input.reason })
    this.reason = input.reason
    this.operation = input.operation
  }
}

/**
 * The request never produced an HTTP answer (connection refused, DNS, reset).
 * Public because the client throws it beside `PusharyApiError` and
 * `PusharyTimeoutError`, and a caller retries it where it would not retry a
 * 4xx answer.
 *
 * @example
 * if (error instanceof PusharyNetworkError) console.log(error.cause)
 */
export class PusharyNetworkError extends PusharyError {
  override name = 'PusharyNetworkError'
  declare readonly code: 'network_error'
  readonly operation: string

  constructor(input: { operation: string; cause: unknown }) {
    const detail = input.cause instanceof Error ? input.cause.message : String(input.cause)
    super('network_error', `Pushary ${input.operation} could not reach the service: ${detail}`, {
      cause: input.cause,
    })
    this.operation = input.operation
  }
}

/**
 * @example
 * if (isPusharyError(error)) console.error(error.code)
 */
export function isPusharyError(value: unknown): value is PusharyError {
  return value instanceof PusharyError
}

/**
 * @example
 * if (isPusharyApiError(error) && error.isAuthError) console.error('check PUSHARY_API_KEY')
 */
export function isPusharyApiError(value: unknown): value is PusharyApiError {
  return value instanceof PusharyApiError
}

/**
 * @example
 * if (isPusharyValidationError(error)) console.error(error.field, error.issues)
 */
export function isPusharyValidationError(value: unknown): value is PusharyValidationError {
  return value instanceof PusharyValidationError
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
