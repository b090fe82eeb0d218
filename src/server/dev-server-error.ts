/**
 * Errors of the local decision service's own configuration (not of requests,
 * which get HTTP status codes).
 */

import { PusharyError } from '../pushary/errors.js'

/**
 * Closed set of configuration failures.
 *
 * @example
 * if (isPusharyDevServerError(error) && error.code === 'listen_failed') console.error('port taken:', error.field)
 */
export type PusharyDevServerErrorCode =
  | 'invalid_option'
  | 'invalid_policy'
  | 'invalid_database'
  | 'listen_failed'

/**
 * Thrown by `createPusharyDevServer` and the `dev` command for bad options, an
 * unreadable policy file, a database written by a newer version, or a port
 * that cannot be bound. `field` names the option. Public because
 * `createPusharyDevServer` is, and this is what it throws.
 *
 * @example
 * try { await createPusharyDevServer({ port: -1 }) } catch (error) {
 *   if (error instanceof PusharyDevServerError) console.error(error.code, error.field)
 * }
 */
export class PusharyDevServerError extends PusharyError {
  override name = 'PusharyDevServerError'
  declare readonly code: PusharyDevServerErrorCode
  readonly field: string
  readonly issues: readonly { readonly path: readonly PropertyKey[]; readonly message: string }[]

  constructor(input: {
    code: PusharyDevServerErrorCode
    field: string
    message: string
    issues?: readonly { readonly path: readonly PropertyKey[]; readonly message: string }[]
    cause?: unknown
  }) {
    super(input.code, `Pushary dev server: ${input.message} (option "${input.field}")`, {
      cause: input.cause,
    })
    this.field = input.field
    this.issues = Object.freeze([...(input.issues ?? [])])
  }
}

/**
 * True when `value` is a {@link PusharyDevServerError}.
 *
 * @example
 * if (isPusharyDevServerError(error)) process.exitCode = 2
 */
export function isPusharyDevServerError(value: unknown): value is PusharyDevServerError {
  return value instanceof PusharyDevServerError
}
