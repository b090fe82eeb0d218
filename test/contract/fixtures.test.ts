/**
 * The fixtures and the hosted fake against the contract schemas, with no
 * package code involved: if these fail, the contract tests themselves are
 * wrong, not the client. Fixtures named `odd-*` step outside the contract on
 * purpose (an unknown status or type) and are checked for that instead.
 */
import { describe, expect, it } from 'vitest'
import type { z } from 'zod/v4'
import {
  contractAnswerResultSchema,
  contractAuthorizeSchema,
  contractCallbackSchema,
  contractCancelResultSchema,
  contractDecisionListSchema,
  contractDecisionResultSchema,
  contractDecisionSchema,
  contractEnrollSchema,
  contractErrorBodySchema,
  contractIssuedKeySchema,
  contractKeyListSchema,
  contractPermitSchema,
  contractReachabilitySchema,
  contractReceiptSchema,
  contractRefusalSchema,
  contractRevokedKeySchema,
  contractWebhookSecretSchema,
} from './contract-schemas.js'
import callback from './fixtures/callback.json' with { type: 'json' }
import create from './fixtures/e1-create-decision.json' with { type: 'json' }
import get from './fixtures/e2-get-decision.json' with { type: 'json' }
import answer from './fixtures/e3-answer.json' with { type: 'json' }
import cancel from './fixtures/e4-cancel.json' with { type: 'json' }
import list from './fixtures/e5-list.json' with { type: 'json' }
import secret from './fixtures/e6-webhook-secret.json' with { type: 'json' }
import enroll from './fixtures/e7-enroll.json' with { type: 'json' }
import reach from './fixtures/e8-reachability.json' with { type: 'json' }
import authorize from './fixtures/e9-authorize.json' with { type: 'json' }
import consume from './fixtures/e10-consume.json' with { type: 'json' }
import refusals from './fixtures/e10-refusals.json' with { type: 'json' }
import receipt from './fixtures/e11-receipt.json' with { type: 'json' }
import keys from './fixtures/e12-keys.json' with { type: 'json' }
import errors from './fixtures/errors.json' with { type: 'json' }
import { startHostedFake } from './hosted-fake.js'

const files: [string, Record<string, unknown>, z.ZodType][] = [
  ['E1 create', create, contractDecisionResultSchema],
  ['E2 get', get, contractDecisionSchema],
  ['E3 answer', answer, contractAnswerResultSchema],
  ['E4 cancel', cancel, contractCancelResultSchema],
  ['E5 list', list, contractDecisionListSchema],
  ['E6 webhook secret', secret, contractWebhookSecretSchema],
  ['E7 enroll', enroll, contractEnrollSchema],
  ['E8 reachability', reach, contractReachabilitySchema],
  ['E9 authorize', authorize, contractAuthorizeSchema],
  ['E10 consume', consume, contractPermitSchema],
  ['E11 receipt', receipt, contractReceiptSchema],
  ['callback', callback, contractCallbackSchema],
]

