/**
 * The agent, permit and platform samples of the docs pages (docs/agents.md,
 * docs/permits.md, docs/reference.md; first written for the product README,
 * seed 002), run as written against the package (`@pushary/mastra` is aliased to src/index.ts) and
 * typechecked with the rest of test/. The samples live in `samples/`, one
 * module each; the application functions they name are in `samples/app.ts`.
 * A sample module runs when imported, so a scenario that runs a sample again
 * imports it under a fresh query string.
 */
import { join } from 'node:path'
import { Mastra } from '@mastra/core/mastra'
import { LibSQLStore } from '@mastra/libsql'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPusharyDispatcher, isPusharyPermitRefused, openPusharyAgentReview } from '../../src/index.js'
import { answerNext, pendingDecisionOf, toolResults } from '../agents/support/agent-env.js'
import { callsOnce, scriptedModel } from '../agents/support/scripted-model.js'
import { createTestEnv, startFetchServer, type TestEnv, waitFor } from '../helpers/mastra.js'

type App = typeof import('./samples/app.js')

let env: TestEnv
let callbacks: Awaited<ReturnType<typeof startFetchServer>>
let app: App
/** Signed callbacks the service delivered to the README's POST handler, to replay one. */
const delivered: { raw: string; signature: string | null; status: number }[] = []
let runs = 0

beforeAll(async () => {
  env = await createTestEnv('readme')
  callbacks = await startFetchServer(async (request) => {
    const path = new URL(request.url).pathname
    if (path !== '/pushary/callback') return new Response('ok') // the workflow sample's callbackUrl
    const raw = await request.clone().text()
    const { POST } = await import('./samples/callback.js')
    const response = await POST(request)
    delivered.push({ raw, signature: request.headers.get('x-pushary-signature'), status: response.status })
    return response
  })
  // What a deployment puts in its environment; the samples read PUSHARY_*.
  process.env.PUSHARY_API_KEY = env.apiKey
  process.env.PUSHARY_BASE_URL = env.baseUrl
  process.env.README_WEBHOOK_SECRET = env.webhookSecret
  process.env.README_PUBLIC_URL = callbacks.url
  process.env.README_SAMPLES_DIR = env.dir
  app = await import('./samples/app.js')
})

afterAll(async () => {
  app?.reviewStore.close()
  await callbacks?.close()
  await env?.close()
})

/** Signs in a fresh customer and forgets what earlier scenarios recorded. */
function useCustomer(id: string): string {
  app.authenticatedCustomer.id = id
  for (const list of Object.values(app.seen)) list.length = 0
  return id
}

/** The customer opens the enrollment link on their phone and taps "Link this phone". */
async function linkPhone(universalLink: string): Promise<Response> {
  const response = await fetch(universalLink, { method: 'POST', redirect: 'manual' })
  await response.body?.cancel()
  return response
}

/** Runs a sample module (again): a fresh query string is a fresh module instance. */
function runSample<T>(name: string): Promise<T> {
  const specifier = `./samples/${name}.js?run=${++runs}`
  return import(/* @vite-ignore */ specifier) as Promise<T>
}

