/**
 * The phone card in words and a batch on one screen, in Debian Chromium at
 * 375×812: a real Mastra batch workflow and dispatcher against the local
 * service, the page answering all items of a batch at once, and an agent
 * approval's input shown as a labelled list.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { prepareAgentReview } from '../../../src/agents/review-subject.js'
import { batchGroupKey } from '../../../src/steps/workflow-binding.js'
import { launchChromium } from '../../helpers/browser.js'
import { createTestEnv, listEffects, type TestEnv } from '../../helpers/mastra.js'
import { buildApp, EXTERNAL_ID, type TestApp } from '../../workflows/fixtures/app.js'

const WAIT_MS = 20_000

let env: TestEnv
let app: TestApp
let browser: Browser
const contexts: BrowserContext[] = []

beforeAll(async () => {
  env = await createTestEnv('batch-card')
  app = buildApp(env)
  browser = await launchChromium()
})

afterAll(async () => {
  for (const context of contexts) await context.close().catch(() => undefined)
  await browser?.close()
  await app?.close()
  await env?.close()
})

/** A phone enrolled for `externalId` through its link; JavaScript off keeps the page exactly as rendered. */
async function phone(externalId: string, javaScript = true): Promise<Page> {
  const { universalLink } = await env.client.enroll(externalId)
  const context = await browser.newContext({
    viewport: { width: 375, height: 812 },
    isMobile: true,
    hasTouch: true,
    javaScriptEnabled: javaScript,
  })
  contexts.push(context)
  const page = await context.newPage()
  await page.goto(universalLink)
  await page.getByRole('button', { name: 'Link this phone', exact: true }).tap({ timeout: WAIT_MS })
  await page.waitForURL((url) => url.pathname === '/review', { timeout: WAIT_MS })
  return page
}

type Run = { runId: string; start(p: { inputData: unknown }): Promise<{ status: string }> }
function refundBatch() {
  return app.mastra.getWorkflowById('refund-batch' as never) as unknown as {
    createRun(): Promise<Run>
    getWorkflowRunById(id: string): Promise<{ status: string } | null>
  }
}

async function childDecisions(parentRunId: string): Promise<string[]> {
  const pending = await app.store.listByState('pending', { limit: 1000 })
  return pending
    .flatMap((review) =>
      review.target === 'workflow-step' && review.parent?.runId === parentRunId ? [review] : [],
    )
    .sort((a, b) => (a.parent?.itemIndex ?? 0) - (b.parent?.itemIndex ?? 0))
    .map((review) => review.decisionId)
}

