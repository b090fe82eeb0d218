/**
 * Issue 39, finding 7 on the page, in Debian Chromium at 375×812: a
 * `requireApproval` call of a real Mastra agent (scripted model, LibSQL
 * file), opened as a phone review on the local decision service, is drawn
 * with the agent's name, the tool's description and its risk. The card's
 * screenshot is kept in a temp dir and its path printed.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Agent } from '@mastra/core/agent'
import { Mastra } from '@mastra/core/mastra'
import { createTool } from '@mastra/core/tools'
import { LibSQLStore } from '@mastra/libsql'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod/v4'
import { openPusharyAgentReview } from '../../src/agents/open-review.js'
import type { PusharyReviewStore } from '../../src/store/review-store.js'
import { createSqliteReviewStore } from '../../src/store/sqlite-store.js'
import { launchChromium } from '../helpers/browser.js'
import { createTestEnv, type TestEnv } from '../helpers/mastra.js'
import { callsOnce, scriptedModel } from './support/scripted-model.js'

const WAIT_MS = 15_000
const DESCRIPTION =
  'Restarts one service on the production cluster; open requests to it fail for about a minute.'

let env: TestEnv
let store: PusharyReviewStore
let browser: Browser

beforeAll(async () => {
  env = await createTestEnv('agent-card-browser')
  store = createSqliteReviewStore({ url: `file:${join(env.dir, 'reviews.db')}` })
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
  await store?.close()
  await env?.close()
})

describe('the agent card in Chromium', () => {
  it('draws the agent name, the tool description and the risk on the phone', async () => {
    const externalId = 'oncall_browser'
    const restartService = createTool({
      id: 'restart-service',
      description: DESCRIPTION,
      inputSchema: z.object({ service: z.string() }),
      outputSchema: z.object({ restarted: z.boolean() }),
      requireApproval: true,
      execute: async () => ({ restarted: true }),
    })
    const mastra = new Mastra({
      agents: {
        ops: new Agent({
          id: 'ops',
          name: 'Ops bot',
          instructions: 'Restart services when asked.',
          model: scriptedModel(
            callsOnce([{ toolCallId: 'b1', toolName: 'restartService', input: { service: 'api' } }]),
          ),
          tools: { restartService },
        }),
      },
      storage: new LibSQLStore({ id: 'card-browser', url: `file:${join(env.dir, 'mastra.db')}` }),
      logger: false,
    })
    const agent = mastra.getAgent('ops')
    const output = await agent.generate('Restart the api', { memory: { thread: 't1', resource: externalId } })
    expect(output.finishReason).toBe('suspended')
    const review = await openPusharyAgentReview(
      { client: env.client },
      {
        agent,
        agentId: 'ops',
        runId: output.runId as string,
        toolCallId: 'b1',
        externalId,
        actionVersion: 'v1',
        store,
        tools: { restartService: { risk: 'high' } },
      },
    )

    const context = await browser.newContext({
      viewport: { width: 375, height: 812 },
      isMobile: true,
      hasTouch: true,
    })
    try {
      const page = await context.newPage()
      const { universalLink } = await env.client.enroll(externalId)
      await page.goto(universalLink)
      await page.getByRole('button', { name: 'Link this phone', exact: true }).tap({ timeout: WAIT_MS })
      await page.waitForURL((url) => url.pathname === '/review', { timeout: WAIT_MS })
      const card = page.locator(`article.decision[data-decision-id="${review.decisionId}"]`)
      await card.waitFor({ timeout: WAIT_MS })
      // biome-ignore lint/performance/useDomNodeTextContent: the test asserts what is drawn
      const drawn = await card.innerText()
      expect(drawn).toContain('Ops bot')
      expect(drawn).toContain(DESCRIPTION)
      expect(drawn).toContain('restartService')
      const risk = card.locator('.risk')
      expect(await risk.textContent()).toBe('High risk')
      expect(await risk.isVisible()).toBe(true)
      const shot = join(mkdtempSync(join(tmpdir(), 'pushary-agent-card-')), 'agent-card.png')
      await card.screenshot({ path: shot })
      console.log(`agent card screenshot: ${shot}`)
    } finally {
      await context.close()
    }
  }, 90_000)
})
