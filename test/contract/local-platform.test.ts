/**
 * The local service's platform routes speak the hosted wire: permits,
 * refusals, receipts, bound keys and the bound-key 403 validate against the
 * contract schemas (written from the contract, not from the client).
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { z } from 'zod/v4'
import { serviceFixture, tempDir } from '../server/service-harness.js'
import {
  contractAuthorizeSchema,
  contractDecisionResultSchema,
  contractErrorBodySchema,
  contractIssuedKeySchema,
  contractKeyListSchema,
  contractPermitSchema,
  contractReachabilitySchema,
  contractReceiptSchema,
  contractRefusalSchema,
  contractRevokedKeySchema,
} from './contract-schemas.js'

const service = serviceFixture('contract-platform')

function fits<T extends z.ZodType>(schema: T, body: unknown, what: string): z.infer<T> {
  const parsed = schema.safeParse(body)
  if (!parsed.success) {
    throw new Error(
      `${what} does not fit the contract: ${parsed.error.message}\nbody: ${JSON.stringify(body)}`,
    )
  }
  return parsed.data
}

describe('local service platform routes on the hosted wire', () => {
  it('answers E9-E11 with contract shapes: verdict, permit, refusal with executionState, receipt', async () => {
    const policyPath = join(tempDir('policy'), 'policy.json')
    writeFileSync(
      policyPath,
      JSON.stringify({ rules: [{ name: 'small-refunds', toolName: 'refund.create', effect: 'allow' }] }),
    )
    const h = await service.start({ policyPath })
    const verdict = fits(
      contractAuthorizeSchema,
      (await h.api('POST', '/authorize', { toolName: 'refund.create' })).json,
      'E9',
    )
    expect(verdict.verdict).toBe('allow')
    const byPolicy = await h.api('POST', '/authorizations/consume', {
      authorizationId: verdict.authorizationId,
      toolName: 'refund.create',
    })
    expect(byPolicy.status).toBe(200)
    expect(fits(contractPermitSchema, byPolicy.json, 'E10 policy').authority.kind).toBe('policy')

    const created = fits(
      contractDecisionResultSchema,
      (
        await h.api('POST', '/decisions', {
          question: 'Refund?',
          externalId: 'c1',
          toolName: 'refund.create',
        })
      ).json,
      'E1',
    )
    await h.api('POST', `/decisions/${created.decisionId}`, { answer: 'yes' })
    const action = { authorizationId: created.decisionId, toolName: 'refund.create', externalId: 'c1' }
    const permit = fits(
      contractPermitSchema,
      (await h.api('POST', '/authorizations/consume', action)).json,
      'E10',
    )
    expect(permit.authority.kind).toBe('human')
    const again = await h.api('POST', '/authorizations/consume', action)
    expect(again.status).toBeGreaterThanOrEqual(400)
    expect(fits(contractRefusalSchema, again.json, 'E10 refusal')).toMatchObject({
      refusal: 'already_consumed',
      executionState: 'running',
    })
    const receipt = await h.api('POST', `/authorizations/${permit.permitId}/receipt`, {
      outcome: 'failed',
      summary: 'declined',
    })
    expect(fits(contractReceiptSchema, receipt.json, 'E11')).toEqual({ executionState: 'failed' })
  })

  it('answers E12 and the bound-key 403 with contract shapes', async () => {
    const h = await service.start()
    const issued = fits(
      contractIssuedKeySchema,
      (await h.api('POST', '/keys', { externalId: 'c1', expiresInSeconds: 10 })).json,
      'POST /keys',
    )
    // Clamped to the 60 s minimum.
    expect(Date.parse(issued.expiresAt ?? '') - Date.now()).toBeGreaterThan(50_000)
    const listed = fits(contractKeyListSchema, (await h.api('GET', '/keys')).json, 'GET /keys')
    expect(listed.keys.map((key) => key.keyPrefix)).toEqual([issued.keyPrefix])
    const forbidden = await h.api('GET', '/webhook-secret', undefined, { key: issued.apiKey })
    expect(forbidden.status).toBe(403)
    fits(contractErrorBodySchema, forbidden.json, '403')
    expect(String(forbidden.json.error)).toMatch(/ /)
    fits(
      contractReachabilitySchema,
      (await h.api('GET', '/reachability?externalId=c1', undefined, { key: issued.apiKey })).json,
      'E8 with a bound key',
    )
    const revoked = await h.api('DELETE', `/keys/${issued.keyPrefix}`)
    expect(fits(contractRevokedKeySchema, revoked.json, 'DELETE /keys')).toEqual({
      keyPrefix: issued.keyPrefix,
      revoked: true,
    })
  })
})
