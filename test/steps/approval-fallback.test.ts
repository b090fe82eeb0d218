/**
 * A customer without an enrolled device, against the local decision service
 * over loopback HTTP and a real Mastra run: with `onFallback` the step
 * creates the decision with an approval link and hands it over, the person
 * answers through the link's page, and the run resumes once.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Mastra } from '@mastra/core/mastra'
import { createStep, createWorkflow } from '@mastra/core/workflows'
import { LibSQLStore } from '@mastra/libsql'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod/v4'
import { createPusharyDispatcher } from '../../src/agents/dispatcher.js'
import { isPusharyValidationError } from '../../src/pushary/errors.js'
import type { PusharyFallbackLink } from '../../src/steps/approval-delivery.js'
import { pusharyApprovalStepInputSchema } from '../../src/steps/approval-schemas.js'
import { pusharyApprovalStep } from '../../src/steps/approval-step.js'
import { pusharyApprovedAnswerSchema, pusharyGate } from '../../src/steps/gate-step.js'
import type { PusharyReviewStore } from '../../src/store/review-store.js'
import { createSqliteReviewStore } from '../../src/store/sqlite-store.js'
import { createTestEnv, type TestEnv } from '../helpers/mastra.js'

let env: TestEnv
let mastra: Mastra
const links: PusharyFallbackLink[] = []
let refunds = 0
let store: PusharyReviewStore

beforeAll(async () => {
  env = await createTestEnv('fallback')
  const dir = mkdtempSync(join(tmpdir(), 'pushary-fallback-mastra-'))
  store = createSqliteReviewStore({ url: `file:${join(dir, 'reviews.db')}` })
  const refund = createStep({
    id: 'refund',
    inputSchema: pusharyApprovedAnswerSchema,
    outputSchema: z.object({ refunded: z.literal(true) }),
    execute: async () => {
      refunds += 1
      return { refunded: true as const }
    },
  })
  const workflow = createWorkflow({
    id: 'refund-fallback',
    inputSchema: pusharyApprovalStepInputSchema,
    outputSchema: z.unknown(),
    options: { autoRestartActiveRuns: false },
  })
    .then(
      pusharyApprovalStep(
        { client: env.client, store },
        {
          id: 'approve',
          onFallback: async (link) => {
            links.push(link)
          },
        },
      ),
    )
    .then(pusharyGate())
    .then(refund)
    .commit()
  mastra = new Mastra({
    storage: new LibSQLStore({ id: 'fallback', url: `file:${join(dir, 'mastra.db')}` }),
    workflows: { workflow },
    logger: false,
  })
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
    let caught: unknown
    try {
      pusharyApprovalStep({ client: env.client }, { onFallback: 'mail it' as never })
    } catch (error) {
      caught = error
    }
    expect(isPusharyValidationError(caught) && caught.field).toBe('opts.onFallback')
  })
})
