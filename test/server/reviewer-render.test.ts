import { describe, expect, it } from 'vitest'
import {
  formatMoney,
  formatParameter,
  formatQuantity,
  parseTimestamp,
} from '../../src/server/reviewer/format.js'
import { escapeHtml, html, unsafeRaw } from '../../src/server/reviewer/html.js'
import { renderDecisionCard, renderReviewPage } from '../../src/server/reviewer/render.js'
import type { StoredDecision } from '../../src/server/service-types.js'

function storedDecision(overrides: Partial<StoredDecision>): StoredDecision {
  return {
    decisionId: 'dec_render_1',
    status: 'pending',
    type: 'confirm',
    question: 'Refund order 1042?',
    options: null,
    placeholder: null,
    context: null,
    externalId: 'cust_a',
    agentName: 'Support agent',
    toolName: 'refund.create',
    toolTarget: null,
    actor: null,
    environment: null,
    presentation: null,
    parameters: null,
    callbackUrl: null,
    createdAt: '2030-01-02T03:00:00.000Z',
    answeredAt: null,
    expiresAt: '2030-01-02T04:05:00.000Z',
    value: null,
    answerSource: null,
    ...overrides,
  }
}

describe('html template', () => {
  it('escapes every interpolated string, including attribute quotes', () => {
    const evil = `"><script>alert('x')</script>&`
    expect(html`<p title="${evil}">${evil}</p>`.value).toBe(
      '<p title="&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;">&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;</p>',
    )
  })

  it('keeps nested fragments and arrays as markup and drops null, undefined and false', () => {
    const items = ['a<b', 'c'].map((item) => html`<li>${item}</li>`)
    expect(html`<ul>${items}</ul>${null}${undefined}${false}${0}`.value).toBe(
      '<ul><li>a&lt;b</li><li>c</li></ul>0',
    )
  })

  it('inserts trusted static markup only through unsafeRaw', () => {
    expect(html`${unsafeRaw('<b>x</b>')}${'<b>x</b>'}`.value).toBe('<b>x</b>&lt;b&gt;x&lt;/b&gt;')
    expect(escapeHtml('`&`')).toBe('&#96;&amp;&#96;')
  })
})

describe('money and value formats', () => {
  it('renders minor units as money with the currency’s own minor digits', () => {
    expect(formatMoney(4800, 'EUR')).toBe('€48.00')
    expect(formatMoney('4800', 'eur')).toBe('€48.00')
    expect(formatMoney(5, 'USD')).toBe('$0.05')
    expect(formatMoney(-1999, 'GBP')).toBe('-£19.99')
    expect(formatMoney(4800, 'JPY')).toBe('¥4,800')
    expect(formatMoney(12345, 'KWD')).toBe('KWD\u00a012.345')
  })

  it('keeps every digit of amounts beyond double precision', () => {
    expect(formatMoney('900719925474099312', 'EUR')).toBe('€9,007,199,254,740,993.12')
  })

  it('shows an amount verbatim with its code when the currency is unknown to Intl', () => {
    expect(formatMoney(4800, 'ZZZ1')).toBe('4800 ZZZ1')
  })

  it('renders quantities with units, timestamps in UTC and booleans as Yes/No', () => {
    expect(formatQuantity(1200, 'seats')).toBe('1,200 seats')
    expect(formatParameter(3, { kind: 'quantity' })).toBe('3')
    expect(formatParameter('2030-01-02T03:04:00Z', { kind: 'timestamp' })).toBe('Jan 2, 2030, 3:04 AM UTC')
    expect(parseTimestamp(1_893_553_440)?.toISOString()).toBe('2030-01-02T03:04:00.000Z')
    expect(parseTimestamp(1_893_553_440_000)?.toISOString()).toBe('2030-01-02T03:04:00.000Z')
    expect(formatParameter('not a date', { kind: 'timestamp' })).toBe('not a date')
    expect(formatParameter(true, { kind: 'boolean' })).toBe('Yes')
    expect(formatParameter('false', { kind: 'boolean' })).toBe('No')
    expect(formatParameter('<i>', { kind: 'text' })).toBe('<i>')
  })
})

