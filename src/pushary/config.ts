/**
 * The one configuration shape every helper accepts: credentials to build a
 * client (`{ apiKey, baseUrl }`, falling back to `PUSHARY_API_KEY` and
 * `PUSHARY_BASE_URL`) or a ready client (`{ client }`).
 */
import { createPusharyClient, type PusharyClient } from './client.js'
import { PusharyValidationError } from './errors.js'

/**
 * Credentials or a client. With neither, `PUSHARY_API_KEY` (and
 * `PUSHARY_BASE_URL`, else the hosted API) are read once, when a helper is built.
 *
 * @example
 * const config: PusharyConfig = { apiKey: process.env.PUSHARY_API_KEY! }
 */
export interface PusharyConfig {
  /** Full key `pk_….sk_…`; default `PUSHARY_API_KEY`. Ignored when `client` is given. */
  apiKey?: string | undefined
  /** API root ending in `/api/v1/server`; default `PUSHARY_BASE_URL`, else the hosted API. */
  baseUrl?: string | undefined
  /** A client built elsewhere (tests, custom fetch); wins over `apiKey`/`baseUrl`. */
  client?: PusharyClient | undefined
}

/**
 * Resolves the client of a {@link PusharyConfig} once. Throws a typed
 * validation error naming `config` when the config is not an object, and the
 * client's own errors for a missing or malformed key, before any request.
 *
 * @example
 * const client = resolvePusharyClient({ apiKey: 'pk_live.sk_live' }, 'connect')
 */
export function resolvePusharyClient(config: PusharyConfig | undefined, operation: string): PusharyClient {
  if (config === undefined || config === null || typeof config !== 'object') {
    throw new PusharyValidationError({
      code: 'invalid_options',
      operation,
      field: 'config',
      message: 'config must be { apiKey, baseUrl? } or { client }',
    })
  }
  if (config.client) return config.client
  return createPusharyClient({ apiKey: config.apiKey, baseUrl: config.baseUrl })
}
