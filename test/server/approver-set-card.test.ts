/**
 * Issue 41, item 4 on the local reviewer page, over loopback HTTP with
 * enrolled devices: a member of an approvers' set sees how the set stands
 * (counted by the service from every decision sharing the set key), the
 * count reaches other members' open pages as an event, and a question
 * withdrawn because the set settled says why.
 */
import { pathToFileURL } from 'node:url'
import { createClient } from '@libsql/client'
import { describe, expect, it } from 'vitest'
import { createPusharyClient } from '../../src/pushary/client.js'
import { approverSetOf } from '../../src/server/approver-sets.js'
import { describeOutcome } from '../../src/server/reviewer/render.js'
import type { StoredDecision } from '../../src/server/service-types.js'
import { approverSetGroupKey } from '../../src/steps/workflow-binding.js'
import { type Harness, serviceFixture } from './service-harness.js'
import { enrollDevice, reviewGet } from './support/devices.js'

const service = serviceFixture('approver-set-card')

/** A member's context as the package writes it (canonical JSON, set key and required count). */
function memberContext(runId: string, externalId: string, required: number, veto?: boolean): string {
  const key = approverSetGroupKey({ workflowId: 'payment', runId, stepId: 'approve' })
  return JSON.stringify({
    approverSet: key,
    approversRequired: required,
    ...(veto === undefined ? {} : { approversVeto: veto }),
    externalId,
    operationId: 'pay:1',
    pushary: 'workflow-step',
    questionHash: 'f'.repeat(64),
    runId,
    stepId: 'approve',
    version: 1,
    workflowId: 'payment',
  })
}

/** Asks `names` one decision each in one set; returns their IDs by name. */
async function askSet(h: Harness, runId: string, names: readonly string[], required: number, veto?: boolean) {
  const ids = new Map<string, string>()
  for (const name of names) {
    const made = await h.client.decisions.create({
      question: 'Pay EUR 12,000 to ACME?',
      externalId: name,
      context: memberContext(runId, name, required, veto),
      // The card parameters the package adds to each member.
      parameters: {
        invoice: 'INV-2041',
        'Approvals needed': `${required} of ${names.length}, one denial declines`,
        'Also asked': names.filter((other) => other !== name).join(', '),
      },
    })
    ids.set(name, made.decisionId)
  }
  return (name: string) => ids.get(name) as string
}

function decoded(text: string | undefined): string | null {
  return text === undefined ? null : text.replaceAll('&#39;', "'").replaceAll('&amp;', '&')
}

/** The text of the set line on a page, or null when it has none. */
function setLine(page: string): string | null {
  return decoded(/<p class="approvers"[^>]*>(.*?)<\/p>/.exec(page)?.[1]?.replace(/<[^>]+>/g, ''))
}

function outcome(page: string): string | null {
  return decoded(/<p class="outcome" role="status">([^<]*)<\/p>/.exec(page)?.[1])
}