describe('decision cards', () => {
  it('shows agent, question, risk and a changes table with money for a confirm', () => {
    const card = renderDecisionCard(
      storedDecision({
        presentation: {
          label: 'Refund',
          effect: 'Money leaves the merchant account',
          risk: 'high',
          changes: [
            { parameter: 'amount', label: 'Amount', format: { kind: 'currency', currency: 'EUR' } },
            { parameter: 'items', label: 'Items', format: { kind: 'quantity', unit: 'pcs' } },
            { parameter: 'restock', label: 'Restock', format: { kind: 'boolean' } },
          ],
        },
        parameters: { amount: 4800, items: 2, restock: false },
      }),
      { csrf: 'csrf-token', index: 7 },
    ).value
    expect(card).toContain('<span class="agent">Support agent</span>')
    expect(card).toContain('<span class="risk risk-high">High risk</span>')
    expect(card).toContain('<h2 id="q-7">Refund order 1042?</h2>')
    expect(card).toContain('<th scope="row">Amount</th><td>€48.00</td>')
    expect(card).toContain('<th scope="row">Items</th><td>2 pcs</td>')
    expect(card).toContain('<th scope="row">Restock</th><td>No</td>')
    expect(card).toContain('<button type="submit" name="answer" value="yes" class="approve">Approve</button>')
    expect(card).toContain('<button type="submit" name="answer" value="no" class="deny">Deny</button>')
    expect(card).toContain('<input type="hidden" name="csrf" value="csrf-token">')
    expect(card).toContain('action="/review/dec_render_1/answer"')
  })

  it('renders one escaped button per option and a text box with the placeholder', () => {
    const select = renderDecisionCard(
      storedDecision({ type: 'select', options: ['Ship <today>', 'Hold "for now"'] }),
      { csrf: 't', index: 1 },
    ).value
    expect(select).toContain(
      '<button type="submit" name="answer" value="Ship &lt;today&gt;">Ship &lt;today&gt;</button>',
    )
    expect(select).toContain(
      '<button type="submit" name="answer" value="Hold &quot;for now&quot;">Hold &quot;for now&quot;</button>',
    )
    expect(select).not.toContain('Approve')

    const input = renderDecisionCard(storedDecision({ type: 'input', placeholder: 'Reason "short"' }), {
      csrf: 't',
      index: 2,
    }).value
    expect(input).toContain('placeholder="Reason &quot;short&quot;"')
    expect(input).toContain('<button type="submit">Send</button>')
    expect(input).toContain('<label class="visually-hidden" for="a-2">Your answer</label>')
  })

  it('escapes a hostile question, agent name and decision id', () => {
    const card = renderDecisionCard(
      storedDecision({
        decisionId: 'x"/><script>1</script>',
        question: '<img src=x onerror=alert(1)>',
        agentName: '<b>bot</b>',
      }),
      { csrf: 't', index: 3 },
    ).value
    expect(card).not.toContain('<img')
    expect(card).not.toContain('<script>')
    expect(card).not.toContain('<b>bot')
    expect(card).toContain('action="/review/x%22%2F%3E%3Cscript%3E1%3C%2Fscript%3E/answer"')
  })

  it('shows the recorded outcome instead of buttons once a decision is answered', () => {
    const card = renderDecisionCard(storedDecision({ status: 'answered', value: 'no' }), {
      csrf: 't',
      index: 4,
    }).value
    expect(card).toContain('Denied.')
    expect(card).not.toContain('<button')
  })

  it('renders a mobile page with a viewport meta, the live list and an empty-state notice', () => {
    const page = renderReviewPage({ externalId: 'cust <a>', decisions: [], csrf: 't', nonce: 'n0nce' }).value
    expect(page).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">')
    expect(page).toContain('<style nonce="n0nce">')
    expect(page).toContain('<script nonce="n0nce">')
    expect(page).toContain('customer <strong>cust &lt;a&gt;</strong>')
    expect(page).toMatch(/<p id="empty" class="notice">No pending decisions/)
  })
})
