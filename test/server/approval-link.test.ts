/**
 * The fallback path on the local service: a customer who is named but has
 * no enrolled device reads `fallback`; a decision created with
 * `approvalUrl: true` returns a link a person opens in any browser and
 * answers once, through the same answer path as the API.
 */
import { describe, expect, it } from 'vitest'
import { serviceFixture } from './service-harness.js'
import { enrollDevice } from './support/devices.js'

const service = serviceFixture('approval-link')

const tap = (url: string, answer: string, headers: Record<string, string> = {}) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams({ answer }).toString(),
  })

describe('approval links for customers without a device', () => {
  it('reads push, fallback and unreachable as the contract defines them', async () => {
    const h = await service.start()
    await enrollDevice(h.client, 'with_phone')
    expect(await h.client.reachability('with_phone')).toMatchObject({
      deliverability: 'push',
      reachable: true,
    })
    expect(await h.client.reachability('no_phone')).toMatchObject({
      deliverability: 'fallback',
      reachable: false,
    })
    expect((await h.api('GET', '/reachability')).json).toMatchObject({ deliverability: 'unreachable' })
  })

  it('returns a link the person opens and approves once; the approval is then spendable as a permit', async () => {
    const h = await service.start()
    const created = await h.client.decisions.create({
      question: 'Refund EUR 48 on order o-1?',
      externalId: 'no_phone',
      approvalUrl: true,
      toolName: 'refund.create',
    })
    expect(created.reachable).toBe(false)
    const link = created.approvalUrl ?? ''
    expect(link.startsWith(`${h.server.publicUrl}/a/`)).toBe(true)

    const opened = await fetch(link)
    expect(opened.status).toBe(200)
    expect(await opened.text()).toContain('Refund EUR 48 on order o-1?')
    // Opening (or a link preview) answers nothing.
    expect(await h.client.decisions.get(created.decisionId)).toMatchObject({ status: 'pending' })

    const answered = await tap(link, 'yes')
    expect(answered.status).toBe(200)
    expect(await answered.text()).toContain('Approved.')
    expect(await h.client.decisions.get(created.decisionId)).toMatchObject({
      status: 'answered',
      value: 'yes',
    })
    expect((await tap(link, 'no')).status).toBe(409)
    expect(await h.client.decisions.get(created.decisionId)).toMatchObject({ value: 'yes' })

    expect(
      await h.client.consumeAuthorization({
        authorizationId: created.decisionId,
        toolName: 'refund.create',
        externalId: 'no_phone',
      }),
    ).toMatchObject({ status: 'permitted', authority: { kind: 'human', answerSource: 'reviewer' } })
  })

  it('refuses a cross-site answer, an unknown token and a link past its decision', async () => {
    const h = await service.start()
    const created = await h.client.decisions.create({
      question: 'Deploy?',
      externalId: 'no_phone',
      approvalUrl: true,
      expiresInSeconds: 1,
    })
    const link = created.approvalUrl ?? ''
    expect((await tap(link, 'yes', { 'sec-fetch-site': 'cross-site' })).status).toBe(403)
    expect((await fetch(`${h.server.publicUrl}/a/${'x'.repeat(32)}`)).status).toBe(410)
    expect(await h.client.decisions.get(created.decisionId)).toMatchObject({ status: 'pending' })
    await new Promise((resolve) => setTimeout(resolve, 1_200))
    expect((await fetch(link)).status).toBe(410)
    expect((await tap(link, 'yes')).status).toBe(410)
  })

  it('returns no link unless asked for one', async () => {
    const h = await service.start()
    const created = await h.client.decisions.create({ question: 'Deploy?', externalId: 'no_phone' })
    expect(created.approvalUrl).toBeUndefined()
  })
})
