/**
 * A signed callback whose `type` is present but not a known value is read as
 * an unknown type, never as a confirm: its "yes" is not approval, and the
 * wire value is surfaced. A missing (or null) type stays a confirm, as the
 * hosted API sends no type.
 */
import { describe, expect, it } from 'vitest'
import { resolvePusharyCallback, signWebhookBody } from '../../src/pushary/callbacks.js'

const SECRET = 'whsec_test_secret'

function signed(extra: Record<string, unknown>) {
  const raw = JSON.stringify({
    correlationId: 'dec_1',
    answer: 'yes',
    value: 'yes',
    answeredAt: '',
    ...extra,
  })
  return resolvePusharyCallback(raw, signWebhookBody(raw, SECRET), SECRET)
}

describe('callback type', () => {
  it.each([
    ['"CONFIRM"', 'CONFIRM', 'CONFIRM'],
    ['["confirm"]', ['confirm'], '["confirm"]'],
    ['7', 7, '7'],
    ['"approve"', 'approve', 'approve'],
  ])('reads a yes with type %s as not approved and surfaces the type', (_label, type, raw) => {
    expect(signed({ type })).toMatchObject({
      status: 'answered',
      type: 'unknown',
      rawType: raw,
      approved: false,
    })
  })

  it('reads a yes without a type, or with a null one, as an approved confirm', () => {
    expect(signed({})).toMatchObject({ approved: true })
    expect(signed({})).not.toHaveProperty('type')
    expect(signed({ type: null })).toMatchObject({ approved: true })
    expect(signed({ type: 'confirm' })).toMatchObject({ type: 'confirm', approved: true })
    expect(signed({ type: 'select' })).toMatchObject({ type: 'select', approved: false })
  })
})
