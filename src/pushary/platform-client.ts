/**
 * The client's permit and bound-key calls (E10–E12), composed into the
 * object `createPusharyClient` returns. A permit refusal is data (a result
 * on `status`); transport, auth and malformed responses stay typed errors,
 * and either way the action must not run without a `permitted` result.
 */
import type { PusharyCallOptions } from './ask.js'
import { parseWith } from './client-config.js'
import { isPusharyApiError, type PusharyValidationCode } from './errors.js'
import type { PusharyTransport } from './http.js'
import { idSchema } from './identity.js'
import {
  type ConsumeAuthorizationInput,
  type ConsumeAuthorizationResult,
  consumeAuthorizationInputSchema,
  type IssuedKey,
  type IssueKeyInput,
  issuedKeySchema,
  issueKeyInputSchema,
  type KeyList,
  keyListSchema,
  permitSchema,
  type ReceiptInput,
  type ReceiptResult,
  type RevokedKey,
  readPermitRefusal,
  receiptInputSchema,
  receiptResultSchema,
  revokedKeySchema,
} from './platform-schemas.js'

/**
 * Permit and bound-key calls of {@link PusharyClient}.
 *
 * @example
 * const permit = await client.consumeAuthorization({ authorizationId: decisionId, toolName: 'refund.create' })
 */
export interface PusharyPlatformCalls {
  /** Spends an approval once for exactly this action (E10). */
  consumeAuthorization(
    input: ConsumeAuthorizationInput,
    options?: PusharyCallOptions,
  ): Promise<ConsumeAuthorizationResult>
  /** Records what the permitted action did; the first report wins (E11). */
  recordReceipt(permitId: string, input: ReceiptInput, options?: PusharyCallOptions): Promise<ReceiptResult>
  /** Keys bound to one customer: create, read and cancel for it only, never answer (E12). */
  readonly keys: {
    issue(input: IssueKeyInput, options?: PusharyCallOptions): Promise<IssuedKey>
    list(options?: PusharyCallOptions): Promise<KeyList>
    revoke(keyPrefix: string, options?: PusharyCallOptions): Promise<RevokedKey>
  }
}

const fieldCode =
  (fallback: PusharyValidationCode) =>
  (field: string): PusharyValidationCode =>
    field === 'externalId' ? 'invalid_external_id' : fallback

/**
 * Builds the calls on the client's transport.
 *
 * @example
 * const platform = createPlatformCalls(transport)
 */
export function createPlatformCalls(transport: PusharyTransport): PusharyPlatformCalls {
  // Permit ids and key prefixes are percent-encoded, as both SDKs do.
  const segment = (value: string) => encodeURIComponent(value)

  return {
    async consumeAuthorization(input, call = {}) {
      const operation = 'consumeAuthorization'
      const body = parseWith(
        consumeAuthorizationInputSchema,
        input,
        operation,
        fieldCode('invalid_permit_input'),
      )
      try {
        return await transport.send({
          operation,
          method: 'POST',
          path: '/authorizations/consume',
          body,
          schema: permitSchema,
          signal: call.signal,
        })
      } catch (error) {
        // Only a body that names a refusal is one; a 401, a 5xx or a body
        // without `refusal` stays the typed error it was.
        const refused = isPusharyApiError(error) ? readPermitRefusal(error.body) : null
        if (refused === null) throw error
        return refused
      }
    },

    async recordReceipt(permitId, input, call = {}) {
      const operation = 'recordReceipt'
      const id = parseWith(idSchema, permitId, operation, () => 'invalid_identifier', 'permitId')
      const body = parseWith(receiptInputSchema, input, operation, () => 'invalid_permit_input')
      return transport.send({
        operation,
        method: 'POST',
        path: `/authorizations/${segment(id)}/receipt`,
        body,
        schema: receiptResultSchema,
        signal: call.signal,
      })
    },

    keys: {
      async issue(input, call = {}) {
        const operation = 'keys.issue'
        const body = parseWith(issueKeyInputSchema, input, operation, fieldCode('invalid_key_input'))
        return transport.send({
          operation,
          method: 'POST',
          path: '/keys',
          body,
          schema: issuedKeySchema,
          signal: call.signal,
        })
      },
      list: async (call = {}) =>
        transport.send({
          operation: 'keys.list',
          method: 'GET',
          path: '/keys',
          schema: keyListSchema,
          signal: call.signal,
        }),
      async revoke(keyPrefix, call = {}) {
        const operation = 'keys.revoke'
        const prefix = parseWith(idSchema, keyPrefix, operation, () => 'invalid_identifier', 'keyPrefix')
        return transport.send({
          operation,
          method: 'DELETE',
          path: `/keys/${segment(prefix)}`,
          schema: revokedKeySchema,
          signal: call.signal,
        })
      },
    },
  }
}