describe("an approvers' set on the reviewer page", () => {
  it('shows each member how many approved, were asked and answered, live from the service', async () => {
    const h = await service.start()
    const id = await askSet(h, 'run-count', ['alice_c', 'bob_c', 'carol_c'], 2)
    const alice = await enrollDevice(h.client, 'alice_c')
    const list = () => reviewGet(`${h.server.url}/review/list`, alice.cookie)

    const first = await reviewGet(`${h.server.url}/review`, alice.cookie)
    expect(first.status).toBe(200)
    expect(setLine(first.text)).toBe('0 of 2 approvals so far · 3 asked · 0 answered')
    // The set's card parameters sit with the count, not in the action's input.
    const section = /<section class="input approver-set" aria-label="Approvers">.*?<\/section>/.exec(
      first.text,
    )?.[0]
    expect(section).toContain('<dt>Approvals needed</dt><dd>2 of 3, one denial declines</dd>')
    expect(section).toContain('<dt>Also asked</dt><dd>bob_c, carol_c</dd>')
    const input = /<section class="input" aria-label="Input">.*?<\/section>/.exec(first.text)?.[0]
    expect(input).toContain('<dt>Invoice</dt><dd>INV-2041</dd>')
    expect(input).not.toContain('Approvals needed')

    // The package's approval rule: a relayed "OK" approves as a tapped "yes" does.
    await h.client.decisions.answer(id('bob_c'), 'OK')
    expect(setLine((await list()).text)).toBe('1 of 2 approvals so far · 3 asked · 1 answered')

    await h.client.decisions.answer(id('carol_c'), 'no')
    expect(setLine((await list()).text)).toBe('1 of 2 approvals so far · 3 asked · 2 answered · 1 denied')

    // Her own page and its card fragment say the same; a lone decision has no line.
    expect(setLine((await reviewGet(`${h.server.url}/review/${id('alice_c')}`, alice.cookie)).text)).toBe(
      '1 of 2 approvals so far · 3 asked · 2 answered · 1 denied',
    )
    const card = await reviewGet(`${h.server.url}/review/${id('alice_c')}/card`, alice.cookie)
    expect(card.status).toBe(200)
    expect(card.text).toMatch(/^<article class="decision" data-decision-id="dec_\w+" data-status="pending"/)
    expect(setLine(card.text)).toBe('1 of 2 approvals so far · 3 asked · 2 answered · 1 denied')
    const lone = await h.client.decisions.create({ question: 'Ship?', externalId: 'alice_c' })
    const lonePage = await reviewGet(`${h.server.url}/review/${lone.decisionId}`, alice.cookie)
    expect(lonePage.text).not.toContain('class="approvers"')
    expect(lonePage.text).not.toContain('<script')
    // Another member's card is still not hers.
    expect((await reviewGet(`${h.server.url}/review/${id('bob_c')}/card`, alice.cookie)).status).toBe(403)

    await h.client.decisions.answer(id('alice_c'), 'yes')
    const answered = await reviewGet(`${h.server.url}/review/${id('alice_c')}`, alice.cookie)
    expect(outcome(answered.text)).toBe('Approved.')
    expect(setLine(answered.text)).toBe('2 of 2 approvals · 3 asked · 3 answered · 1 denied')
  })

  it("tells a withdrawn member that the set settled and how, and keeps today's text outside a set", async () => {
    const h = await service.start()
    const carolPage = async (cookie: string, decisionId: string) =>
      outcome((await reviewGet(`${h.server.url}/review/${decisionId}`, cookie)).text)

    const carol = await enrollDevice(h.client, 'carol_w')
    /** Alice and bob answer, carol's question is withdrawn: what carol's page says. */
    const withdrawnAfter = async (runId: string, answers: [string, string], veto?: boolean) => {
      const id = await askSet(h, runId, ['alice_w', 'bob_w', 'carol_w'], 2, veto)
      await h.client.decisions.answer(id('alice_w'), answers[0])
      await h.client.decisions.answer(id('bob_w'), answers[1])
      await h.client.decisions.cancel(id('carol_w'))
      return carolPage(carol.cookie, id('carol_w'))
    }

    expect(await withdrawnAfter('run-approved', ['yes', 'yes'])).toBe(
      "Withdrawn: the approvers' set was settled (2 of 2 approvals).",
    )
    expect(await withdrawnAfter('run-vetoed', ['yes', 'no'])).toBe(
      "Withdrawn: the approvers' set was settled (declined by a denial).",
    )
    // Without veto a denial declines only once approval cannot be reached.
    expect(await withdrawnAfter('run-no-veto', ['no', 'no'], false)).toBe(
      "Withdrawn: the approvers' set was settled (declined: too few approvals possible, 2 denied).",
    )
    // One approval and one denial without veto: carol could still have made two, so the set did not withdraw her.
    expect(await withdrawnAfter('run-still-open', ['yes', 'no'], false)).toBe('Cancelled by the application.')
    // The same answers with veto (as the package writes it for a veto set): the denial settled it.
    expect(await withdrawnAfter('run-with-veto', ['yes', 'no'], true)).toBe(
      "Withdrawn: the approvers' set was settled (declined by a denial).",
    )

    // Withdrawn before anyone answered: the answers settle nothing, so nothing is claimed.
    const unanswered = await askSet(h, 'run-unanswered', ['alice_w', 'carol_w'], 2)
    await h.client.decisions.cancel(unanswered('carol_w'))
    expect(await carolPage(carol.cookie, unanswered('carol_w'))).toBe('Cancelled by the application.')

    const alone = await h.client.decisions.create({ question: 'Ship?', externalId: 'carol_w' })
    await h.client.decisions.cancel(alone.decisionId)
    expect(await carolPage(carol.cookie, alone.decisionId)).toBe('Cancelled by the application.')
  })

  it('counts only decisions asked by the key that asked the member: a bound key cannot pad the count', async () => {
    const h = await service.start()
    const id = await askSet(h, 'run-padded', ['alice_p', 'bob_p', 'carol_p'], 2)
    const issued = await h.client.keys.issue({ externalId: 'carol_p', name: 'carol bot' })
    const bound = createPusharyClient({ apiKey: issued.apiKey, baseUrl: h.server.baseUrl })
    const forged = await bound.decisions.create({
      question: 'Pay EUR 12,000 to ACME?',
      externalId: 'carol_p',
      context: memberContext('run-padded', 'carol_p', 2),
    })
    const carol = await enrollDevice(h.client, 'carol_p')
    const page = await reviewGet(`${h.server.url}/review/list`, carol.cookie)
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.text)?.[1] as string
    const tapped = await fetch(`${h.server.url}/review/${forged.decisionId}/answer`, {
      method: 'POST',
      headers: {
        cookie: carol.cookie,
        accept: 'application/json',
        'content-type': 'application/x-www-form-urlencoded',
        origin: h.server.url,
      },
      body: new URLSearchParams({ answer: 'yes', csrf }).toString(),
    })
    expect(tapped.status).toBe(200)
    const bob = await enrollDevice(h.client, 'bob_p')
    const bobs = await reviewGet(`${h.server.url}/review/${id('bob_p')}`, bob.cookie)
    expect(setLine(bobs.text)).toBe('0 of 2 approvals so far · 3 asked · 0 answered')
  })

  it('reads contexts leniently: free text naming approverSet, another shape or a bad count draws no line and breaks nothing', async () => {
    const h = await service.start()
    const key = approverSetGroupKey({ workflowId: 'w', runId: 'r', stepId: 's' })
    const contexts = [
      'note "approverSet": {not json',
      JSON.stringify({ pushary: 'agent-review', approverSet: key, approversRequired: 2 }),
      JSON.stringify({ pushary: 'workflow-step', approverSet: key, approversRequired: 0 }),
      JSON.stringify({ pushary: 'workflow-step', approverSet: 'a_short', approversRequired: 2 }),
    ]
    for (const context of contexts) {
      await h.client.decisions.create({ question: 'Odd context?', externalId: 'dana_l', context })
    }
    const dana = await enrollDevice(h.client, 'dana_l')
    const page = await reviewGet(`${h.server.url}/review`, dana.cookie)
    expect(page.status).toBe(200)
    expect(page.text.match(/Odd context\?/g)).toHaveLength(4)
    expect(page.text).not.toContain('class="approvers"')
    // A veto that is not a boolean says nothing: read as unknown, never as "no veto".
    const ref = { pushary: 'workflow-step', approverSet: key, approversRequired: 2 }
    for (const veto of ['false', 0, null, { no: true }]) {
      expect(approverSetOf(JSON.stringify({ ...ref, approversVeto: veto }))).toEqual({ key, required: 2 })
    }
    expect(approverSetOf(JSON.stringify({ ...ref, approversVeto: false }))).toEqual({
      key,
      required: 2,
      veto: false,
    })
  })

  it("finds a set's members through the index, not by reading every decision", async () => {
    const h = await service.start()
    const db = createClient({ url: pathToFileURL(h.dbPath).href })
    try {
      const plan = await db.execute({
        sql: `EXPLAIN QUERY PLAN SELECT decision_id FROM decisions
              WHERE instr(context, '"approverSet":') > 0 AND json_valid(context)
                AND json_extract(context, '$.approverSet') = ?`,
        args: ['a_0'],
      })
      expect(plan.rows.map((row) => String(row.detail)).join('\n')).toMatch(
        /USING INDEX decisions_approver_set/,
      )
    } finally {
      db.close()
    }
  })
})

