import { createHash } from 'node:crypto'
import { isDisplayedTextExact } from './display-text.js'
import { PusharyValidationError } from './errors.js'
import { PUSHARY_LIMITS } from './limits.js'
import { storableString } from './text-rules.js'

/**
 * An identifier: any string that is not blank after trimming and that every
 * store reads back byte for byte (no NUL, no unpaired surrogate: a device
 * enrolled for `"victim\u0000x"` would otherwise come back as `"victim"`).
 * The value is returned unchanged (never trimmed), because the service
 * matches it exactly and a trimmed id would address a different person.
 *
 * @example
 * idSchema.parse(' run_1 ') // ' run_1 '
 */
export const idSchema = storableString().refine((value) => value.trim().length > 0, {
  message: 'an identifier cannot be blank',
})

/** Message of the customer-ID text rule. */
export const CUSTOMER_ID_TEXT_MESSAGE =
  'a customer ID must not contain control characters (U+0000–U+001F but tab and line feed, U+007F–U+009F), bidirectional controls or invisible characters'

// C0 controls but tab and line feed (whitespace is kept byte for byte, and
// the terminal rule shows it), DEL and C1: ESC and CSI drive a terminal, CR
// overwrites the line it is on.
function hasTerminalControl(value: string): boolean {
  for (let index = 0; index < value.length; index += 1) {
    const unit = value.charCodeAt(index)
    if ((unit <= 0x1f && unit !== 0x09 && unit !== 0x0a) || (unit >= 0x7f && unit <= 0x9f)) return true
  }
  return false
}

/**
 * True when a customer ID can be shown as it reads: no C0 control (but tab
 * and line feed), DEL or C1 control, and nothing the displayed-text rule
 * refuses (bidi controls, invisible characters). A customer ID reaches the reviewer page, the `dev` terminal
 * and `devices list`; `cust\u202Eomer` or a C1 CSI there shows one person's
 * name for another's, or drives the terminal.
 *
 * @example
 * isCustomerIdText('customer_1') // true
 * isCustomerIdText('victim\u202Eevil') // false
 */
export function isCustomerIdText(value: string): boolean {
  return !hasTerminalControl(value) && isDisplayedTextExact(value)
}

/**
 * An {@link idSchema} that passes {@link isCustomerIdText}, of any length:
 * a customer ID as the client sends it (the hosted API publishes no length
 * limit).
 *
 * @example
 * customerIdSchema.parse('customer_1') // 'customer_1'
 */
export const customerIdSchema = idSchema.refine(isCustomerIdText, { message: CUSTOMER_ID_TEXT_MESSAGE })

/**
 * The customer-ID rule: an {@link idSchema} of at most 256 UTF-16 code units
 * (JavaScript `.length`, so one emoji counts as two). What stores read back;
 * a new customer ID is also held to {@link externalIdInputSchema}.
 *
 * @example
 * externalIdSchema.parse('customer_1') // 'customer_1'
 */
export const externalIdSchema = idSchema.refine((value) => value.length <= PUSHARY_LIMITS.externalIdMax, {
  message: `externalId must be at most ${PUSHARY_LIMITS.externalIdMax} UTF-16 code units`,
})

/**
 * A customer ID as the local service takes it in (decisions, `/enroll`,
 * reachability, lists): {@link externalIdSchema} and
 * {@link isCustomerIdText}, one rule for every route. Rows stored before the
 * text rule are still read with {@link externalIdSchema}.
 *
 * @example
 * externalIdInputSchema.safeParse('victim\u202Eevil').success // false
 */
export const externalIdInputSchema = externalIdSchema.refine(isCustomerIdText, {
  message: CUSTOMER_ID_TEXT_MESSAGE,
})

/**
 * Validates a customer ID and returns it unchanged, whitespace included.
 * Throws {@link PusharyValidationError} `invalid_external_id` naming `field`.
 *
 * @example
 * const id = parseExternalId(input.customerId, 'customerId')
 */
export function parseExternalId(value: unknown, field = 'externalId', operation = 'parseExternalId'): string {
  const parsed = externalIdSchema.safeParse(value)
  if (parsed.success) return parsed.data
  throw PusharyValidationError.fromZod(parsed.error, {
    operation,
    code: 'invalid_external_id',
    fieldPrefix: field,
  })
}