describe('the product README samples, as written', () => {
  it('quick start: connect returns a single-use enrollment link, and the ask tool approves only a confirm yes', async () => {
    const customer = useCustomer('customer_quick')
    const sample = await import('./samples/quick-start.js')
    expect((await linkPhone(sample.universalLink)).status).toBe(303)
    expect((await linkPhone(sample.universalLink)).headers.get('set-cookie')).toBeNull()
    expect(await env.client.reachability(customer)).toMatchObject({ reachable: true, deviceCount: 1 })

    // The sample names a provider model; the scripted model stands in for it.
    const ask = (input: Record<string, unknown>) =>
      sample.agent.__updateModel({
        model: scriptedModel(callsOnce([{ toolCallId: 'ask_1', toolName: 'askHuman', input }])),
      })
    ask({ question: 'Refund EUR 48 on order_1?', type: 'confirm' })
    const [confirmed] = await Promise.all([
      sample.agent.generate('Refund order_1'),
      answerNext(env.client, customer, 'yes'),
    ])
    expect(toolResults(confirmed).get('ask_1')).toEqual({
      approved: true,
      value: 'yes',
      status: 'answered',
      decisionId: expect.any(String),
    })

    ask({ question: 'Which refund?', type: 'select', options: ['yes', 'store credit'] })
    const [chosen] = await Promise.all([
      sample.agent.generate('Refund order_1'),
      answerNext(env.client, customer, 'yes'),
    ])
    expect(toolResults(chosen).get('ask_1')).toEqual({
      approved: false,
      value: 'yes',
      status: 'answered',
      decisionId: expect.any(String),
    })
  })

  it.each([
    ['yes', 1],
    ['no', 0],
  ])(
    'requireApproval sample: answered %s on the phone, the refund runs %i time(s)',
    async (answer, count) => {
      const customer = useCustomer(`customer_refund_${answer}`)
      const [sample, decision] = await Promise.all([
        runSample<{ output: { runId: string; finishReason: string } }>('require-approval'),
        answerNext(env.client, customer, answer),
      ])
      expect(sample.output.finishReason).toBe('suspended')
      expect(decision.question).toContain('issueRefund')
      expect(app.seen.refunds).toEqual(count === 1 ? [{ orderId: 'order_1', amount: 48 }] : [])
      expect(app.seen.savedOutputs.map((saved) => saved.runId)).toEqual([sample.output.runId])
      const text = (app.seen.savedOutputs[0]!.output as { text: string }).text
      expect(text).toContain(count === 1 ? '"refunded":true' : 'The customer declined.')
      expect(app.seen.flagged).toEqual([])
      expect(app.seen.pendingRuns).toEqual([[]])
    },
  )

  it('supervisor sample: a streamed delegation resolved at the supervisor asks once and runs the refund once', async () => {
    const customer = useCustomer('customer_supervisor')
    const [sample, decision] = await Promise.all([
      runSample<{ stream: { finishReason: Promise<string> } }>('supervisor'),
      answerNext(env.client, customer, 'yes'),
    ])
    expect(await sample.stream.finishReason).toBe('suspended')
    expect(decision.question).toContain('issueRefund')
    expect(app.seen.refunds).toEqual([{ orderId: 'order_1', amount: 48 }])
    expect(app.seen.alerts).toEqual([])
    expect(app.seen.savedOutputs).toHaveLength(1)
    const output = app.seen.savedOutputs[0]!.output as { fullStream: AsyncIterable<{ type: string }> }
    const types: string[] = []
    for await (const chunk of output.fullStream) types.push(chunk.type)
    expect(types).toContain('finish')
  })

  it('streaming resume sample: an answered deferred refund review resumes as a settled stream, and a bypassed one says resumed_outside', async () => {
    const customer = useCustomer('customer_stream_resume')
    app.registerTools({ issueRefund: app.refundTool })
    app.prepare.with = 'refund'
    const open = async () => {
      const output = await app.agent.generate('Refund this order', {
        memory: { thread: `${customer}_${++runs}`, resource: customer },
      })
      expect(output.finishReason).toBe('suspended')
      const review = await openPusharyAgentReview(app.config, {
        agent: app.agent,
        agentId: 'order-agent',
        runId: output.runId!,
        toolCallId: `call_${customer}`,
        externalId: customer,
        actionVersion: app.order.draftVersion,
        store: app.reviewStore,
      })
      return { runId: output.runId!, decisionId: review.decisionId }
    }
    const answered = await open()
    await env.client.decisions.answer(answered.decisionId, 'yes')
    app.job.decisionId = answered.decisionId
    const sample = await runSample<{ result: { status: string } }>('stream-resume')
    expect(sample.result.status).toBe('resumed')
    expect(app.seen.refunds).toEqual([{ orderId: 'order_1', amount: 48 }])
    const output = app.seen.savedOutputs[0]!.output as { fullStream: AsyncIterable<{ type: string }> }
    const types: string[] = []
    for await (const chunk of output.fullStream) types.push(chunk.type)
    expect(types).toContain('finish')

    // Approved natively behind the package's back before the person answered.
    const bypassed = await open()
    await app.agent.approveToolCallGenerate({ runId: bypassed.runId, toolCallId: `call_${customer}` })
    await env.client.decisions.answer(bypassed.decisionId, 'yes')
    app.job.decisionId = bypassed.decisionId
    const stale = await runSample<{ result: { status: string } }>('stream-resume')
    expect(stale.result).toMatchObject({ status: 'stale', reasonCode: 'resumed_outside' })
    expect(app.seen.alerts).toEqual([expect.stringMatching(/^resumed_outside: /)])
    expect(app.seen.refunds).toHaveLength(2)
  })

  it('deferred review + callback samples: a select answered yes reaches the question tool as data through the signed callback', async () => {
    const customer = useCustomer('customer_deferred_question')
    await linkPhone((await env.client.enroll(customer)).universalLink)
    app.prepare.with = 'question'
    const sample = await runSample<{ output: { finishReason: string } }>('deferred-review')
    expect(sample.output.finishReason).toBe('suspended')
    const decision = await pendingDecisionOf(env.client, customer)
    expect(decision).toMatchObject({
      question: 'Gift-wrap the order?',
      type: 'select',
      options: ['yes', 'no'],
    })
    expect(await app.reviewStore.row(decision.decisionId)).toMatchObject({ state: 'pending' })

    await env.client.decisions.answer(decision.decisionId, 'yes')
    const outcome = await waitFor(async () =>
      app.seen.resumeOutcomes.find((seen) => seen.decisionId === decision.decisionId),
    )
    expect(outcome.status).toBe('resumed')
    if (outcome.status !== 'resumed') return
    expect(toolResults(outcome.output as never).get(`call_${customer}`)).toEqual({
      status: 'answered',
      value: 'yes',
      approved: false,
    })
    expect(await app.reviewStore.row(decision.decisionId)).toMatchObject({ state: 'completed' })
    expect(app.seen.refunds).toEqual([])
  })

  it.each([
    ['yes', 1],
    ['no', 0],
  ])(
    'deferred review + callback samples: a refund answered %s runs %i time(s), and a replayed callback is a duplicate',
    async (answer, count) => {
      const customer = useCustomer(`customer_deferred_refund_${answer}`)
      await linkPhone((await env.client.enroll(customer)).universalLink)
      app.prepare.with = 'refund'
      const sample = await runSample<{ output: { finishReason: string } }>('deferred-review')
      expect(sample.output.finishReason).toBe('suspended')
      const decision = await pendingDecisionOf(env.client, customer)
      expect(await app.reviewStore.get(decision.decisionId)).toMatchObject({
        kind: 'approval',
        toolName: 'issueRefund',
        externalId: customer,
        actionVersion: 'draft_1',
      })

      await env.client.decisions.answer(decision.decisionId, answer)
      const outcome = await waitFor(async () =>
        app.seen.resumeOutcomes.find((seen) => seen.decisionId === decision.decisionId),
      )
      expect(outcome.status).toBe('resumed')
      expect(app.seen.refunds).toHaveLength(count)

      // The service retries a callback it thinks was lost: same signed body.
      const first = delivered.find(
        (entry) => entry.raw.includes(decision.decisionId) && entry.status === 200,
      )!
      const { POST } = await import('./samples/callback.js')
      const replay = await POST(
        new Request(`${callbacks.url}/pushary/callback`, {
          method: 'POST',
          headers: { 'x-pushary-signature': first.signature ?? '' },
          body: first.raw,
        }),
      )
      expect(replay.status).toBe(200)
      expect(app.seen.resumeOutcomes.at(-1)).toMatchObject({ status: 'duplicate' })
      expect(app.seen.refunds).toHaveLength(count)

      const forged = await POST(
        new Request(`${callbacks.url}/pushary/callback`, {
          method: 'POST',
          headers: { 'x-pushary-signature': 'sha256=00' },
          body: first.raw,
        }),
      )
      expect(forged.status).toBe(401)
    },
  )

  it.each([
    ['yes', true],
    ['no', false],
  ])(
    'workflow sample: resumed by its correlation label with { answer: %s, status }, verified against the service (approved: %s)',
    async (answer, approved) => {
      const customer = useCustomer(`customer_workflow_${answer}`)
      const { workflow } = await runSample<typeof import('./samples/workflow.js')>('workflow')
      const mastra = new Mastra({
        workflows: { customerReview: workflow },
        storage: new LibSQLStore({ id: 'readme-workflow', url: `file:${join(env.dir, `wf-${answer}.db`)}` }),
        logger: false,
      })
      const run = await mastra.getWorkflow('customerReview').createRun()
      const started = await run.start({
        inputData: { operationId: 'gift-wrap:order_1:v1', question: 'Gift-wrap order_1?', type: 'confirm' },
      })
      expect(started.status).toBe('suspended')
      const decision = await pendingDecisionOf(env.client, customer)
      const label = decision.decisionId

      // Resume data before the person answered is not authority: still suspended.
      const early = await run.resume({ label, resumeData: { answer: 'yes' } })
      expect(early.status).toBe('suspended')

      await env.client.decisions.answer(label, answer)
      const done = await run.resume({ label, resumeData: { answer, status: 'answered' } })
      expect(done.status).toBe('success')
      if (done.status === 'success')
        expect(done.result).toEqual({ status: 'answered', value: answer, approved })
    },
  )

  it('platform sample: a customer without a phone approves through the delivered link, and the refund runs once on a permit', async () => {
    const customer = useCustomer('customer_platform')
    const running = runSample<typeof import('./samples/platform.js')>('platform')
    const link = await waitFor(
      async () => app.seen.approvalLinks.find((sent) => sent.customer === customer)?.url,
    )
    const tapped = await fetch(link, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'answer=yes',
    })
    expect(tapped.status).toBe(200)
    const sample = await running
    expect(sample.reach.deliverability).toBe('fallback')
    expect(app.seen.refunds).toEqual([{ orderId: app.order.id, amount: app.order.amount }])
    // The approval is spent: a second attempt is refused with what the first one did.
    expect(
      await env.client.consumeAuthorization({
        authorizationId: sample.decision.decisionId,
        ...sample.action,
      }),
    ).toMatchObject({ status: 'refused', refusal: 'already_consumed', executionState: 'succeeded' })
  })

  it('permit workflow sample: the link reaches a customer without a phone, the refund runs once on a permit, and a changed target is refused', async () => {
    const customer = useCustomer('customer_permit')
    const sample = await import('./samples/permit-workflow.js')
    const mastra = new Mastra({
      storage: new LibSQLStore({ id: 'readme-permit', url: `file:${join(env.dir, 'permit-mastra.db')}` }),
      workflows: { refundWorkflow: sample.refundWorkflow },
      logger: false,
    })
    const dispatcher = createPusharyDispatcher({
      mastra,
      client: sample.client,
      store: sample.store,
      webhookSecret: env.webhookSecret,
    })
    const start = async (target: string) => {
      const run = await mastra.getWorkflow('refundWorkflow').createRun()
      const started = await run.start({
        inputData: {
          operationId: `refund:${target}:v1`,
          question: `Refund EUR ${app.order.amount}?`,
          type: 'confirm' as const,
          subject: { toolName: 'refund.create', toolTarget: target },
        },
      })
      expect(started.status).toBe('suspended')
      const link = app.seen.approvalLinks.at(-1)
      expect(link?.customer).toBe(customer)
      const tapped = await fetch(String(link?.url), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'answer=yes',
      })
      expect(tapped.status).toBe(200)
      await dispatcher.reconcile({ limit: 10 })
      return mastra.getWorkflow('refundWorkflow').getWorkflowRunById(run.runId)
    }
    const done = await start(app.order.id)
    expect(done?.result).toEqual({ refunded: true })
    expect(app.seen.refunds).toEqual([{ orderId: app.order.id, amount: app.order.amount }])
    // Approved for another order than the step refunds: the permit refuses, nothing runs.
    const other = await start('order_2')
    expect(isPusharyPermitRefused(other?.result)).toBe(true)
    expect(other?.result).toMatchObject({ refusal: 'action_mismatch' })
    expect(app.seen.refunds).toHaveLength(1)
    await sample.store.close()
  })
})
