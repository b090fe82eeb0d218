import { createHmac } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import {
  parseDecisionCallback,
  resolvePusharyCallback,
  SIGNATURE_HEADER,
  signWebhookBody,
  verifyWebhookSignature,
} from '../../src/pushary/callbacks.js'

const secret = 'whsec_test_secret'
const body = JSON.stringify({
  event: 'decision.answered',
  correlationId: 'dec_1',
  decisionId: 'dec_1',
  status: 'answered',
  answer: 'yes',
  value: 'yes',
  answeredAt: '2025-01-01T00:00:00.000Z',
  context: '{"runId":"r1"}',
  type: 'confirm',
})

function flipByte(text: string, index: number): string {
  const bytes = Buffer.from(text, 'utf8')
  bytes[index] = (bytes[index] ?? 0) ^ 0x01
  return bytes.toString('utf8')
}

describe('webhook signatures', () => {
  it('uses the x-pushary-signature header', () => {
    expect(SIGNATURE_HEADER).toBe('x-pushary-signature')
  })

  it('verifies a body signed with the same secret', () => {
    const signature = signWebhookBody(body, secret)
    expect(signature).toMatch(/^[0-9a-f]{64}$/)
    expect(verifyWebhookSignature(body, signature, secret)).toBe(true)
    expect(verifyWebhookSignature(Buffer.from(body), signature, secret)).toBe(true)
  })

  it('fails when one byte of the body or the signature is flipped', () => {
    const signature = signWebhookBody(body, secret)
    expect(verifyWebhookSignature(flipByte(body, 10), signature, secret)).toBe(false)
    expect(verifyWebhookSignature(body, flipByte(signature, 0), secret)).toBe(false)
    expect(verifyWebhookSignature(body, flipByte(signature, 63), secret)).toBe(false)
  })

  it('fails for an empty secret, a missing signature or a wrong length', () => {
    const signature = signWebhookBody(body, secret)
    expect(verifyWebhookSignature(body, createHmac('sha256', '').update(body).digest('hex'), '')).toBe(false)
    expect(verifyWebhookSignature(body, signature, undefined)).toBe(false)
    expect(verifyWebhookSignature(body, '', secret)).toBe(false)
    expect(verifyWebhookSignature(body, null, secret)).toBe(false)
    expect(verifyWebhookSignature(body, signature.slice(1), secret)).toBe(false)
    expect(verifyWebhookSignature(body, signature.toUpperCase(), secret)).toBe(false)
    expect(verifyWebhookSignature(body, signWebhookBody(body, 'other'), secret)).toBe(false)
  })
})

describe('parseDecisionCallback', () => {
  it('parses an answered callback with its context', () => {
    expect(parseDecisionCallback(body)).toEqual({
      event: 'decision.answered',
      correlationId: 'dec_1',
      decisionId: 'dec_1',
      status: 'answered',
      answer: 'yes',
      value: 'yes',
      answeredAt: '2025-01-01T00:00:00.000Z',
      context: '{"runId":"r1"}',
      type: 'confirm',
    })
  })

  it('accepts an expiry with a null answer', () => {
    const expired = JSON.stringify({
      event: 'decision.expired',
      correlationId: 'dec_2',
      decisionId: 'dec_2',
      status: 'expired',
      answer: null,
      value: null,
      answeredAt: null,
    })
    expect(parseDecisionCallback(expired)).toMatchObject({ status: 'expired', answer: null, value: null })
  })

  it('fills decisionId, status and event for a minimal hosted-style body', () => {
    const minimal = JSON.stringify({ correlationId: 'dec_3', answer: 'no', answeredAt: '' })
    expect(parseDecisionCallback(minimal)).toEqual({
      event: 'decision.answered',
      correlationId: 'dec_3',
      decisionId: 'dec_3',
      status: 'answered',
      answer: 'no',
      value: 'no',
      answeredAt: null,
    })
  })

  it.each([
    ['bad JSON', '{nope'],
    ['an array', '[]'],
    ['a missing correlationId', JSON.stringify({ answer: 'yes' })],
    [
      'an answered callback without an answer',
      JSON.stringify({ correlationId: 'd', status: 'answered', answer: null }),
    ],
    [
      'an event that contradicts the status',
      JSON.stringify({ correlationId: 'd', event: 'decision.expired', status: 'answered', answer: 'yes' }),
    ],
    ['an unknown event', JSON.stringify({ correlationId: 'd', event: 'decision.maybe', answer: 'yes' })],
    ['a numeric answer', JSON.stringify({ correlationId: 'd', answer: 1 })],
  ])('returns null for %s', (_label, raw) => {
    expect(parseDecisionCallback(raw)).toBeNull()
  })
})

describe('resolvePusharyCallback', () => {
  it('verifies then parses, reading approval with the SDK rule and a missing type as confirm', () => {
    const resolved = resolvePusharyCallback(body, signWebhookBody(body, secret), secret)
    expect(resolved).toMatchObject({ decisionId: 'dec_1', type: 'confirm', approved: true })
    const signed = (fields: Record<string, unknown>) => {
      const raw = JSON.stringify({ correlationId: 'dec_4', ...fields })
      return resolvePusharyCallback(raw, signWebhookBody(raw, secret), secret)?.approved
    }
    expect(signed({ answer: 'no', type: 'confirm' })).toBe(false)
    expect(signed({ answer: 'maybe', type: 'confirm' })).toBe(false)
    expect(signed({ answer: ' OK ', type: 'confirm' })).toBe(true)
    // The hosted body: no type, no status; the official SDK reads it as a confirm.
    expect(signed({ answer: 'yes', value: 'yes', answeredAt: '2026-12-01T10:00:00.000Z' })).toBe(true)
    expect(signed({ answer: 'Approve', value: 'Approve', answeredAt: '2026-12-01T10:00:00.000Z' })).toBe(true)
    expect(signed({ answer: 'maybe', value: 'maybe', answeredAt: '2026-12-01T10:00:00.000Z' })).toBe(false)
    // A callback that says it was a select or input is data, even when it reads "yes".
    expect(signed({ answer: 'yes', type: 'select' })).toBe(false)
    expect(signed({ answer: 'yes', type: 'input' })).toBe(false)
  })

  it('returns null for a bad signature or an unparseable signed body', () => {
    expect(resolvePusharyCallback(body, signWebhookBody(body, 'wrong'), secret)).toBeNull()
    expect(resolvePusharyCallback(body, signWebhookBody(body, secret), '')).toBeNull()
    expect(resolvePusharyCallback('{nope', signWebhookBody('{nope', secret), secret)).toBeNull()
  })
})
