/**
 * The samples of docs/concepts.md, docs/local-service.md, docs/security.md
 * and docs/several-hosts.md, run as written: the approval rule, the local
 * service from code, verifying a callback yourself, and two hosts sharing one
 * PostgreSQL. Each sample module is the code block of its page
 * (test/readme/docs-samples.test.ts proves they are identical).
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { pendingDecisionOf } from '../agents/support/agent-env.js'
import { startFetchServer, waitFor } from '../helpers/mastra.js'
import { dropSchema, ensurePostgres, type TestPostgres, uniqueSchema } from '../store/support/postgres.js'
import type * as LocalService from './samples/local-service.js'
import type * as SeveralHosts from './samples/several-hosts.js'
import { type SampleEnv, startSampleEnv } from './support/sample-env.js'

let s: SampleEnv

beforeAll(async () => {
  s = await startSampleEnv('docs-service')
})

afterAll(async () => {
  await s?.close()
})

describe('docs/concepts.md sample, as written', () => {
  it('approves only an affirmative confirm', async () => {
    const { verdicts } = await import('./samples/approved-rule.js')
    expect(verdicts).toEqual([true, true, false, false, false])
  })
})

describe('docs/local-service.md sample, as written', () => {
  it('starts the service on its file, mints a working enrollment link, and a relayed yes approves', async () => {
    const sample = await s.runSample<typeof LocalService>('local-service')
    try {
      expect(existsSync(join(s.env.dir, 'local-service', 'dev.db'))).toBe(true)
      expect(sample.before.deliverability).not.toBe('push')
      expect(sample.decision).toMatchObject({ status: 'answered', value: 'yes' })

      const linked = await fetch(sample.universalLink, { method: 'POST', redirect: 'manual' })
      await linked.body?.cancel()
      expect(linked.status).toBe(303)
      expect(await sample.client.reachability('customer_1')).toMatchObject({ deliverability: 'push' })
    } finally {
      await sample.service.close()
    }
    await expect(sample.client.reachability('customer_1')).rejects.toThrow()
  })
})

describe('docs/security.md sample, as written', () => {
  it('accepts the service’s signed callback only after re-reading it, and refuses a forged or oversized one', async () => {
    const { POST } = await import('./samples/verify-callback.js')
    const answered: string[] = []
    const receiver = await startFetchServer(async (request) => {
      const response = await POST(request)
      answered.push(`${response.status} ${await response.clone().text()}`)
      return response
    })
    try {
      const customer = 'customer_security'
      const ask = async (question: string) =>
        (
          await s.env.client.decisions.create({
            question,
            externalId: customer,
            callbackUrl: `${receiver.url}/cb`,
          })
        ).decisionId
      await s.env.client.decisions.answer(await ask('Refund EUR 5?'), 'yes')
      await s.env.client.decisions.answer(await ask('Refund EUR 6?'), 'no')
      await waitFor(async () => (answered.length === 2 ? true : undefined))
      expect(answered.sort()).toEqual(['200 approved', '200 not approved'])

      const body = JSON.stringify({ correlationId: 'dec_1', answer: 'yes', value: 'yes', answeredAt: null })
      const forged = await POST(
        new Request(receiver.url, { method: 'POST', headers: { 'x-pushary-signature': 'sha256=00' }, body }),
      )
      expect(forged.status).toBe(401)
      const huge = await POST(new Request(receiver.url, { method: 'POST', body: 'x'.repeat(64 * 1024 + 1) }))
      expect(huge.status).toBe(413)
    } finally {
      await receiver.close()
    }
  })
})

describe('docs/several-hosts.md sample, as written', () => {
  let postgres: TestPostgres
  const schemas = { mastra: uniqueSchema('docs_mastra'), reviews: uniqueSchema('docs_reviews') }

  beforeAll(async () => {
    postgres = await ensurePostgres()
    process.env.DATABASE_URL = postgres.connectionString
    process.env.README_PG_MASTRA_SCHEMA = schemas.mastra
    process.env.README_PG_REVIEW_SCHEMA = schemas.reviews
  })

  afterAll(async () => {
    if (!postgres) return
    await dropSchema(postgres.connectionString, schemas.mastra)
    await dropSchema(postgres.connectionString, schemas.reviews)
    await postgres.stop()
  })

  it('a run started on one host is resumed once by the other host’s reconcile, and the first host sees it finished', async () => {
    const customer = 'customer_hosts'
    s.app.authenticatedCustomer.id = customer
    s.app.seen.refunds.length = 0
    const hostA = await s.runSample<typeof SeveralHosts>('several-hosts')
    const hostB = await s.runSample<typeof SeveralHosts>('several-hosts')
    try {
      const run = await hostA.mastra.getWorkflow('refund').createRun()
      const started = await run.start({
        inputData: { operationId: 'refund:hosts:v1', question: 'Refund on two hosts?', type: 'confirm' },
      })
      expect(started.status).toBe('suspended')
      const decision = await pendingDecisionOf(s.env.client, customer)
      await s.env.client.decisions.answer(decision.decisionId, 'yes')

      const byB = await hostB.dispatcher.reconcile({ limit: 100 })
      const byA = await hostA.dispatcher.reconcile({ limit: 100 })
      expect(byB).toMatchObject({ resumed: 1 })
      expect(byA).toMatchObject({ checked: 0, resumed: 0 })
      expect(s.app.seen.refunds).toHaveLength(1)
      const state = await hostA.mastra.getWorkflow('refund').getWorkflowRunById(run.runId)
      expect(state).toMatchObject({ status: 'success', result: { refunded: true } })
      expect(await hostA.store.history(decision.decisionId)).toEqual([
        expect.anything(),
        expect.objectContaining({ to: 'resuming' }),
        expect.objectContaining({ to: 'completed' }),
      ])
    } finally {
      for (const host of [hostA, hostB]) {
        clearInterval(host.reconciling)
        await host.store.close()
        await host.storage.close()
      }
    }
  })
})
