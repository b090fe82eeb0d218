import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { isPusharyValidationError } from '../../src/pushary/errors.js'
import {
  canonicalJson,
  deterministicKey,
  externalIdSchema,
  fingerprintPusharyAction,
  parseExternalId,
} from '../../src/pushary/identity.js'
import { thrown } from '../helpers/errors.js'

describe('fingerprintPusharyAction', () => {
  const action = {
    toolName: 'refund.create',
    input: { orderId: 'o_1', amount: { minor: 4800, currency: 'EUR' } },
  }

  it('is equal for reordered keys at every depth', () => {
    const reordered = {
      input: { amount: { currency: 'EUR', minor: 4800 }, orderId: 'o_1' },
      toolName: 'refund.create',
    }
    expect(fingerprintPusharyAction(reordered)).toBe(fingerprintPusharyAction(action))
    expect(fingerprintPusharyAction(action)).toMatch(/^[0-9a-f]{64}$/)
  })

  it('differs when one nested value changes', () => {
    const changed = { ...action, input: { ...action.input, amount: { minor: 4801, currency: 'EUR' } } }
    expect(fingerprintPusharyAction(changed)).not.toBe(fingerprintPusharyAction(action))
  })

  it('drops undefined object entries but keeps array order', () => {
    expect(canonicalJson({ b: [2, 1], a: undefined, c: null })).toBe('{"b":[2,1],"c":null}')
    expect(fingerprintPusharyAction([1, 2])).not.toBe(fingerprintPusharyAction([2, 1]))
  })

  it('accepts a shared reference that is not a cycle, and null-prototype objects', () => {
    const shared = { id: 1 }
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { id: 1 })
    expect(canonicalJson({ a: shared, b: shared, c: bare })).toBe('{"a":{"id":1},"b":{"id":1},"c":{"id":1}}')
  })

  it.each([
    ['NaN', { amount: Number.NaN }, 'value.amount'],
    ['Infinity', [Number.POSITIVE_INFINITY], 'value.0'],
    ['a Date', { at: new Date(0) }, 'value.at'],
    ['a Map', { m: new Map() }, 'value.m'],
    ['a class instance', { money: new (class Money {})() }, 'value.money'],
    ['a bigint', { n: 1n }, 'value.n'],
    ['a function', { f: () => 1 }, 'value.f'],
    ['undefined in an array', { list: [1, undefined] }, 'value.list.1'],
  ])('rejects %s with a typed error naming the path', (_label, value, field) => {
    const error = thrown(() => fingerprintPusharyAction(value))
    expect(isPusharyValidationError(error)).toBe(true)
    expect(error).toMatchObject({ code: 'invalid_fingerprint_value', field })
  })

  it('rejects a cycle', () => {
    const node: Record<string, unknown> = { id: 1 }
    node.children = [node]
    expect(thrown(() => fingerprintPusharyAction(node))).toMatchObject({
      code: 'invalid_fingerprint_value',
      field: 'value.children.0',
    })
  })
})

describe('deterministicKey', () => {
  it('equals the official SDK key: SHA-256 of the parts joined by NUL, first 40 hex', () => {
    expect(deterministicKey(['run_1', 'step_1', 'customer_1'])).toBe(
      createHash('sha256').update('run_1\u0000step_1\u0000customer_1').digest('hex').slice(0, 40),
    )
    // printf 'a\0b' | sha256sum | cut -c1-40
    expect(deterministicKey(['a', 'b'])).toBe('59b271ae1bbcb1d31d41929817f4b16fb439eb4f')
  })

  it('is 40 hex characters, stable, and separates parts unambiguously', () => {
    const key = deterministicKey(['run_1', 'step_1'])
    expect(key).toMatch(/^[0-9a-f]{40}$/)
    expect(deterministicKey(['run_1', 'step_1'])).toBe(key)
    expect(deterministicKey(['run_1step_1'])).not.toBe(key)
    expect(deterministicKey(['run_', '1step_1'])).not.toBe(key)
  })

  it('rejects an empty list or a non-string part', () => {
    expect(thrown(() => deterministicKey([]))).toMatchObject({ code: 'invalid_identifier', field: 'parts' })
    expect(thrown(() => deterministicKey([1 as unknown as string]))).toMatchObject({
      code: 'invalid_identifier',
    })
  })
})

describe('customer ID rule', () => {
  it('keeps whitespace byte for byte', () => {
    expect(parseExternalId(' customer_1 ')).toBe(' customer_1 ')
    expect(externalIdSchema.parse('\tcustomer\n')).toBe('\tcustomer\n')
  })

  it('accepts 256 UTF-16 code units and rejects 257 or 129 emoji', () => {
    expect(parseExternalId('c'.repeat(256))).toHaveLength(256)
    expect(parseExternalId('😀'.repeat(128))).toHaveLength(256)
    expect(thrown(() => parseExternalId('c'.repeat(257)))).toMatchObject({ code: 'invalid_external_id' })
    expect(thrown(() => parseExternalId('😀'.repeat(129), 'customerId'))).toMatchObject({
      code: 'invalid_external_id',
      field: 'customerId',
    })
  })

  it('rejects blank and non-string IDs with the zod issues attached', () => {
    const error = thrown(() => parseExternalId(' \t '))
    expect(error).toMatchObject({ code: 'invalid_external_id', field: 'externalId' })
    expect(isPusharyValidationError(error) && error.issues.length).toBe(1)
    expect(thrown(() => parseExternalId(42))).toMatchObject({ code: 'invalid_external_id' })
  })
})