/**
 * A stable key derived from identity parts, exactly as the official Pushary
 * SDK derives it: SHA-256 of the parts joined by NUL, hex, first 40
 * characters. Used as an idempotency key so a retry of the same run and step
 * lands on the same decision, also when the official adapters opened it.
 *
 * @example
 * const key = deterministicKey([runId, stepId, externalId])
 */
export function deterministicKey(parts: readonly string[]): string {
  if (!Array.isArray(parts) || parts.length === 0 || !parts.every((part) => typeof part === 'string')) {
    throw new PusharyValidationError({
      code: 'invalid_identifier',
      operation: 'deterministicKey',
      field: 'parts',
      message: 'parts must be a non-empty array of strings',
    })
  }
  // NUL is the separator, so a part containing one would make two different
  // lists share a key (['a\0b'] and ['a', 'b']): refused.
  const withNul = parts.findIndex((part) => part.includes('\u0000'))
  if (withNul !== -1) {
    throw new PusharyValidationError({
      code: 'invalid_identifier',
      operation: 'deterministicKey',
      field: `parts.${withNul}`,
      message: 'a part must not contain NUL (U+0000), the separator',
    })
  }
  return createHash('sha256').update(parts.join('\u0000'), 'utf8').digest('hex').slice(0, 40)
}

/**
 * Canonical JSON of a plain value: object keys sorted by UTF-16 code unit,
 * `undefined` object entries dropped, arrays in order. Rejects anything JSON
 * would silently change (non-finite numbers, `undefined` in arrays, bigint,
 * functions, symbols, cycles, non-plain objects such as `Date` or class
 * instances) with `invalid_fingerprint_value` naming the path.
 *
 * @example
 * canonicalJson({ b: 1, a: [true, null] }) // '{"a":[true,null],"b":1}'
 */
export function canonicalJson(value: unknown): string {
  return serialize(value, 'value', [])
}

/**
 * 64-hex SHA-256 of {@link canonicalJson}: equal for reordered keys, different
 * for any changed nested value.
 *
 * @example
 * const fingerprint = fingerprintPusharyAction({ toolName: 'refund.create', input })
 */
export function fingerprintPusharyAction(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value), 'utf8').digest('hex')
}

function reject(path: string, message: string): never {
  throw new PusharyValidationError({
    code: 'invalid_fingerprint_value',
    operation: 'fingerprintPusharyAction',
    field: path,
    message,
  })
}

// `ancestors` holds only the objects on the current path, so a shared
// reference that is not a cycle is still accepted.
function serialize(value: unknown, path: string, ancestors: object[]): string {
  if (value === null) return 'null'
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return JSON.stringify(value)
    case 'number':
      if (!Number.isFinite(value)) reject(path, 'numbers must be finite')
      return JSON.stringify(value)
    case 'undefined':
      return reject(path, 'undefined is not a JSON value')
    case 'bigint':
      return reject(path, 'bigint is not a JSON value')
    case 'function':
      return reject(path, 'functions are not JSON values')
    case 'symbol':
      return reject(path, 'symbols are not JSON values')
  }
  const object = value as object
  if (ancestors.includes(object)) reject(path, 'the value contains a cycle')
  ancestors.push(object)
  try {
    if (Array.isArray(object)) {
      const items: string[] = []
      for (let index = 0; index < object.length; index += 1) {
        items.push(serialize(object[index], `${path}.${index}`, ancestors))
      }
      return `[${items.join(',')}]`
    }
    const prototype = Object.getPrototypeOf(object)
    if (prototype !== Object.prototype && prototype !== null) {
      reject(path, 'only plain objects are accepted (no Date, Map, Set or class instances)')
    }
    const record = object as Record<string, unknown>
    const entries: string[] = []
    for (const key of Object.keys(record).sort()) {
      const entry = record[key]
      if (entry === undefined) continue
      entries.push(`${JSON.stringify(key)}:${serialize(entry, `${path}.${key}`, ancestors)}`)
    }
    return `{${entries.join(',')}}`
  } finally {
    ancestors.pop()
  }
}
