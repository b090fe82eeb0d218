/**
 * Issue 38, finding 3 at the service: a permit covers only what the person
 * was shown. A decision stored before the displayed-text rule refused
 * invisible characters (written here straight into its SQLite file, as an
 * older release would have kept it) holds a bound field no card can draw
 * exactly; the card marks the hidden character, and `consume` refuses the
 * approval with the hosted `refusal` and a typed `code` naming the field.
 */
import { createClient } from '@libsql/client'
import { describe, expect, it } from 'vitest'
import { type Harness, serviceFixture } from './service-harness.js'
import { enrollDevice, reviewGet } from './support/devices.js'

const service = serviceFixture('permits-shown')

const ACTION = {
  toolName: 'refund.create',
  toolTarget: 'order o-1',
  actor: 'support-agent',
  environment: 'production',
  parameters: { amountMinor: 4800, note: 'damaged' },
}

/** Rewrites a stored decision's column as an older release could have stored it. */
async function storeAsOlderRelease(h: Harness, decisionId: string, column: string, value: string) {
  const db = createClient({ url: `file:${h.dbPath}` })
  try {
    await db.execute({
      sql: `UPDATE decisions SET ${column} = ? WHERE decision_id = ?`,
      args: [value, decisionId],
    })
  } finally {
    db.close()
  }
}

describe('consume refuses what the approved decision did not show', () => {
  const cases = [
    ['toolTarget', 'tool_target', 'order o-1\uFE0F', { toolTarget: 'order o-1\uFE0F' }],
    ['actor', 'actor', 'support\u034F-agent', { actor: 'support\u034F-agent' }],
    ['environment', 'environment', 'prod\u{E0041}uction', { environment: 'prod\u{E0041}uction' }],
    [
      'parameters.note',
      'parameters',
      JSON.stringify({ amountMinor: 4800, note: 'dama\uFFF9ged' }),
      { parameters: { amountMinor: 4800, note: 'dama\uFFF9ged' } },
    ],
  ] as const

  it.each(cases)(
    'refuses an approval whose %s held an invisible character, naming the field',
    async (field, column, stored, requested) => {
      const h = await service.start()
      const created = await h.client.decisions.create({
        question: 'Refund EUR 48 on order o-1?',
        externalId: 'customer_1',
        ...ACTION,
      })
      await storeAsOlderRelease(h, created.decisionId, column, stored)

      // The card draws the hidden character as a visible marker, not as nothing.
      const device = await enrollDevice(h.client, 'customer_1')
      const page = await reviewGet(`${h.server.url}/review/${created.decisionId}`, device.cookie)
      expect(page.status).toBe(200)
      expect(page.text).toMatch(/⟦U\+[0-9A-F]{4,5}⟧/)

      await h.client.decisions.answer(created.decisionId, 'yes')
      const raw = await h.api('POST', '/authorizations/consume', {
        authorizationId: created.decisionId,
        externalId: 'customer_1',
        ...ACTION,
        ...requested,
      })
      expect(raw.status).toBe(409)
      expect(raw.json).toMatchObject({ refusal: 'not_authorized', code: 'bound_field_not_shown', field })
      expect(String(raw.json.error)).toContain(field)

      // The package's client reads it as a refusal: the action must not run.
      const read = await h.client.consumeAuthorization({
        authorizationId: created.decisionId,
        externalId: 'customer_1',
        ...ACTION,
        ...requested,
      })
      expect(read).toMatchObject({ status: 'refused', refusal: 'not_authorized' })
    },
  )

  it('still issues a permit for a decision whose every bound field was shown', async () => {
    const h = await service.start()
    const created = await h.client.decisions.create({
      question: 'Refund EUR 48 on order o-1?',
      externalId: 'customer_1',
      ...ACTION,
    })
    await h.client.decisions.answer(created.decisionId, 'yes')
    const permit = await h.client.consumeAuthorization({
      authorizationId: created.decisionId,
      externalId: 'customer_1',
      ...ACTION,
    })
    expect(permit.status).toBe('permitted')
  })
})
