/**
 * Issue 38, finding 4: displayed text by Unicode property, not by a list.
 * Ten code points that draw nothing passed the old list; every
 * default-ignorable and format code point is refused now, by the one rule the
 * client, the approval step and the service share, and nothing else that a
 * reviewer can read is.
 *
 * The tables are written from the Unicode Character Database
 * (DerivedCoreProperties.txt `Default_Ignorable_Code_Point` and the `Cf`
 * entries of UnicodeData.txt, Unicode 15), not from the rule under test.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createPusharyClient } from '../../src/pushary/client.js'
import { graphemePrefix, isDisplayedTextExact } from '../../src/pushary/display-text.js'
import { isPusharyValidationError } from '../../src/pushary/errors.js'
import { parsePusharyApprovalStepInput } from '../../src/steps/approval-schemas.js'
import { rejection, thrown } from '../helpers/errors.js'
import { serviceFixture } from './service-harness.js'
import { countingFetch } from './support/devices.js'

const fixture = serviceFixture('display-text-invisible')

/** The ten code points the outside review found drawn zero-width yet accepted. */
const REPORTED = [0x034f, 0x17b4, 0x17b5, 0x180b, 0x206a, 0x206f, 0xfe0f, 0xe0041, 0x1d173, 0xfff9]

type Range = readonly [number, number]

const DEFAULT_IGNORABLE: readonly Range[] = [
  [0x00ad, 0x00ad],
  [0x034f, 0x034f],
  [0x061c, 0x061c],
  [0x115f, 0x1160],
  [0x17b4, 0x17b5],
  [0x180b, 0x180f],
  [0x200b, 0x200f],
  [0x202a, 0x202e],
  [0x2060, 0x206f],
  [0x3164, 0x3164],
  [0xfe00, 0xfe0f],
  [0xfeff, 0xfeff],
  [0xffa0, 0xffa0],
  [0xfff0, 0xfff8],
  [0x1bca0, 0x1bca3],
  [0x1d173, 0x1d17a],
  [0xe0000, 0xe0fff],
]

const FORMAT: readonly Range[] = [
  [0x00ad, 0x00ad],
  [0x0600, 0x0605],
  [0x061c, 0x061c],
  [0x06dd, 0x06dd],
  [0x070f, 0x070f],
  [0x08e2, 0x08e2],
  [0x180e, 0x180e],
  [0x200b, 0x200f],
  [0x202a, 0x202e],
  [0x2060, 0x2064],
  [0x2066, 0x206f],
  [0xfeff, 0xfeff],
  [0xfff9, 0xfffb],
  [0x110bd, 0x110bd],
  [0x110cd, 0x110cd],
  [0x13430, 0x13438],
  [0x1bca0, 0x1bca3],
  [0x1d173, 0x1d17a],
  [0xe0001, 0xe0001],
  [0xe0020, 0xe007f],
]

function codePoints(ranges: readonly Range[]): number[] {
  return ranges.flatMap(([from, to]) => Array.from({ length: to - from + 1 }, (_, index) => from + index))
}

const HIDDEN = [...new Set([...codePoints(DEFAULT_IGNORABLE), ...codePoints(FORMAT), 0xfffc])]
const hex = (codePoint: number) => `U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}`

// Text a reviewer reads as written: letters of several scripts, digits,
// punctuation, symbols, emoji without joiners or selectors, combining accents.
const VISIBLE = [
  ...'AZaz09 .,-–€$%()/:;!?',
  'ü',
  'é',
  'e\u0301',
  'ß',
  'ك',
  'ت',
  'ש',
  '日',
  '本',
  '한',
  '👍',
  '😀',
  '🇩🇪',
  '\n',
  '\t',
  '\u2800',
]

describe('every invisible code point is refused by the one displayed-text rule', () => {
  it('refuses the ten code points the review reported', () => {
    for (const codePoint of REPORTED) {
      expect(isDisplayedTextExact(`1${String.fromCodePoint(codePoint)}000`), hex(codePoint)).toBe(false)
    }
  })

  it('refuses every Default_Ignorable_Code_Point, every format character (Cf) and U+FFFC', () => {
    const accepted = HIDDEN.filter((codePoint) =>
      isDisplayedTextExact(`a${String.fromCodePoint(codePoint)}b`),
    )
    expect(accepted.map(hex)).toEqual([])
  })

  it('agrees with the runtime Unicode properties over every code point', () => {
    const property = /[\p{Default_Ignorable_Code_Point}\p{Cf}]/u
    const disagreeing: string[] = []
    for (let codePoint = 0; codePoint <= 0x10ffff; codePoint += 1) {
      if (codePoint >= 0xd800 && codePoint <= 0xdfff) continue
      const char = String.fromCodePoint(codePoint)
      const expected = !(property.test(char) || codePoint === 0xfffc)
      if (isDisplayedTextExact(char) !== expected) disagreeing.push(hex(codePoint))
    }
    expect(disagreeing).toEqual([])
  })

  it('accepts any text built from visible characters, and refuses it once one invisible is inside', () => {
    const visible = fc.array(fc.constantFrom(...VISIBLE), { maxLength: 40 }).map((parts) => parts.join(''))
    fc.assert(
      fc.property(visible, visible, fc.constantFrom(...HIDDEN), (before, after, codePoint) => {
        expect(isDisplayedTextExact(`${before}${after}`)).toBe(true)
        expect(isDisplayedTextExact(`${before}${String.fromCodePoint(codePoint)}${after}`)).toBe(false)
      }),
      { numRuns: 2_000 },
    )
  })
})

