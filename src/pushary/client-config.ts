import type { z } from 'zod/v4'
import { type PusharyValidationCode, PusharyValidationError } from './errors.js'
import { idSchema } from './identity.js'
import { findReservedKey, RESERVED_KEY_MESSAGE } from './reserved-keys.js'

/**
 * API root of the hosted service; the client's default `baseUrl`.
 *
 * @example
 * createPusharyClient({ baseUrl: PUSHARY_DEFAULT_BASE_URL })
 */
export const PUSHARY_DEFAULT_BASE_URL = 'https://pushary.com/api/v1/server'
const DEFAULT_REQUEST_TIMEOUT_MS = 65_000

/**
 * Throws a validation error; shared by the client's argument checks.
 *
 * @example
 * invalid('decisions.get', 'invalid_options', 'wait', 'must be seconds')
 */
export function invalid(
  operation: string,
  code: PusharyValidationCode,
  field: string,
  message: string,
): never {
  throw new PusharyValidationError({ code, operation, field, message })
}

/**
 * Parses with a schema, mapping the first failing field to a closed error
 * code. A key JavaScript treats specially (`__proto__`, `constructor`,
 * `prototype`) is refused by name first: the schema would drop it silently.
 *
 * @example
 * const body = parseWith(createDecisionInputSchema, input, 'decisions.create', decisionInputCode)
 */
export function parseWith<Schema extends z.ZodType>(
  schema: Schema,
  value: unknown,
  operation: string,
  codeFor: (field: string) => PusharyValidationCode,
  fieldPrefix?: string,
): z.output<Schema> {
  const reserved = findReservedKey(value)
  if (reserved !== null) {
    const path = reserved.map(String)
    const field = [fieldPrefix, ...path].filter((part) => part !== undefined && part !== '').join('.')
    invalid(operation, codeFor(path[0] ?? ''), field, `"${path.at(-1)}" ${RESERVED_KEY_MESSAGE}`)
  }
  const parsed = schema.safeParse(value)
  if (parsed.success) return parsed.data
  const first = parsed.error.issues[0]?.path[0]
  const context = { operation, code: codeFor(typeof first === 'string' ? first : '') }
  throw PusharyValidationError.fromZod(
    parsed.error,
    fieldPrefix === undefined ? context : { ...context, fieldPrefix },
  )
}

/**
 * Error code for a bad field of a decision input.
 *
 * @example
 * decisionInputCode('externalId') // 'invalid_external_id'
 */
export function decisionInputCode(field: string): PusharyValidationCode {
  switch (field) {
    case 'externalId':
      return 'invalid_external_id'
    case 'question':
    case 'type':
      return 'invalid_question'
    case 'options':
      return 'invalid_options'
    case 'idempotencyKey':
      return 'invalid_idempotency_key'
    default:
      return 'invalid_decision_input'
  }
}

/**
 * Validates a decision id (not blank), naming the field `decisionId`.
 *
 * @example
 * const id = parseDecisionId(input, 'decisions.get')
 */
export function parseDecisionId(value: unknown, operation: string): string {
  return parseWith(idSchema, value, operation, () => 'invalid_identifier', 'decisionId')
}

/**
 * The API key from options or `PUSHARY_API_KEY`, checked for the `pk_….sk_…` shape.
 *
 * @example
 * const apiKey = resolveApiKey(options.apiKey)
 */
export function resolveApiKey(value: string | undefined): string {
  const operation = 'createPusharyClient'
  const key = value ?? process.env.PUSHARY_API_KEY
  if (key === undefined || key.trim() === '') {
    invalid(operation, 'invalid_api_key', 'apiKey', 'no API key: set PUSHARY_API_KEY or pass { apiKey }')
  }
  // The service authenticates the full `pk_….sk_…` pair; a bare prefix would
  // only fail later with a confusing 401. Only the dot is required, as in the
  // official SDK; whitespace cannot be part of a bearer token.
  if (!key.includes('.') || /\s/.test(key)) {
    invalid(operation, 'invalid_api_key', 'apiKey', 'malformed API key: use the full key (pk_xxx.sk_xxx)')
  }
  return key
}

/**
 * The base URL without a trailing slash: any http(s) URL without a query or
 * fragment (every path is appended to it as is, so a proxy or gateway path
 * works). Defaults to `PUSHARY_BASE_URL`, else the hosted API.
 *
 * @example
 * resolveBaseUrl('http://127.0.0.1:4100/api/v1/server/') // 'http://127.0.0.1:4100/api/v1/server'
 */
export function resolveBaseUrl(value: string | undefined): string {
  const operation = 'createPusharyClient'
  const raw = (value ?? (process.env.PUSHARY_BASE_URL || PUSHARY_DEFAULT_BASE_URL)).replace(/\/+$/, '')
  let url: URL
  try {
    url = new URL(raw)
  } catch (error) {
    throw new PusharyValidationError({
      code: 'invalid_base_url',
      operation,
      field: 'baseUrl',
      message: `baseUrl is not a URL: ${raw}`,
      cause: error,
    })
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    invalid(operation, 'invalid_base_url', 'baseUrl', 'baseUrl must use http or https')
  }
  if (url.search !== '' || url.hash !== '' || raw.includes('?') || raw.includes('#')) {
    invalid(operation, 'invalid_base_url', 'baseUrl', `baseUrl cannot carry a query or fragment, got ${raw}`)
  }
  if (url.username !== '' || url.password !== '') {
    invalid(operation, 'invalid_base_url', 'baseUrl', 'baseUrl must not contain credentials (user:password@)')
  }
  return raw
}

/**
 * The request timeout in ms, default 65 000.
 *
 * @example
 * resolveTimeout(undefined) // 65_000
 */
export function resolveTimeout(value: number | undefined): number {
  if (value === undefined) return DEFAULT_REQUEST_TIMEOUT_MS
  if (!Number.isFinite(value) || value <= 0) {
    invalid('createPusharyClient', 'invalid_options', 'requestTimeoutMs', 'must be a positive number of ms')
  }
  return value
}
