/**
 * Issue 39, finding 7: an agent review's card shows the agent, what the tool
 * does and the risk, like a workflow card. Real Mastra agents driven by the
 * scripted model on a LibSQL file, the local decision service over loopback
 * HTTP, the card fields read back from the service's decision and from the
 * reviewer page an enrolled phone gets (drawn in Chromium:
 * agent-card.browser.test.ts).
 */
import { join } from 'node:path'
import { Agent } from '@mastra/core/agent'
import { ConsoleLogger } from '@mastra/core/logger'
import { Mastra } from '@mastra/core/mastra'
import { createTool } from '@mastra/core/tools'
import { LibSQLStore } from '@mastra/libsql'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod/v4'
import { createPusharyAskTool } from '../../src/agents/ask-tool.js'
import { openPusharyAgentReview } from '../../src/agents/open-review.js'
import { resolvePusharyApprovals } from '../../src/agents/resolve-approvals.js'
import type { PusharyReviewStore } from '../../src/store/review-store.js'
import { createSqliteReviewStore } from '../../src/store/sqlite-store.js'
import { createTestEnv, type TestEnv } from '../helpers/mastra.js'
import { enrollDevice, reviewGet } from '../server/support/devices.js'
import { answerNext, pendingDecisionOf } from './support/agent-env.js'
import { callsOnce, type ScriptedToolCall, scriptedModel } from './support/scripted-model.js'

const DESCRIPTION =
  'Restarts one service on the production cluster; open requests to it fail for about a minute.'

/** A real Mastra logger that keeps every warning. */
class CapturingLogger extends ConsoleLogger {
  readonly warnings: string[] = []
  override warn(message: string): void {
    this.warnings.push(message)
  }
}

let env: TestEnv
let store: PusharyReviewStore
let n = 0

beforeAll(async () => {
  env = await createTestEnv('agent-card')
  store = createSqliteReviewStore({ url: `file:${join(env.dir, 'reviews.db')}` })
})
afterAll(async () => {
  await store?.close()
  await env?.close()
})

function opsAgent(
  calls: ScriptedToolCall[],
  externalId: string,
  shown: { name: string; description: string } = { name: 'Ops bot', description: DESCRIPTION },
) {
  const restarted: string[] = []
  const restartService = createTool({
    id: 'restart-service',
    description: shown.description,
    inputSchema: z.object({ service: z.string() }),
    outputSchema: z.object({ restarted: z.boolean() }),
    requireApproval: true,
    execute: async ({ service }) => {
      restarted.push(service)
      return { restarted: true }
    },
  })
  const askHuman = createPusharyAskTool({ client: env.client }, { externalId, timeoutMs: 20_000 })
  const agent = new Agent({
    id: 'ops',
    name: shown.name,
    instructions: 'Restart services when asked.',
    model: scriptedModel(callsOnce(calls)),
    tools: { restartService, askHuman },
  })
  const logger = new CapturingLogger()
  const mastra = new Mastra({
    agents: { ops: agent },
    storage: new LibSQLStore({ id: `card${++n}`, url: `file:${join(env.dir, `mastra-${n}.db`)}` }),
    logger,
  })
  return { agent: mastra.getAgent('ops'), restarted, logger }
}

const restart = (id: string) => ({ toolCallId: id, toolName: 'restartService', input: { service: 'api' } })

async function suspendedRestart(id: string, shown?: { name: string; description: string }) {
  const externalId = `oncall_${++n}`
  const built = opsAgent([restart(id)], externalId, shown)
  const output = await built.agent.generate('Restart the api', {
    memory: { thread: `t${n}`, resource: externalId },
  })
  expect(output.finishReason).toBe('suspended')
  return { ...built, externalId, runId: output.runId as string }
}

