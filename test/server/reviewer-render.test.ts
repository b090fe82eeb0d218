import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPusharyClient, type PusharyClient } from '../../src/pushary/client.js'
import { createPusharyDevServer, type PusharyDevServer } from '../../src/server/dev-server.js'
import {
  formatMoney,
  formatParameter,
  formatQuantity,
  parseTimestamp,
} from '../../src/server/reviewer/format.js'
import { escapeHtml, html, unsafeRaw } from '../../src/server/reviewer/html.js'
import { renderDecisionCard, renderEnrollPage, renderReviewPage } from '../../src/server/reviewer/render.js'
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
    expect(page).toContain('You answer here as <strong>cust &lt;a&gt;</strong>')
    expect(page).toMatch(/<p id="empty" class="notice">No pending decisions/)
  })
})

describe('enrolment confirmation page', () => {
  it('escapes the customer ID and posts the one button back to the link', () => {
    const page = renderEnrollPage({ externalId: 'cust <b>"x"</b>', token: 'tok_A-1', nonce: 'n0nce' }).value
    expect(page).toContain('Link this phone to cust &lt;b&gt;&quot;x&quot;&lt;/b&gt;')
    expect(page).not.toContain('<b>"x"</b>')
    expect(page).toContain('<form method="post" action="/e/tok_A-1">')
    expect(page.match(/<button\b/g)).toHaveLength(1)
    expect(page).toMatch(/<button type="submit"[^>]*>Link this phone<\/button>\s*<\/div>\s*<\/form>/)
    expect(page).toContain('<style nonce="n0nce">')
    expect(page).toContain('name="viewport"')
  })
})

