/**
 * Error bodies as the hosted Pushary API writes them: `error` is a sentence a
 * person can read, `code` the machine-readable reason. Clients of the hosted
 * API show `error` as the message, so it never carries a bare code.
 */
import type { Context } from 'hono'
import type { ContentfulStatusCode } from 'hono/utils/http-status'

/**
 * The JSON body of every error the local service answers.
 *
 * @example
 * const body: ApiErrorBody = { error: 'Decision not found or expired', code: 'not_found' }
 */
export interface ApiErrorBody {
  error: string
  code: string
  [extra: string]: unknown
}

/**
 * Builds an error body; `extra` adds local detail such as the offending `field`.
 *
 * @example
 * apiErrorBody('not_found', 'Decision not found or expired')
 */
export function apiErrorBody(
  code: string,
  sentence: string,
  extra: Record<string, unknown> = {},
): ApiErrorBody {
  return { ...extra, error: sentence, code }
}

/**
 * Answers `status` with an {@link ApiErrorBody}.
 *
 * @example
 * return apiError(c, 404, 'not_found', 'Decision not found or expired')
 */
export function apiError(
  c: Context,
  status: ContentfulStatusCode,
  code: string,
  sentence: string,
  extra: Record<string, unknown> = {},
): Response {
  return c.json(apiErrorBody(code, sentence, extra), status)
}

/** The hosted API's sentence for an unknown or purged decision. */
export const DECISION_NOT_FOUND = 'Decision not found or expired'