describe('the agent card', () => {
  it('shows the agent name, the tool description and the configured risk, read back from the service and on the reviewer page', async () => {
    const s = await suspendedRestart('c1')
    const review = await openPusharyAgentReview(
      { client: env.client },
      {
        agent: s.agent,
        agentId: 'ops',
        runId: s.runId,
        toolCallId: 'c1',
        externalId: s.externalId,
        actionVersion: 'v1',
        store,
        tools: { restartService: { risk: 'high' } },
      },
    )
    const decision = await env.client.decisions.get(review.decisionId)
    expect(decision.agentName).toBe('Ops bot')
    expect(decision.toolName).toBe('restartService')
    expect(decision.presentation).toMatchObject({
      label: 'restartService',
      effect: DESCRIPTION,
      risk: 'high',
    })
    // The package's own review workflow reads `approved` itself: no missing-gate warning for it.
    expect(s.logger.warnings.filter((line) => line.includes('pusharyGate()'))).toEqual([])

    // The reviewer page as the enrolled phone gets it (the drawn card: agent-card.browser.test.ts).
    const device = await enrollDevice(env.client, s.externalId)
    const page = await reviewGet(`${env.server.url}/review`, device.cookie)
    expect(page.status).toBe(200)
    const card = page.text.slice(page.text.indexOf(`data-decision-id="${review.decisionId}"`))
    expect(card).toContain('<span class="agent">Ops bot</span>')
    expect(card).toContain(`<p class="effect">${DESCRIPTION}</p>`)
    expect(card).toContain('<span class="risk risk-high">High risk</span>')
  }, 90_000)

  it('binds what the card shows: another risk for the same call is another decision', async () => {
    const s = await suspendedRestart('c2')
    const open = (risk: string) =>
      openPusharyAgentReview(
        { client: env.client },
        {
          agent: s.agent,
          agentId: 'ops',
          runId: s.runId,
          toolCallId: 'c2',
          externalId: s.externalId,
          actionVersion: 'v1',
          store,
          tools: { restartService: { risk } },
        },
      )
    const high = await open('high')
    const low = await open('low')
    expect(low.decisionId).not.toBe(high.decisionId)
    expect(low.subjectHash).not.toBe(high.subjectHash)
    expect((await env.client.decisions.get(low.decisionId)).presentation).toMatchObject({ risk: 'low' })
  }, 60_000)

  it('refuses a risk the card cannot draw before anything is asked', async () => {
    const s = await suspendedRestart('c3')
    await expect(
      openPusharyAgentReview(
        { client: env.client },
        {
          agent: s.agent,
          agentId: 'ops',
          runId: s.runId,
          toolCallId: 'c3',
          externalId: s.externalId,
          actionVersion: 'v1',
          store,
          tools: { restartService: { risk: 'high\u200B' } },
        },
      ),
    ).rejects.toMatchObject({ code: 'invalid_options', field: 'target.tools.restartService.risk' })
    const { decisions } = await env.client.decisions.list({ externalId: s.externalId, limit: 5 })
    expect(decisions).toEqual([])
  }, 60_000)

  it('draws an agent name and a tool description that hold invisible characters visibly, instead of failing the review', async () => {
    // Written by the developer, read from Mastra: an emoji with its variation
    // selector (U+FE0F) is common there, and must neither vanish on the card
    // nor stop the agent from asking.
    const s = await suspendedRestart('c5', {
      name: 'Ops \u{1F6E0}\uFE0F',
      description: '\u26A0\uFE0F Restarts api',
    })
    const review = await openPusharyAgentReview(
      { client: env.client },
      {
        agent: s.agent,
        agentId: 'ops',
        runId: s.runId,
        toolCallId: 'c5',
        externalId: s.externalId,
        actionVersion: 'v1',
        store,
      },
    )
    const decision = await env.client.decisions.get(review.decisionId)
    expect(decision.agentName).toBe('Ops \u{1F6E0}⟦U+FE0F⟧')
    expect(decision.presentation).toMatchObject({ effect: '\u26A0⟦U+FE0F⟧ Restarts api', risk: 'medium' })
  }, 60_000)

  it('defaults the risk to medium on the resolver path, with the agent name and the tool description', async () => {
    const s = await suspendedRestart('c4')
    const answered = answerNext(env.client, s.externalId, 'yes')
    const outcome = await resolvePusharyApprovals(
      { client: env.client, externalId: s.externalId, policy: false, timeoutMs: 20_000 },
      { agent: s.agent, resourceId: s.externalId },
    )
    const decision = await answered
    expect(decision.agentName).toBe('Ops bot')
    expect(decision.presentation).toMatchObject({ effect: DESCRIPTION, risk: 'medium' })
    expect(outcome.allApproved).toBe(true)
    expect(s.restarted).toEqual(['api'])
  }, 60_000)

  it("names the running agent on the blocking ask tool's card", async () => {
    const externalId = `oncall_${++n}`
    const built = opsAgent(
      [
        {
          toolCallId: 'q1',
          toolName: 'askHuman',
          input: { question: 'Restart the api now?', type: 'confirm' },
        },
      ],
      externalId,
    )
    const asked = pendingDecisionOf(env.client, externalId)
    const generated = built.agent.generate('Ask first', { memory: { thread: `t${n}`, resource: externalId } })
    const decision = await asked
    await env.client.decisions.answer(decision.decisionId, 'yes')
    await generated
    expect(decision.agentName).toBe('Ops bot')
    expect(decision.toolName).toBe('ask-human')
  }, 60_000)
})