describe('contract fixtures', () => {
  it.each(files)('%s fixtures fit the contract, and only the odd ones do not', (_name, fixtures, schema) => {
    for (const [key, body] of Object.entries(fixtures)) {
      expect(schema.safeParse(body).success, key).toBe(!key.startsWith('odd-'))
    }
  })

  it('E10 refusals are error bodies naming a known refusal, and only the odd one is unknown', () => {
    for (const [key, { status, body }] of Object.entries(refusals)) {
      expect(status, key).toBeGreaterThanOrEqual(400)
      expect(contractErrorBodySchema.safeParse(body).success, key).toBe(true)
      expect(contractRefusalSchema.safeParse(body).success, key).toBe(!key.startsWith('odd-'))
    }
  })

  it('E12 key fixtures fit the issue, list and revoke shapes', () => {
    expect(contractIssuedKeySchema.safeParse(keys.issue).success).toBe(true)
    expect(contractIssuedKeySchema.safeParse(keys['issue-no-expiry']).success).toBe(true)
    expect(contractKeyListSchema.safeParse(keys.list).success).toBe(true)
    expect(contractRevokedKeySchema.safeParse(keys.revoke).success).toBe(true)
    expect(contractRevokedKeySchema.safeParse(keys['revoke-unknown']).success).toBe(true)
    expect(contractIssuedKeySchema.safeParse({ ...keys.issue, scope: 'site' }).success).toBe(false)
  })

  it('error fixtures carry a sentence in error (or message), never a bare code', () => {
    for (const [key, { status, body }] of Object.entries(errors)) {
      expect(status, key).toBeGreaterThanOrEqual(400)
      expect(contractErrorBodySchema.safeParse(body).success, key).toBe(true)
      const text =
        (body as { error?: string; message?: string }).error ?? (body as { message: string }).message
      expect(text, key).toMatch(/ /)
    }
  })

  it('the hosted fake answers every endpoint with contract shapes over real HTTP', async () => {
    const fake = await startHostedFake()
    try {
      const call = async (method: string, path: string, body?: unknown, key = fake.apiKey) => {
        const response = await fetch(`${fake.baseUrl}${path}`, {
          method,
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        })
        return { status: response.status, json: (await response.json()) as Record<string, unknown> }
      }
      const created = await call('POST', '/decisions', {
        question: 'Refund?',
        externalId: 'c1',
        idempotencyKey: 'k',
      })
      expect(contractDecisionResultSchema.strict().parse(created.json)).toMatchObject({
        reachableChannels: 2,
      })
      const replay = await call('POST', '/decisions', {
        question: 'Refund?',
        externalId: 'c1',
        idempotencyKey: 'k',
      })
      expect(replay.json).toMatchObject({ decisionId: created.json.decisionId, idempotent: true })
      const id = String(created.json.decisionId)
      expect(contractDecisionSchema.safeParse((await call('GET', `/decisions/${id}`)).json).success).toBe(
        true,
      )
      const listed = await call('GET', '/decisions?limit=5')
      expect(contractDecisionListSchema.safeParse(listed.json).success).toBe(true)
      expect(
        contractAnswerResultSchema.safeParse((await call('POST', `/decisions/${id}`, { answer: 'yes' })).json)
          .success,
      ).toBe(true)
      expect(
        contractCancelResultSchema.safeParse((await call('DELETE', `/decisions/${id}`)).json).success,
      ).toBe(true)
      expect(
        contractReachabilitySchema.safeParse((await call('GET', '/reachability?externalId=c1')).json).success,
      ).toBe(true)
      expect(
        contractEnrollSchema.safeParse((await call('POST', '/enroll', { externalId: 'c1' })).json).success,
      ).toBe(true)
      expect(
        contractAuthorizeSchema.safeParse((await call('POST', '/authorize', { toolName: 't' })).json).success,
      ).toBe(true)
      expect(contractWebhookSecretSchema.safeParse((await call('GET', '/webhook-secret')).json).success).toBe(
        true,
      )
      const missing = await call('GET', '/decisions/dec_missing')
      expect(missing).toEqual({ status: 404, json: errors['404'].body })
      expect((await call('GET', '/decisions', undefined, 'pk_x.sk_y')).status).toBe(401)

      const waited = call('POST', '/decisions', { question: 'Deploy?', wait: true, timeoutSeconds: 10 })
      while (fake.pages < 2) await new Promise((resolve) => setTimeout(resolve, 10))
      await fake.answer([...fake.decisions.keys()].at(-1)!, 'yes')
      expect((await waited).json).toMatchObject({ status: 'answered', value: 'yes' })
      const timedOut = await call('POST', '/decisions', {
        question: 'Deploy 2?',
        wait: true,
        timeoutSeconds: 1,
      })
      expect(timedOut.json).toMatchObject({ status: 'pending', hint: expect.any(String) })
    } finally {
      await fake.close()
    }
  })
})