describe('reviewer routes on the real dev server', () => {
  let dir: string
  let server: PusharyDevServer
  let client: PusharyClient

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'pushary-reviewer-routes-'))
    server = await createPusharyDevServer({ dbPath: join(dir, 'dev.db'), port: 0 })
    client = createPusharyClient({ baseUrl: server.baseUrl, apiKey: server.apiKey })
  })

  afterAll(async () => {
    await server?.close()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  /** Opens the enrolment link like a phone would (GET the page, tap the button) and keeps the device cookie. */
  async function enroll(externalId: string): Promise<{ cookie: string; csrf: () => Promise<string> }> {
    const { universalLink } = await client.enroll(externalId)
    const shown = await fetch(universalLink, { redirect: 'manual' })
    expect(shown.status).toBe(200)
    await shown.body?.cancel()
    const response = await tapLinkThisPhone(universalLink)
    expect(response.status).toBe(303)
    expect(response.headers.get('location')).toBe('/review')
    const setCookie = response.headers.get('set-cookie') ?? ''
    const cookie = setCookie.split(';')[0] ?? ''
    expect(cookie).toMatch(/^pushary_device=[A-Za-z0-9_-]{32,}$/)
    return {
      cookie,
      async csrf() {
        const page = await (await fetch(`${server.url}/review`, { headers: { cookie } })).text()
        const match = /name="csrf" value="([^"]+)"/.exec(page)
        if (match?.[1] === undefined) throw new Error('no answer form on the review page')
        return match[1]
      },
    }
  }

  /** The form post the "Link this phone" button sends. */
  function tapLinkThisPhone(link: string, headers: Record<string, string> = {}): Promise<Response> {
    return fetch(link, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: '',
    })
  }

  function postAnswer(
    decisionId: string,
    body: Record<string, string>,
    headers: Record<string, string>,
  ): Promise<Response> {
    return fetch(`${server.url}/review/${encodeURIComponent(decisionId)}/answer`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(body).toString(),
    })
  }

  it('shows a confirmation page on GET without binding, so a link preview cannot burn the link', async () => {
    const externalId = 'cust <b>"preview"</b>'
    const { universalLink } = await client.enroll(externalId)
    for (const attempt of ['link preview', 'the person']) {
      const shown = await fetch(universalLink, { redirect: 'manual' })
      expect(shown.status, attempt).toBe(200)
      expect(shown.headers.get('set-cookie'), attempt).toBeNull()
      expect(shown.headers.get('cache-control')).toBe('no-store')
      expect(shown.headers.get('x-frame-options')).toBe('DENY')
      const csp = shown.headers.get('content-security-policy') ?? ''
      const nonce = /style-src 'nonce-([^']+)'/.exec(csp)?.[1]
      expect(csp).toContain("form-action 'self'")
      const body = await shown.text()
      expect(body).toContain(`<style nonce="${nonce}">`)
      expect(body).toContain('Link this phone to cust &lt;b&gt;&quot;preview&quot;&lt;/b&gt;')
      expect(body).toContain(`<form method="post" action="${new URL(universalLink).pathname}">`)
      expect(body).toMatch(/<button type="submit"[^>]*>Link this phone<\/button>/)
    }
    expect((await client.reachability(externalId)).deviceCount).toBe(0)

    const linked = await tapLinkThisPhone(universalLink, { 'sec-fetch-site': 'same-origin', origin: 'null' })
    expect(linked.status).toBe(303)
    expect(linked.headers.get('location')).toBe('/review')
    expect((await client.reachability(externalId)).deviceCount).toBe(1)
  })

  it('binds on the POST with an HttpOnly, SameSite=Lax cookie and answers 410 to a second POST or a later GET', async () => {
    const { universalLink } = await client.enroll('cust_cookie')
    const first = await tapLinkThisPhone(universalLink)
    expect(first.status).toBe(303)
    expect(first.headers.get('cache-control')).toBe('no-store')
    const setCookie = first.headers.get('set-cookie') ?? ''
    expect(setCookie).toMatch(/HttpOnly/)
    expect(setCookie).toMatch(/SameSite=Lax/)
    expect(setCookie).toMatch(/Path=\//)
    expect(setCookie).not.toMatch(/Secure/)

    const again = await tapLinkThisPhone(universalLink)
    expect(again.status).toBe(410)
    expect(again.headers.get('set-cookie')).toBeNull()
    expect(await again.text()).toContain('expired or was already used')
    const later = await fetch(universalLink, { redirect: 'manual' })
    expect(later.status).toBe(410)
    expect(later.headers.get('cache-control')).toBe('no-store')
    expect(await later.text()).toContain('expired or was already used')
    expect((await client.reachability('cust_cookie')).deviceCount).toBe(1)
    expect((await fetch(`${server.url}/e/not-a-real-token`, { redirect: 'manual' })).status).toBe(410)
    expect((await tapLinkThisPhone(`${server.url}/e/not-a-real-token`)).status).toBe(410)
  })

  it('refuses a cross-site enrolment post without consuming the link', async () => {
    const { universalLink } = await client.enroll('cust_cross')
    const crossSite: Array<Record<string, string>> = [
      { 'sec-fetch-site': 'cross-site' },
      { origin: 'https://evil.example' },
    ]
    for (const headers of crossSite) {
      const refused = await tapLinkThisPhone(universalLink, headers)
      expect(refused.status, JSON.stringify(headers)).toBe(403)
      expect(refused.headers.get('set-cookie')).toBeNull()
    }
    expect((await client.reachability('cust_cross')).deviceCount).toBe(0)
    expect((await fetch(universalLink, { redirect: 'manual' })).status).toBe(200)
    const linked = await tapLinkThisPhone(universalLink)
    expect(linked.status).toBe(303)
    expect((await client.reachability('cust_cross')).deviceCount).toBe(1)
  })

  it('marks the device cookie Secure when the public URL is https', async () => {
    const secureDir = mkdtempSync(join(tmpdir(), 'pushary-reviewer-secure-'))
    const secure = await createPusharyDevServer({
      dbPath: join(secureDir, 'dev.db'),
      port: 0,
      publicUrl: 'https://review.example.test',
    })
    try {
      const secureClient = createPusharyClient({ baseUrl: secure.baseUrl, apiKey: secure.apiKey })
      const { universalLink } = await secureClient.enroll('cust_secure')
      expect(universalLink.startsWith('https://review.example.test/e/')).toBe(true)
      const response = await tapLinkThisPhone(`${secure.url}${new URL(universalLink).pathname}`)
      expect(response.status).toBe(303)
      expect(response.headers.get('set-cookie')).toMatch(/; Secure/)
    } finally {
      await secure.close()
      rmSync(secureDir, { recursive: true, force: true })
    }
  })

  it('answers 401 with enrolment instructions when the device has no or an unknown cookie', async () => {
    const none = await fetch(`${server.url}/review`)
    expect(none.status).toBe(401)
    expect(await none.text()).toContain('Open the enrollment link')
    const unknown = await fetch(`${server.url}/review/list`, {
      headers: { cookie: 'pushary_device=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' },
    })
    expect(unknown.status).toBe(401)
    const json = await fetch(`${server.url}/review/x/answer`, {
      method: 'POST',
      headers: { accept: 'application/json' },
    })
    expect(json.status).toBe(401)
    expect(await json.json()).toMatchObject({ status: 'not_enrolled' })
  })

  it('lists only the device’s own customer’s decisions and refuses another customer’s with 403', async () => {
    const a = await enroll('cust_route_a')
    const b = await enroll('cust_route_b')
    const mine = await client.decisions.create({ externalId: 'cust_route_a', question: 'Refund <b>48</b>?' })
    const theirs = await client.decisions.create({ externalId: 'cust_route_b', question: 'Delete B’s data?' })

    const list = await (await fetch(`${server.url}/review/list`, { headers: { cookie: a.cookie } })).text()
    expect(list).toContain('Refund &lt;b&gt;48&lt;/b&gt;?')
    expect(list).not.toContain('Delete B')

    const page = await fetch(`${server.url}/review/${theirs.decisionId}`, { headers: { cookie: a.cookie } })
    expect(page.status).toBe(403)
    expect(await page.text()).not.toContain('Delete B')
    expect((await fetch(`${server.url}/review/dec_missing`, { headers: { cookie: a.cookie } })).status).toBe(
      404,
    )

    const own = await fetch(`${server.url}/review/${mine.decisionId}`, { headers: { cookie: a.cookie } })
    expect(own.status).toBe(200)
    expect(own.headers.get('content-security-policy')).toContain("script-src 'nonce-")
    expect(own.headers.get('cache-control')).toBe('no-store')

    const stolen = await postAnswer(
      theirs.decisionId,
      { answer: 'yes', csrf: await a.csrf() },
      { cookie: a.cookie, accept: 'application/json' },
    )
    expect(stolen.status).toBe(403)
    expect(await client.decisions.get(theirs.decisionId)).toMatchObject({ status: 'pending', value: null })
    await b.csrf()
  })

  it('refuses cross-site and token-less answer posts before answering', async () => {
    const a = await enroll('cust_csrf')
    const { decisionId } = await client.decisions.create({ externalId: 'cust_csrf', question: 'Ship it?' })
    const csrf = await a.csrf()

    const crossSite = await postAnswer(
      decisionId,
      { answer: 'yes', csrf },
      { cookie: a.cookie, 'sec-fetch-site': 'cross-site' },
    )
    expect(crossSite.status).toBe(403)
    const foreignOrigin = await postAnswer(
      decisionId,
      { answer: 'yes', csrf },
      { cookie: a.cookie, origin: 'https://evil.example' },
    )
    expect(foreignOrigin.status).toBe(403)
    const noToken = await postAnswer(decisionId, { answer: 'yes' }, { cookie: a.cookie })
    expect(noToken.status).toBe(403)
    const wrongToken = await postAnswer(decisionId, { answer: 'yes', csrf: `${csrf}x` }, { cookie: a.cookie })
    expect(wrongToken.status).toBe(403)
    expect(await client.decisions.get(decisionId)).toMatchObject({ status: 'pending' })

    const sameOrigin = await fetch(`${server.url}/review/${decisionId}/answer`, {
      method: 'POST',
      headers: {
        cookie: a.cookie,
        origin: server.url,
        'content-type': 'application/json',
        accept: 'application/json',
      },
      body: JSON.stringify({ answer: 'no' }),
    })
    expect(sameOrigin.status).toBe(200)
    expect(await sameOrigin.json()).toMatchObject({ status: 'answered', value: 'no', message: 'Denied.' })
  })

  it('records a form answer, redirects to the outcome and answers 409 to a second tap', async () => {
    const a = await enroll('cust_form')
    const { decisionId } = await client.decisions.create({
      externalId: 'cust_form',
      question: 'Pick a plan',
      type: 'select',
      options: ['Basic', 'Pro'],
    })
    const csrf = await a.csrf()
    const invalid = await postAnswer(decisionId, { answer: 'Enterprise', csrf }, { cookie: a.cookie })
    expect(invalid.status).toBe(400)
    const empty = await postAnswer(decisionId, { answer: '  ', csrf }, { cookie: a.cookie })
    expect(empty.status).toBe(400)

    const answered = await postAnswer(decisionId, { answer: 'Pro', csrf }, { cookie: a.cookie })
    expect(answered.status).toBe(303)
    expect(answered.headers.get('location')).toBe(`/review/${decisionId}`)
    const outcome = await (
      await fetch(`${server.url}/review/${decisionId}`, { headers: { cookie: a.cookie } })
    ).text()
    expect(outcome).toContain('Chose “Pro”.')
    expect(await client.decisions.get(decisionId)).toMatchObject({ status: 'answered', value: 'Pro' })

    const second = await postAnswer(decisionId, { answer: 'Basic', csrf }, { cookie: a.cookie })
    expect(second.status).toBe(409)
    expect(await client.decisions.get(decisionId)).toMatchObject({ value: 'Pro' })
  })

  it('streams an event for the device’s own customer only', async () => {
    const a = await enroll('cust_sse_a')
    const controller = new AbortController()
    const response = await fetch(`${server.url}/review/events`, {
      headers: { cookie: a.cookie, accept: 'text/event-stream' },
      signal: controller.signal,
    })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toContain('text/event-stream')
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
    let buffer = ''
    const nextEvent = async (): Promise<{ event: string; data: string }> => {
      for (;;) {
        const end = buffer.indexOf('\n\n')
        if (end >= 0) {
          const frame = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          if (frame.startsWith(':')) continue
          const event = /^event: (.*)$/m.exec(frame)?.[1] ?? 'message'
          const data = /^data: (.*)$/m.exec(frame)?.[1] ?? ''
          return { event, data }
        }
        const { value, done } = await reader.read()
        if (done) throw new Error('event stream ended')
        buffer += value
      }
    }
    try {
      expect((await nextEvent()).event).toBe('ready')
      await client.decisions.create({ externalId: 'cust_sse_b', question: 'Not for A' })
      const mine = await client.decisions.create({ externalId: 'cust_sse_a', question: 'For A' })
      const event = await nextEvent()
      expect(event.event).toBe('decision')
      expect(JSON.parse(event.data)).toEqual({ decisionId: mine.decisionId, status: 'pending' })
    } finally {
      controller.abort()
      await reader.cancel().catch(() => undefined)
    }
  })
})
