/**
 * Issue 38 (left open by the service-side fix): a subject parameter named
 * `__proto__`, `constructor` or `prototype` is refused by the approval step,
 * naming the field, before anything is asked. Parsing a record drops
 * `__proto__` silently, so the step would otherwise ask about parameters the
 * application did not send. A real Mastra run and the local decision service.
 */
import type { Mastra } from '@mastra/core/mastra'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PusharyReviewStore } from '../../src/store/review-store.js'
import { createTestEnv, type TestEnv } from '../helpers/mastra.js'
import { mastraOnFile, refundWorkflow, scratchReviewStore } from './support/refund-fixtures.js'

let env: TestEnv
let mastra: Mastra
let store: PusharyReviewStore
let refunds = 0

beforeAll(async () => {
  env = await createTestEnv('reserved-keys')
  const scratch = scratchReviewStore('pushary-reserved-keys-')
  store = scratch.store
  const workflow = refundWorkflow({
    id: 'refund-reserved',
    config: { client: env.client, store },
    approval: { id: 'approve' },
    onRefund: () => {
      refunds += 1
    },
  })
  mastra = mastraOnFile({ dir: scratch.dir, id: 'reserved', workflows: { workflow } })
}, 60_000)

afterAll(async () => {
  await store?.close()
  await env?.close()
})

describe('reserved parameter names', () => {
  for (const name of ['__proto__', 'constructor', 'prototype']) {
    it(`refuses a subject parameter named ${name}, naming it, and asks nobody`, async () => {
      const externalId = `customer_reserved_${name.replaceAll('_', '')}`
      const inputData = JSON.parse(
        `{"operationId":"refund:o-r:v1","question":"Refund order o-r?","externalId":"${externalId}",` +
          `"subject":{"toolName":"refund.create","parameters":{"amountMinor":4800,"${name}":{"amountMinor":1}}}}`,
      )
      const run = await mastra.getWorkflow('workflow').createRun()
      // The workflow's input schema is the step's: Mastra refuses the run at
      // start, with the field named, before the step could ask anything.
      await expect(run.start({ inputData })).rejects.toThrow(`subject.parameters.${name}`)
      expect((await env.client.decisions.list({ externalId })).decisions).toEqual([])
      expect(refunds).toBe(0)
    })
  }
})