describe('client, approval step and service refuse them alike, naming the field', () => {
  // One reviewer-visible field per reported code point, so every layer is
  // checked on the fields a permit binds too.
  const FIELDS = [
    'question',
    'toolTarget',
    'actor',
    'environment',
    'toolName',
    'parameters.amount',
    'context',
    'agentName',
    'placeholder',
    'presentation.label',
  ] as const
  const bodyWith = (field: (typeof FIELDS)[number], text: string): Record<string, unknown> => {
    switch (field) {
      case 'question':
        return { question: `Refund ${text}?` }
      case 'parameters.amount':
        return { question: 'Refund?', parameters: { amount: text } }
      case 'placeholder':
        return { question: 'Why?', type: 'input', placeholder: text }
      case 'presentation.label':
        return { question: 'Refund?', presentation: { label: text, effect: 'Money leaves the account' } }
      default:
        return { question: 'Refund?', [field]: text }
    }
  }
  const cases = REPORTED.map((codePoint, index) => {
    const field = FIELDS[index % FIELDS.length] as (typeof FIELDS)[number]
    return [hex(codePoint), field, bodyWith(field, `1${String.fromCodePoint(codePoint)}000`)] as const
  })

  it.each(cases)('the service refuses %s in %s with 400 naming the field', async (_hex, field, body) => {
    const h = await fixture.start()
    const response = await h.api('POST', '/decisions', body)
    expect(response.status).toBe(400)
    expect(response.json.field).toBe(field)
  })

  it('the client refuses each before any request, naming the field', async () => {
    const h = await fixture.start()
    const counter = countingFetch()
    const client = createPusharyClient({
      baseUrl: h.server.baseUrl,
      apiKey: h.server.apiKey,
      fetch: counter.fetch,
    })
    for (const [name, field, body] of cases) {
      const error = await rejection(client.decisions.create(body as never))
      expect(isPusharyValidationError(error) && error.field, name).toBe(field)
    }
    expect(counter.count()).toBe(0)
  })

  it('refuses a risk that hides or reorders text at the service, the client and the approval step, naming presentation.risk', async () => {
    const presentation = { label: 'Refund', effect: 'Money leaves the account', risk: 'Low \u202Ehgih' }
    const h = await fixture.start()
    const response = await h.api('POST', '/decisions', { question: 'Refund?', presentation })
    expect(response.status).toBe(400)
    expect(response.json.field).toBe('presentation.risk')
    const counter = countingFetch()
    const client = createPusharyClient({
      baseUrl: h.server.baseUrl,
      apiKey: h.server.apiKey,
      fetch: counter.fetch,
    })
    const error = await rejection(client.decisions.create({ question: 'Refund?', presentation }))
    expect(isPusharyValidationError(error) && error.field).toBe('presentation.risk')
    expect(counter.count()).toBe(0)
    const stepError = thrown(() =>
      parsePusharyApprovalStepInput({
        operationId: 'refund:o1:v1',
        question: 'Refund?',
        externalId: 'customer_1',
        subject: { presentation },
      }),
    )
    expect(isPusharyValidationError(stepError) && stepError.field).toBe('subject.presentation.risk')
  })

  it('the approval step refuses each in the question and in every bound subject field', () => {
    const base = { operationId: 'refund:o1:v1', question: 'Refund?', externalId: 'customer_1' }
    for (const codePoint of REPORTED) {
      const text = `o-${String.fromCodePoint(codePoint)}1`
      for (const [field, change] of [
        ['question', { question: `Refund ${text}?` }],
        ['subject.toolTarget', { subject: { toolTarget: text } }],
        ['subject.actor', { subject: { actor: text } }],
        ['subject.environment', { subject: { environment: text } }],
        ['subject.parameters.order', { subject: { parameters: { order: text } } }],
      ] as const) {
        const error = thrown(() => parsePusharyApprovalStepInput({ ...base, ...change }))
        expect(isPusharyValidationError(error) && error.field, `${hex(codePoint)} in ${field}`).toBe(field)
      }
    }
  })
})

describe('folding a long value', () => {
  it('cuts on grapheme boundaries, never inside a surrogate pair, a flag or an accent', () => {
    const values = fc.array(fc.constantFrom(...VISIBLE), { minLength: 0, maxLength: 120 })
    fc.assert(
      fc.property(values, fc.integer({ min: 0, max: 130 }), (parts, count) => {
        const value = parts.join('')
        const { text, total } = graphemePrefix(value, count)
        expect(value.startsWith(text)).toBe(true)
        expect(/[\uD800-\uDFFF]/u.test(text)).toBe(false)
        const clusters = [...new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(value)]
        expect(total).toBe(clusters.length)
        expect(text).toBe(
          clusters
            .slice(0, count)
            .map((cluster) => cluster.segment)
            .join(''),
        )
      }),
      { numRuns: 1_000 },
    )
  })
})
