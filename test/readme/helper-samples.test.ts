/**
 * The samples of the typed helpers on the docs pages, run as written against
 * the package (`@pushary/mastra` is aliased to src/index.ts) with the local
 * decision service over loopback HTTP, Mastra and the review store on SQLite
 * files: what a run waits on (docs/workflows.md), a permit computed from the
 * run's input (docs/permits.md) and reading a decision's `value`
 * (docs/reference.md). What the samples leave to the application is in
 * `samples/app.ts`.
 */
import { Mastra } from '@mastra/core/mastra'
import { LibSQLStore } from '@mastra/libsql'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPusharyDispatcher, pusharyPendingDecisions } from '../../src/index.js'
import { type SampleEnv, startSampleEnv } from './support/sample-env.js'

let s: SampleEnv
const closers: (() => unknown)[] = []

beforeAll(async () => {
  s = await startSampleEnv('helper-samples')
})

afterAll(async () => {
  for (const close of closers) await close()
  await s?.close()
})

describe('the typed helper samples, as written', () => {
  it('pending decisions: the ops channel hears of each item as asked, and the run read later lists one fewer once an answer was applied', async () => {
    const sample = await import('./samples/pending-decisions.js')
    closers.push(() => sample.store.close())
    const runId = await sample.askForRefunds([
      { id: 'o-1', amount: '48.00' },
      { id: 'o-2', amount: '12.50' },
      { id: 'o-3', amount: '7.00' },
    ])
    expect(s.app.seen.opsMessages).toHaveLength(3)
    expect(s.app.seen.opsMessages[0]).toMatch(/^#0 asked ops_lead: Refund EUR 48\.00 for o-1\? \(dec_\w+\)$/)
    expect(s.app.seen.opsMessages[2]).toMatch(/^#2 asked ops_lead: Refund EUR 7\.00 for o-3\? /)
    const open = await sample.stillOpen(runId)
    expect(open).toHaveLength(3)

    // The person answers the second item; the dispatcher applies it.
    await s.env.client.decisions.answer(open[1]!, 'yes')
    const dispatcher = createPusharyDispatcher({
      mastra: sample.mastra,
      client: sample.client,
      store: sample.store,
    })
    expect((await dispatcher.resumeDecision(open[1]!)).status).toBe('resumed')
    expect(await sample.stillOpen(runId)).toEqual([open[0], open[2]])
  })

  it('permit from the run input: two orders each refund once under their own permit, with the amount each person approved', async () => {
    const sample = await import('./samples/permit-from-input.js')
    closers.push(() => sample.store.close())
    const mastra = new Mastra({
      workflows: { refundWorkflow: sample.refundWorkflow },
      storage: new LibSQLStore({
        id: 'helpers-permit',
        url: `file:${s.env.dir}/permit-from-input-mastra.db`,
      }),
      logger: false,
    })
    const refundOnce = async (request: { orderId: string; amountMinor: number; customerId: string }) => {
      const run = await mastra.getWorkflow('refundWorkflow').createRun()
      const [pending] = pusharyPendingDecisions(await run.start({ inputData: request }))
      expect(pending).toMatchObject({
        externalId: request.customerId,
        operationId: `refund:${request.orderId}`,
      })
      await s.env.client.decisions.answer(pending!.decisionId, 'yes')
      const result = await run.resume({
        step: 'pushary-approval',
        label: pending!.decisionId,
        resumeData: { answer: 'yes' },
      })
      return { result, decisionId: pending!.decisionId }
    }
    const first = await refundOnce({ orderId: 'o-10', amountMinor: 4800, customerId: 'customer_a' })
    const second = await refundOnce({ orderId: 'o-11', amountMinor: 1250, customerId: 'customer_b' })
    expect(first.result.status === 'success' && first.result.result).toEqual({ refundId: 'refund_o-10' })
    expect(second.result.status === 'success' && second.result.result).toEqual({ refundId: 'refund_o-11' })
    expect(s.app.seen.payments.map(({ orderId, amountMinor }) => [orderId, amountMinor])).toEqual([
      ['o-10', 4800],
      ['o-11', 1250],
    ])
    // Each refund ran under the permit spent for its own order and amount.
    const permit = await sample.store.permitOf(second.decisionId)
    expect(permit?.action).toEqual({
      toolName: 'refund.create',
      toolTarget: 'order o-11',
      parameters: { amountMinor: 1250 },
      externalId: 'customer_b',
    })
    expect(s.app.seen.payments[1]?.permitId).toBe(permit?.permitId)
  })

  it('decision value: the answer is read from `value`, and only an affirmative confirm approves', async () => {
    const sample = await import('./samples/decision-value.js')
    const ask = (type: 'confirm' | 'select') =>
      s.env.client.decisions.create({
        question: 'Ship it?',
        type,
        ...(type === 'select' ? { options: ['yes', 'later'] } : {}),
        externalId: 'customer_value',
      })
    const confirm = await ask('confirm')
    expect(await sample.answerOf(confirm.decisionId)).toEqual({ answered: false, status: 'pending' })
    await s.env.client.decisions.answer(confirm.decisionId, 'Yes')
    expect(await sample.answerOf(confirm.decisionId)).toEqual({
      answered: true,
      value: 'Yes',
      approved: true,
    })
    const select = await ask('select')
    await s.env.client.decisions.answer(select.decisionId, 'yes')
    expect(await sample.answerOf(select.decisionId)).toEqual({
      answered: true,
      value: 'yes',
      approved: false,
    })
  })
})
