/**
 * The workflow samples of the docs (docs/workflows.md, docs/operations.md),
 * run as written against the local decision service: the step and the gate,
 * the missing-gate warning, parallel items, the callback routes and the
 * startup self-check. Each sample module is the code block of its page
 * (test/readme/docs-samples.test.ts proves they are identical).
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Mastra } from '@mastra/core/mastra'
import { LibSQLStore } from '@mastra/libsql'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  createPusharyDispatcher,
  isPusharyDeclined,
  type PusharyReviewStore,
  type PusharyWorkflowReview,
} from '../../src/index.js'
import { pendingDecisionOf } from '../agents/support/agent-env.js'
import { waitFor } from '../helpers/mastra.js'
import type * as CallbackRoute from './samples/callback-route.js'
import type * as MissingGate from './samples/missing-gate.js'
import type * as ParallelItems from './samples/parallel-items.js'
import type * as WorkflowGate from './samples/workflow-gate.js'
import { type SampleEnv, startSampleEnv } from './support/sample-env.js'

let s: SampleEnv

beforeAll(async () => {
  s = await startSampleEnv('docs-workflows')
})

afterAll(async () => {
  await s?.close()
})

function useCustomer(id: string): string {
  s.app.authenticatedCustomer.id = id
  s.app.seen.refunds.length = 0
  return id
}

async function pendingOf(store: PusharyReviewStore, runId: string) {
  return (await store.listByState('pending', { limit: 100 })).filter(
    (review): review is PusharyWorkflowReview => review.target === 'workflow-step' && review.runId === runId,
  )
}

describe('docs/workflows.md samples, as written', () => {
  it.each([
    ['yes', 1],
    ['no', 0],
  ])(
    'step and gate: answered %s, the refund runs %i time(s), a declined run ends with the gate result',
    async (answer, count) => {
      const customer = useCustomer(`customer_gate_${answer}`)
      await s.linkPhone(customer)
      const sample = await s.runSample<typeof WorkflowGate>('workflow-gate')
      expect(sample.state?.status).toBe('suspended')
      const decision = await pendingDecisionOf(s.env.client, customer)
      expect(decision.question).toBe('Refund €48 on order_1?')
      await s.env.client.decisions.answer(decision.decisionId, answer)

      const dispatcher = createPusharyDispatcher({
        mastra: sample.mastra,
        client: sample.client,
        store: sample.store,
      })
      expect(await dispatcher.resumeDecision(decision.decisionId)).toMatchObject({ status: 'resumed' })
      const done = await sample.mastra.getWorkflow('refund').getWorkflowRunById(sample.run.runId)
      expect(done?.status).toBe('success')
      expect(s.app.seen.refunds).toHaveLength(count)
      if (count === 1) expect(done?.result).toEqual({ refunded: true })
      else expect(isPusharyDeclined(done?.result) && done.result.reason).toBe('denied')
      await sample.store.close()
    },
  )

  it('step and gate: a customer with no linked phone is refused before anything is asked', async () => {
    const customer = useCustomer('customer_gate_unlinked')
    const sample = await s.runSample<typeof WorkflowGate>('workflow-gate')
    expect(sample.state?.status).toBe('failed')
    const { decisions } = await s.env.client.decisions.list({ externalId: customer, limit: 5 })
    expect(decisions).toEqual([])
    expect(s.app.seen.refunds).toEqual([])
    await sample.store.close()
  })

  it('missing gate: the first run warns once through the Mastra logger, naming both steps, and still asks', async () => {
    const sample = await s.runSample<typeof MissingGate>('missing-gate')
    expect(sample.result.status).toBe('suspended')
    const warnings = sample.logger.warnings.filter((line) => line.startsWith('[pushary]'))
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatch(
      /^\[pushary\] workflow "restart": approval step "approve" is followed by "restart-service", not by pusharyGate\(\) or a permit step/,
    )
    expect(warnings[0]).toContain('Insert .then(pusharyGate()) after "approve"')
    expect(sample.restarted).toEqual([])
  })

  it('parallel items: mixed answers, only the approved item is refunded, each once', async () => {
    const customer = useCustomer('customer_items')
    await s.linkPhone(customer)
    const sample = await s.runSample<typeof ParallelItems>('parallel-items')
    const run = await sample.mastra.getWorkflow('refund-batch').createRun()
    const orders = [
      { id: 'order_a', amount: 10, version: 1 },
      { id: 'order_b', amount: 20, version: 1 },
      { id: 'order_c', amount: 30, version: 2 },
    ]
    expect((await run.start({ inputData: orders })).status).toBe('suspended')
    const items = await waitFor(async () => {
      const reviews = (await sample.store.listByState('pending', { limit: 100 })).filter(
        (review): review is PusharyWorkflowReview =>
          review.target === 'workflow-step' && review.parent?.runId === run.runId,
      )
      return reviews.length === orders.length ? reviews : undefined
    })
    const answers = ['yes', 'no', 'yes']
    for (const review of items)
      await s.env.client.decisions.answer(review.decisionId, answers[review.parent!.itemIndex!]!)

    const dispatcher = createPusharyDispatcher({
      mastra: sample.mastra,
      client: sample.client,
      store: sample.store,
    })
    const done = await waitFor(async () => {
      await dispatcher.reconcile({ limit: 100 })
      const state = await sample.mastra.getWorkflow('refund-batch').getWorkflowRunById(run.runId)
      return state?.status === 'success' ? state : undefined
    }, 60_000)
    expect(done.result).toEqual([{ orderId: 'order_a' }, { orderId: 'order_c' }])
    expect(s.app.seen.refunds.map((refund) => refund.orderId).sort()).toEqual(['order_a', 'order_c'])
    await sample.store.close()
  })

  it('callback route: the node:http and Express routes resume a run once, a forged callback is 401, and the Mastra route is registered', async () => {
    useCustomer('customer_route')
    const sample = await s.runSample<typeof CallbackRoute>('callback-route')
    clearInterval(sample.reconciling) // the test does not wait 30 s; it checks the callback paths
    const expressServer = createServer(sample.app).listen(0, '127.0.0.1')
    await new Promise((resolve) => expressServer.once('listening', resolve))
    await new Promise((resolve) =>
      sample.server.listening ? resolve(null) : sample.server.once('listening', resolve),
    )
    const nodeUrl = `http://127.0.0.1:${(sample.server.address() as AddressInfo).port}/pushary/callback`
    const expressUrl = `http://127.0.0.1:${(expressServer.address() as AddressInfo).port}/pushary/callback`
    expect(sample.mastra.getServer()?.apiRoutes?.map((route) => route.path)).toEqual(['/pushary/callback'])

    for (const [name, callbackUrl] of [
      ['node', nodeUrl],
      ['express', expressUrl],
    ] as const) {
      const run = await sample.mastra.getWorkflow('refund').createRun()
      const started = await run.start({
        inputData: {
          operationId: `refund:${name}:v1`,
          question: `Refund via ${name}?`,
          type: 'confirm',
          delivery: { callbackUrl },
        },
      })
      expect(started.status).toBe('suspended')
      const [review] = await pendingOf(sample.store, run.runId)
      await s.env.client.decisions.answer(review!.decisionId, 'yes')
      const done = await waitFor(async () => {
        const state = await sample.mastra.getWorkflow('refund').getWorkflowRunById(run.runId)
        return state?.status === 'success' ? state : undefined
      })
      expect(done.result).toEqual({ refunded: true })
    }
    expect(s.app.seen.refunds).toHaveLength(2)

    const forged = await sample.POST(
      new Request('http://127.0.0.1/pushary/callback', {
        method: 'POST',
        headers: { 'x-pushary-signature': 'sha256=00' },
        body: JSON.stringify({ correlationId: 'dec_x', answer: 'yes' }),
      }),
    )
    expect(forged.status).toBe(401)
    expect(s.app.seen.refunds).toHaveLength(2)
    await new Promise((resolve) => expressServer.close(resolve))
    await new Promise((resolve) => sample.server.close(resolve))
    await sample.store.close()
  })
})

describe('docs/operations.md startup self-check, as written', () => {
  it('lists and logs a pending review this worker cannot resume (its workflow is not registered)', async () => {
    useCustomer('customer_selfcheck')
    const sample = await s.runSample<typeof CallbackRoute>('callback-route')
    clearInterval(sample.reconciling)
    await new Promise((resolve) =>
      sample.server.listening ? resolve(null) : sample.server.once('listening', resolve),
    )
    const run = await sample.mastra.getWorkflow('refund').createRun()
    await run.start({ inputData: { operationId: 'refund:check:v1', question: 'Refund?', type: 'confirm' } })
    const [review] = await pendingOf(sample.store, run.runId)

    const { checkWorker } = await import('./samples/check-configuration.js')
    const healthy = await checkWorker(sample.dispatcher, { error: () => {} })
    expect(healthy.problems).toEqual([])
    expect(healthy.checked).toBeGreaterThanOrEqual(1)

    // A worker deployed without the refund workflow, on the same stores.
    const bare = new Mastra({
      storage: new LibSQLStore({ id: 'bare', url: `file:${s.env.dir}/bare-mastra.db` }),
      logger: false,
    })
    const logged: string[] = []
    const misdeployed = createPusharyDispatcher({ mastra: bare, client: s.env.client, store: sample.store })
    const { problems } = await checkWorker(misdeployed, { error: (line) => logged.push(line) })
    expect(problems).toEqual([
      expect.objectContaining({ decisionId: review!.decisionId, missing: 'workflow' }),
    ])
    expect(logged).toEqual([expect.stringMatching(new RegExp(`^${review!.decisionId}: workflow: `))])
    await new Promise((resolve) => sample.server.close(resolve))
    await sample.store.close()
  })
})
