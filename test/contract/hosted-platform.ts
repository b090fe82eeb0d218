/**
 * The hosted fake's permit (E10, E11) and bound-key (E12) routes, in the
 * contract's shapes only. Semantics are the minimum the wire needs: an
 * answered confirm with an affirmative value can be spent once, anything
 * else is `not_authorized`, a second spend is `already_consumed` with the
 * recorded execution state, and the first receipt wins. (The local service's
 * tests cover the full rules: action matching, expiry, bound-key scope.)
 */
import { randomBytes } from 'node:crypto'
import {
  contractErrorBodySchema,
  contractIssuedKeySchema,
  contractKeyListSchema,
  contractPermitSchema,
  contractReceiptSchema,
  contractRefusalSchema,
  contractRevokedKeySchema,
  SDK_AFFIRMATIVE,
  strictContract,
} from './contract-schemas.js'
import type { HostedDecision } from './hosted-shapes.js'

type Send = (
  status: number,
  body: unknown,
  schema: { safeParse(value: unknown): { success: boolean } },
) => void

interface Permit {
  permitId: string
  authorizationId: string
  executionState: 'running' | 'succeeded' | 'failed'
}

interface Key {
  keyPrefix: string
  name: string
  boundExternalId: string
  isActive: boolean
  createdAt: string
  expiresAt: string | null
}

export function createHostedPlatform(lookup: (id: string) => HostedDecision | undefined) {
  const permits = new Map<string, Permit>()
  const byAuthorization = new Map<string, Permit>()
  const keys: Key[] = []
  const refuse = (send: Send, status: number, body: Record<string, unknown>) =>
    send(status, body, contractRefusalSchema)

  return {
    permits,
    keys,
    consume(input: Record<string, unknown>, send: Send) {
      const id = typeof input.authorizationId === 'string' ? input.authorizationId : ''
      if (id === '' || typeof input.toolName !== 'string') {
        return send(400, { error: 'authorizationId and toolName are required.' }, contractErrorBodySchema)
      }
      const decision = lookup(id)
      const approved =
        decision !== undefined &&
        decision.status === 'answered' &&
        decision.type === 'confirm' &&
        SDK_AFFIRMATIVE.includes((decision.value ?? '').trim().toLowerCase())
      if (!approved) {
        return refuse(send, 403, { error: 'This authorization was not approved.', refusal: 'not_authorized' })
      }
      const prior = byAuthorization.get(id)
      if (prior) {
        return refuse(send, 409, {
          error: 'This authorization was already used.',
          refusal: 'already_consumed',
          executionState: prior.executionState,
        })
      }
      const permit: Permit = {
        permitId: `pmt_${randomBytes(6).toString('hex')}`,
        authorizationId: id,
        executionState: 'running',
      }
      permits.set(permit.permitId, permit)
      byAuthorization.set(id, permit)
      return send(
        200,
        {
          permitId: permit.permitId,
          authority: { kind: 'human', answeredAt: decision.answeredAt ?? new Date().toISOString() },
          expiresAt: new Date(Date.now() + 600_000).toISOString(),
        },
        strictContract(contractPermitSchema),
      )
    },
    receipt(permitId: string, input: Record<string, unknown>, send: Send) {
      const permit = permits.get(permitId)
      if (!permit) return send(404, { error: 'Permit not found.' }, contractErrorBodySchema)
      if (input.outcome !== 'succeeded' && input.outcome !== 'failed') {
        return send(400, { error: 'outcome must be succeeded or failed.' }, contractErrorBodySchema)
      }
      if (permit.executionState === 'running') permit.executionState = input.outcome
      return send(200, { executionState: permit.executionState }, strictContract(contractReceiptSchema))
    },
    issueKey(input: Record<string, unknown>, send: Send) {
      if (typeof input.externalId !== 'string') {
        return send(400, { error: 'An externalId is required.' }, contractErrorBodySchema)
      }
      const keyPrefix = `pk_${randomBytes(4).toString('hex')}`
      const seconds = typeof input.expiresInSeconds === 'number' ? input.expiresInSeconds : null
      const key: Key = {
        keyPrefix,
        name: typeof input.name === 'string' ? input.name : 'bound key',
        boundExternalId: input.externalId,
        isActive: true,
        createdAt: new Date().toISOString(),
        expiresAt: seconds === null ? null : new Date(Date.now() + seconds * 1000).toISOString(),
      }
      keys.push(key)
      return send(
        200,
        {
          apiKey: `${keyPrefix}.sk_${randomBytes(8).toString('hex')}`,
          keyPrefix,
          scope: 'bound',
          boundExternalId: key.boundExternalId,
          expiresAt: key.expiresAt,
        },
        strictContract(contractIssuedKeySchema),
      )
    },
    listKeys(send: Send) {
      return send(200, { keys: keys.map((key) => ({ ...key, lastUsedAt: null })) }, contractKeyListSchema)
    },
    revokeKey(keyPrefix: string, send: Send) {
      const key = keys.find((candidate) => candidate.keyPrefix === keyPrefix)
      const revoked = key?.isActive === true
      if (key) key.isActive = false
      return send(200, { keyPrefix, revoked }, strictContract(contractRevokedKeySchema))
    },
  }
}