describe('the outcome line', () => {
  it('reads a relayed confirm answer by the package rule, as the set counts it', () => {
    const answered = (value: string) =>
      describeOutcome({ status: 'answered', type: 'confirm', value } as StoredDecision)
    expect(answered(' OK ')).toBe('Approved.')
    expect(answered('approve')).toBe('Approved.')
    expect(answered('yes')).toBe('Approved.')
    expect(answered('no')).toBe('Denied.')
    expect(answered('maybe')).toBe('Denied.')
  })
})

describe("the event stream of a member's device", () => {
  type Chunk = ReadableStreamReadResult<Uint8Array>
  // A read left pending by a timeout is kept for the next call, so no chunk is lost.
  const pendingReads = new WeakMap<ReadableStreamDefaultReader<Uint8Array>, Promise<Chunk>>()

  async function readFor(reader: ReadableStreamDefaultReader<Uint8Array>, ms: number): Promise<string> {
    const decoder = new TextDecoder()
    let text = ''
    const deadline = Date.now() + ms
    for (;;) {
      const left = deadline - Date.now()
      if (left <= 0) return text
      const read = pendingReads.get(reader) ?? reader.read()
      pendingReads.set(reader, read)
      const next = await Promise.race([
        read,
        new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), left)),
      ])
      if (next === 'timeout') return text
      pendingReads.delete(reader)
      if (next.done) return text
      text += decoder.decode(next.value, { stream: true })
    }
  }

  async function openStream(h: Harness, cookie: string, controller: AbortController) {
    const response = await fetch(`${h.server.url}/review/events`, {
      headers: { cookie, accept: 'text/event-stream' },
      signal: controller.signal,
    })
    expect(response.status).toBe(200)
    const reader = (response.body as ReadableStream<Uint8Array>).getReader()
    expect(await readFor(reader, 500)).toContain('event: ready')
    return reader
  }

  it("tells alice's page that bob answered, naming no decision, and tells nobody outside the set", async () => {
    const h = await service.start()
    const id = await askSet(h, 'run-events', ['alice_e', 'bob_e'], 2)
    const alice = await enrollDevice(h.client, 'alice_e')
    const outsider = await enrollDevice(h.client, 'erin_e')
    const controller = new AbortController()
    try {
      const aliceStream = await openStream(h, alice.cookie, controller)
      const outsiderStream = await openStream(h, outsider.cookie, controller)
      await h.client.decisions.answer(id('bob_e'), 'yes')
      const seen = await readFor(aliceStream, 1_500)
      expect(seen).toContain('event: approvers\ndata: {}')
      expect(seen).not.toContain(id('bob_e'))
      expect(await readFor(outsiderStream, 500)).not.toContain('event:')
    } finally {
      controller.abort()
    }
  })
})