describe('a batch on one screen', () => {
  it('shows 25 items as one card; "Approve all 25" answers each once and runs 25 refunds once each', async () => {
    const page = await phone(EXTERNAL_ID)
    await page.getByText('Live', { exact: true }).waitFor({ timeout: WAIT_MS })
    const items = Array.from({ length: 25 }, (_, index) => ({
      operationId: `invoice-${index}`,
      question: `Pay invoice ${index + 1}?`,
      subject: {
        toolName: 'invoice.pay',
        parameters: { invoice: `inv_${index + 1}`, amountMinor: 1000 + index },
      },
    }))
    const run = await refundBatch().createRun()
    expect((await run.start({ inputData: items })).status).toBe('suspended')
    const ids = await childDecisions(run.runId)
    expect(ids).toHaveLength(25)

    const batch = page.getByRole('article', { name: 'Batch of 25 items', exact: true })
    await batch.waitFor({ timeout: WAIT_MS })
    expect(await page.locator('#decisions > article').count()).toBe(1)
    expect(await batch.locator('.batch-items > li').count()).toBe(25)
    expect(await batch.getByText('Batch item 25', { exact: true }).count()).toBe(1)
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375)

    await batch.getByRole('button', { name: 'Approve all 25', exact: true }).tap()
    await page.getByRole('status').getByText('Approved all 25 items.').waitFor({ timeout: WAIT_MS })
    await page.getByText('No pending decisions.').waitFor({ timeout: WAIT_MS })
    for (const id of ids) {
      expect(await env.client.decisions.get(id)).toMatchObject({ status: 'answered', value: 'yes' })
    }

    const reconciled = await app.dispatcher.reconcile({ limit: 100 })
    expect(reconciled).toBeDefined()
    expect((await refundBatch().getWorkflowRunById(run.runId))?.status).toBe('success')
    const refunds = (await listEffects(env.dir))
      .filter((effect) => effect.kind === 'refund-item' && effect.key.startsWith('invoice-'))
      .map((effect) => effect.key)
    expect(refunds).toHaveLength(25)
    expect(new Set(refunds).size).toBe(25)
  }, 120_000)

  it('never answers an item that arrived after the page was drawn', async () => {
    const externalId = 'late_batch'
    const group = batchGroupKey({ workflowId: 'late', runId: 'run-late', stepId: 'approve' })
    const create = (index: number) =>
      env.client.decisions.create({
        externalId,
        question: `Delete export ${index}?`,
        context: JSON.stringify({ pushary: 'workflow-step', batch: group, batchItem: index }),
      })
    const drawn = [await create(0), await create(1), await create(2)].map((made) => made.decisionId)
    const page = await phone(externalId, false)
    const batch = page.getByRole('article', { name: 'Batch of 3 items', exact: true })
    await batch.waitFor({ timeout: WAIT_MS })

    const late = (await create(3)).decisionId
    await batch.getByRole('button', { name: 'Approve all 3', exact: true }).tap()
    // The post redirects back to the list, where only the late item is left.
    await page.getByRole('article', { name: 'Delete export 3?', exact: true }).waitFor({ timeout: WAIT_MS })
    expect(await batch.count()).toBe(0)
    for (const id of drawn) {
      expect(await env.client.decisions.get(id)).toMatchObject({ status: 'answered', value: 'yes' })
    }
    expect(await env.client.decisions.get(late)).toMatchObject({ status: 'pending', value: null })
  })
})

describe('the phone card in words', () => {
  it('shows a requireApproval call as the tool name and a labelled list of its input, long values folded', async () => {
    const externalId = 'card_words'
    const note = `Buyer wrote: ${'the parcel arrived open and two items were missing. '.repeat(3)}`.trim()
    const { binding, stepSubject } = prepareAgentReview({
      operation: 'test',
      agentId: 'support',
      run: { runId: 'run-words' },
      call: {
        kind: 'approval',
        toolCallId: 'call-1',
        toolName: 'refund.create',
        args: { order: { id: 'o_1042', lines: [{ sku: 'MUG-1', qty: 2 }] }, note, notify: true },
        suspendPayload: undefined,
        via: [],
      },
      externalId,
      actionVersion: 'v1',
    })
    await env.client.decisions.create({
      externalId,
      question: binding.question.question,
      ...stepSubject,
      context: JSON.stringify({ pushary: 'workflow-step', workflowId: 'pushary-agent-review' }),
    })
    const page = await phone(externalId)
    const card = page.getByRole('article', { name: 'Approve refund.create?', exact: true })
    await card.waitFor({ timeout: WAIT_MS })
    const text = (await card.textContent()) ?? ''
    expect(text).not.toContain('{"')
    expect(text).toContain('Agent')
    expect(text).toContain('Input of refund.create')
    for (const [label, value] of [
      ['Order › Id', 'o_1042'],
      ['Order › Lines › 1 › Sku', 'MUG-1'],
      ['Order › Lines › 1 › Qty', '2'],
      ['Notify', 'true'],
    ]) {
      const row = card.locator('.row', { has: page.getByText(label as string, { exact: true }) })
      expect(await row.locator('dd').textContent()).toBe(value)
    }
    const fold = card.locator('details.fold')
    expect(await fold.locator('.full').isVisible()).toBe(false)
    await fold.locator('summary').tap()
    expect(await fold.locator('.full').textContent()).toBe(note)
    expect(await page.getByText(`You answer here as ${externalId}.`, { exact: false }).count()).toBe(1)
    expect(await page.locator('body').textContent()).not.toMatch(/customer/i)
  })
})
