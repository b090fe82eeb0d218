/**
 * Issue 19, item 2: what the reviewer sees is what the action receives. Bidi
 * controls and invisible characters are refused in every reviewer-visible
 * field, by the client before any request, by the approval step's own input
 * check, and by the service over raw HTTP.
 */
import { describe, expect, it } from 'vitest'
import { createPusharyClient } from '../../src/pushary/client.js'
import { isDisplayedTextExact } from '../../src/pushary/display-text.js'
import { isPusharyValidationError } from '../../src/pushary/errors.js'
import { parsePusharyApprovalStepInput } from '../../src/steps/approval-schemas.js'
import { rejection, thrown } from '../helpers/errors.js'
import { serviceFixture } from './service-harness.js'
import { countingFetch } from './support/devices.js'

const fixture = serviceFixture('display-text')

// Each case: the field the error must name, and the create body that puts the character there.
const CASES: ReadonlyArray<[string, Record<string, unknown>]> = [
  ['question', { question: 'Refund to ACME-\u202E9876-1234?' }],
  ['question', { question: 'Refund EUR 1\u200B000?' }],
  ['options.1', { question: 'Which?', type: 'select', options: ['card', 'wire\u2067 x'] }],
  ['placeholder', { question: 'Why?', type: 'input', placeholder: 'a\u200Cb' }],
  ['context', { question: 'Ship?', context: 'order \uFEFF42' }],
  ['agentName', { question: 'Ship?', agentName: 'ops\u200Dbot' }],
  ['toolName', { question: 'Ship?', toolName: 'refund\u2066' }],
  ['toolTarget', { question: 'Ship?', toolTarget: 'acct-\u202D12' }],
  ['parameters.amount', { question: 'Refund?', parameters: { amount: '1\u00AD000' } }],
  [
    'presentation.label',
    { question: 'Refund?', presentation: { label: 'Refund\u200F', effect: 'Money leaves the account' } },
  ],
]

describe('displayed text is exact', () => {
  it('knows the characters that reorder or hide text, and leaves ordinary text alone', () => {
    for (const hidden of ['\u202E', '\u202A', '\u2066', '\u2069', '\u200E', '\u200F', '\u061C']) {
      expect(isDisplayedTextExact(`a${hidden}b`)).toBe(false)
    }
    for (const hidden of ['\u200B', '\u200C', '\u200D', '\u2060', '\uFEFF', '\u00AD', '\u180E']) {
      expect(isDisplayedTextExact(`1${hidden}000`)).toBe(false)
    }
    expect(isDisplayedTextExact('Rückerstattung € 48 – كتاب – 日本 👍')).toBe(true)
  })

  it.each(CASES)('the service refuses %s over raw HTTP with 400 naming the field', async (field, body) => {
    const h = await fixture.start()
    const response = await h.api('POST', '/decisions', body)
    expect(response.status).toBe(400)
    expect(response.json.field).toBe(field)
  })

  it('the client refuses every case before any request, naming the field', async () => {
    const h = await fixture.start()
    const counter = countingFetch()
    const client = createPusharyClient({
      baseUrl: h.server.baseUrl,
      apiKey: h.server.apiKey,
      fetch: counter.fetch,
    })
    for (const [field, body] of CASES) {
      const error = await rejection(client.decisions.create(body as never))
      expect(isPusharyValidationError(error) && error.field, field).toBe(field)
    }
    expect(counter.count()).toBe(0)
  })

  it('the approval step refuses a reordered or hidden question, option or subject field', () => {
    const base = { operationId: 'refund:o1:v1', question: 'Refund?', externalId: 'customer_1' }
    for (const [field, change] of [
      ['question', { question: 'Refund to ACME-\u202E9876-1234?' }],
      ['options.0', { type: 'select', options: ['1\u200B000', '10'] }],
      ['placeholder', { type: 'input', placeholder: 'amount\u2066' }],
      ['subject.toolTarget', { subject: { toolTarget: 'ACME-\u202E9876-1234' } }],
      ['subject.parameters.amount', { subject: { parameters: { amount: '1\u200B000' } } }],
    ] as const) {
      const error = thrown(() => parsePusharyApprovalStepInput({ ...base, ...change }))
      expect(isPusharyValidationError(error) && error.field).toBe(field)
    }
  })
})
