/**
 * Receipts over loopback HTTP, on a service whose clock the test moves: a
 * receipt is taken while its permit is valid and within the documented
 * grace after it expired (`RECEIPT_GRACE_MS`), and refused after that, so a
 * stale or replayed report cannot rewrite what a long-dead permit did.
 */
import { describe, expect, it } from 'vitest'
import { PusharyApiError } from '../../src/pushary/errors.js'
import { PERMIT_TTL_MS, RECEIPT_GRACE_MS } from '../../src/server/permits.js'
import { type Harness, serviceFixture } from './service-harness.js'

const service = serviceFixture('receipt-window')

async function permitAt(h: Harness): Promise<{ permitId: string; decisionId: string }> {
  const created = await h.client.decisions.create({ question: 'Refund EUR 48?', toolName: 'refund.create' })
  await h.client.decisions.answer(created.decisionId, 'yes')
  const permit = await h.client.consumeAuthorization({
    authorizationId: created.decisionId,
    toolName: 'refund.create',
  })
  if (permit.status !== 'permitted') throw new Error(`expected a permit, got ${permit.status}`)
  return { permitId: permit.permitId, decisionId: created.decisionId }
}

describe('receipts', () => {
  it('refuses a receipt 24 hours after its permit expired', async () => {
    let nowMs = Date.parse('2030-01-02T03:04:05Z')
    const h = await service.start({ now: () => nowMs })
    const { permitId } = await permitAt(h)
    nowMs += PERMIT_TTL_MS + 24 * 60 * 60_000
    const late = h.client.recordReceipt(permitId, { outcome: 'succeeded', summary: 'refunded' })
    await expect(late).rejects.toBeInstanceOf(PusharyApiError)
    await expect(late).rejects.toMatchObject({ status: 409, code: 'permit_expired' })
  })

  it('takes a receipt while the permit is valid and within the grace after it expired', async () => {
    let nowMs = Date.parse('2030-01-02T03:04:05Z')
    const h = await service.start({ now: () => nowMs })
    const { permitId: valid } = await permitAt(h)
    const { permitId: inGrace } = await permitAt(h)
    const { permitId: justPast } = await permitAt(h)
    nowMs += PERMIT_TTL_MS - 1
    expect(await h.client.recordReceipt(valid, { outcome: 'succeeded' })).toEqual({
      executionState: 'succeeded',
    })
    nowMs += RECEIPT_GRACE_MS
    expect(await h.client.recordReceipt(inGrace, { outcome: 'failed' })).toEqual({ executionState: 'failed' })
    nowMs += 2
    await expect(h.client.recordReceipt(justPast, { outcome: 'succeeded' })).rejects.toMatchObject({
      status: 409,
      code: 'permit_expired',
    })
  })
})
