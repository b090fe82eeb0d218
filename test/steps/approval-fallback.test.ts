/**
 * A customer without an enrolled device, against the local decision service
 * over loopback HTTP and a real Mastra run: with `onFallback` the step
 * creates the decision with an approval link and hands it over, the person
 * answers through the link's page, and the run resumes once.
 */
import { Agent } from '@mastra/core/agent'
import type { Mastra } from '@mastra/core/mastra'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPusharyDispatcher } from '../../src/agents/dispatcher.js'
import { resolvePusharyApprovals } from '../../src/agents/resolve-approvals.js'
import { isPusharyValidationError } from '../../src/pushary/errors.js'
import type { PusharyFallbackLink } from '../../src/steps/approval-delivery.js'
import { pusharyApprovalStep } from '../../src/steps/approval-step.js'
import type { PusharyReviewStore } from '../../src/store/review-store.js'
import { callsOnce, scriptedModel } from '../agents/support/scripted-model.js'
import { rejection, thrown } from '../helpers/errors.js'
import { createTestEnv, type TestEnv } from '../helpers/mastra.js'
import {
  mastraOnFile,
  refundAgent,
  refundWorkflow,
  scratchDir,
  scratchReviewStore,
} from './support/refund-fixtures.js'

let env: TestEnv
let mastra: Mastra
const links: PusharyFallbackLink[] = []
let refunds = 0
let store: PusharyReviewStore

beforeAll(async () => {
  env = await createTestEnv('fallback')
  const scratch = scratchReviewStore('pushary-fallback-mastra-')
  store = scratch.store
  const workflow = refundWorkflow({
    id: 'refund-fallback',
    config: { client: env.client, store },
    approval: {
      id: 'approve',
      onFallback: async (link) => {
        links.push(link)
      },
    },
    onRefund: () => {
      refunds += 1
    },
  })
  mastra = mastraOnFile({ dir: scratch.dir, id: 'fallback', workflows: { workflow } })
}, 60_000)

afterAll(async () => {
  await store?.close()
  await env?.close()
})

describe('onFallback: an approval link for a customer without a device', () => {
  it('hands the link to onFallback, the person approves through its page, and the run resumes once', async () => {
    const dispatcher = createPusharyDispatcher({
      mastra,
      client: env.client,
      store,
      webhookSecret: env.webhookSecret,
    })
    expect((await env.client.reachability('no_device_customer')).deliverability).toBe('fallback')

    const run = await mastra.getWorkflow('workflow').createRun()
    const started = await run.start({
      inputData: {
        operationId: 'refund:o-7:v1',
        question: 'Refund order o-7?',
        externalId: 'no_device_customer',
      },
    })
    expect(started.status).toBe('suspended')
    expect(links).toHaveLength(1)
    const link = links[0] as PusharyFallbackLink
    expect(link).toMatchObject({ externalId: 'no_device_customer', runId: run.runId, stepId: 'approve' })
    // The run names the path taken.
    const suspended = started.status === 'suspended' ? started.steps.approve : undefined
    expect(suspended && 'suspendPayload' in suspended ? suspended.suspendPayload : undefined).toMatchObject({
      decisionId: link.decisionId,
      delivery: 'fallback',
    })
    expect(refunds).toBe(0)

    // The person opens the link: the page shows the question and its answer form.
    const page = await fetch(link.approvalUrl)
    expect(page.status).toBe(200)
    const html = await page.text()
    expect(html).toContain('Refund order o-7?')
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1]
    expect(action).toBeDefined()
    const answered = await fetch(new URL(String(action).replaceAll('&amp;', '&'), link.approvalUrl), {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        origin: new URL(link.approvalUrl).origin,
      },
      body: new URLSearchParams({ answer: 'yes' }),
    })
    expect(answered.status).toBe(200)
    expect(await env.client.decisions.get(link.decisionId)).toMatchObject({
      status: 'answered',
      value: 'yes',
    })

    const first = await dispatcher.reconcile({ limit: 10 })
    expect(first.results.map((result) => result.status)).toEqual(['resumed'])
    const again = await dispatcher.resumeDecision(link.decisionId)
    expect(again.status).toBe('duplicate')
    await dispatcher.reconcile({ limit: 10 })
    expect(refunds).toBe(1)
    const finished = await mastra.getWorkflow('workflow').getWorkflowRunById(run.runId)
    expect(finished?.status).toBe('success')
  })

  it('refuses an onFallback that is not a function, naming the field, before anything is asked', () => {
    const caught = thrown(() =>
      pusharyApprovalStep({ client: env.client }, { onFallback: 'mail it' as never }),
    )
    expect(isPusharyValidationError(caught) && caught.field).toBe('opts.onFallback')
  })
})

/** The person opens the link and taps Approve on its page (the form the page serves). */
async function approveThroughLink(approvalUrl: string): Promise<number> {
  const html = await (await fetch(approvalUrl)).text()
  const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1]
  if (!action) throw new Error('the approval page has no answer form')
  const answered = await fetch(new URL(action.replaceAll('&amp;', '&'), approvalUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: new URL(approvalUrl).origin },
    body: new URLSearchParams({ answer: 'yes' }),
  })
  return answered.status
}

describe('onFallback on an agent requireApproval review', () => {
  it('hands the review link to onFallback, the person approves through it, and the tool runs once', async () => {
    let refunded = 0
    const agentLinks: PusharyFallbackLink[] = []
    const agent = refundAgent({
      id: 'fallback-refunder',
      name: 'Fallback refunder',
      orderId: 'o-8',
      onRefund: () => {
        refunded += 1
      },
    })
    mastraOnFile({
      dir: scratchDir('pushary-fallback-agent-'),
      id: 'fallback-agent',
      agents: { refunder: agent },
    })
    const first = await agent.generate('Refund o-8', {
      memory: { thread: 'fb-thread', resource: 'no_device_agent' },
    })
    expect(first.finishReason).toBe('suspended')

    const resolving = resolvePusharyApprovals(
      {
        client: env.client,
        externalId: 'no_device_agent',
        policy: false,
        timeoutMs: 20_000,
        onFallback: (link) => {
          agentLinks.push(link)
        },
      },
      { agent, resourceId: 'no_device_agent' },
    )
    for (let tries = 0; agentLinks.length === 0 && tries < 200; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
    expect(agentLinks).toHaveLength(1)
    expect(refunded).toBe(0)
    expect(await approveThroughLink((agentLinks[0] as PusharyFallbackLink).approvalUrl)).toBe(200)
    const outcome = await resolving
    expect(outcome.allApproved).toBe(true)
    expect(refunded).toBe(1)
  })

  it('refuses an onFallback that is not a function, naming the field, before anything is asked', async () => {
    const agent = new Agent({
      id: 'idle',
      name: 'Idle',
      instructions: 'x',
      model: scriptedModel(callsOnce([])),
    })
    const caught = await rejection(
      resolvePusharyApprovals(
        { client: env.client, externalId: 'no_device_agent', policy: false, onFallback: 'mail it' as never },
        { agent, resourceId: 'no_device_agent' },
      ),
    )
    expect(isPusharyValidationError(caught) && caught.field).toBe('config.onFallback')
  })
})
