/**
 * The approval link a customer without a device receives, in Debian Chromium
 * at 375×812: a real Mastra run asks through `onFallback`, the person opens
 * the link and taps Approve, and the dispatcher resumes the run once.
 */
import type { Mastra } from '@mastra/core/mastra'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPusharyDispatcher } from '../../../src/agents/dispatcher.js'
import type { PusharyFallbackLink } from '../../../src/steps/approval-delivery.js'
import type { PusharyReviewStore } from '../../../src/store/review-store.js'
import { launchChromium } from '../../helpers/browser.js'
import { createTestEnv, type TestEnv } from '../../helpers/mastra.js'
import { mastraOnFile, refundWorkflow, scratchReviewStore } from '../../steps/support/refund-fixtures.js'

const WAIT_MS = 20_000

let env: TestEnv
let store: PusharyReviewStore
let mastra: Mastra
let browser: Browser
const links: PusharyFallbackLink[] = []
let refunds = 0

beforeAll(async () => {
  env = await createTestEnv('approval-link-browser')
  const scratch = scratchReviewStore('pushary-link-browser-')
  store = scratch.store
  const workflow = refundWorkflow({
    id: 'refund-link',
    config: { client: env.client, store },
    approval: { id: 'approve', onFallback: (link) => void links.push(link) },
    onRefund: () => {
      refunds += 1
    },
  })
  mastra = mastraOnFile({ dir: scratch.dir, id: 'link-browser', workflows: { workflow } })
  browser = await launchChromium()
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await store?.close()
  await env?.close()
})

describe('the approval link page', () => {
  it('lets a customer without a device approve by tapping Approve, and the run resumes once', async () => {
    const dispatcher = createPusharyDispatcher({
      mastra,
      client: env.client,
      store,
      webhookSecret: env.webhookSecret,
    })
    const run = await mastra.getWorkflow('workflow').createRun()
    const started = await run.start({
      inputData: {
        operationId: 'refund:o-9:v1',
        question: 'Refund order o-9?',
        type: 'confirm',
        externalId: 'link_customer',
      },
    })
    expect(started.status).toBe('suspended')
    const link = links.at(-1) as PusharyFallbackLink

    const context = await browser.newContext({
      viewport: { width: 375, height: 812 },
      isMobile: true,
      hasTouch: true,
    })
    try {
      const page = await context.newPage()
      await page.goto(link.approvalUrl)
      await expect(page.getByText('Refund order o-9?').first().isVisible()).resolves.toBe(true)
      const [answered] = await Promise.all([
        page.waitForResponse((response) => response.request().method() === 'POST', { timeout: WAIT_MS }),
        page.getByRole('button', { name: 'Approve', exact: true }).tap({ timeout: WAIT_MS }),
      ])
      expect(answered.status(), await answered.text()).toBe(200)
    } finally {
      await context.close()
    }
    expect(await env.client.decisions.get(link.decisionId)).toMatchObject({
      status: 'answered',
      value: 'yes',
    })
    const report = await dispatcher.reconcile({ limit: 10 })
    expect(report.results.map((result) => result.status)).toEqual(['resumed'])
    expect((await dispatcher.resumeDecision(link.decisionId)).status).toBe('duplicate')
    expect(refunds).toBe(1)
    expect((await mastra.getWorkflow('workflow').getWorkflowRunById(run.runId))?.status).toBe('success')
  }, 90_000)
})
