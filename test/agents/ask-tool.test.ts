import { join } from 'node:path'
import { Agent } from '@mastra/core/agent'
import { Mastra } from '@mastra/core/mastra'
import { LibSQLStore } from '@mastra/libsql'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPusharyAskTool } from '../../src/agents/ask-tool.js'
import { connect } from '../../src/agents/connect.js'
import { isPusharyValidationError } from '../../src/pushary/errors.js'
import { createTestEnv, type TestEnv } from '../helpers/mastra.js'
import { answerNext, pendingDecisionOf, toolResults } from './support/agent-env.js'
import { callsOnce, scriptedModel } from './support/scripted-model.js'

let env: TestEnv

beforeAll(async () => {
  env = await createTestEnv('ask-tool')
})

afterAll(async () => {
  await env?.close()
})

function askingAgent(
  input: Record<string, unknown>,
  toolOptions: { timeoutMs?: number; expiresInSeconds?: number } = {},
  externalId = 'customer_ask',
) {
  const agent = new Agent({
    id: 'asker',
    name: 'Asker',
    instructions: 'Ask the customer.',
    model: scriptedModel(callsOnce([{ toolCallId: 'ask_1', toolName: 'askHuman', input }])),
    tools: {
      askHuman: createPusharyAskTool({ client: env.client }, { externalId, ...toolOptions }),
    },
  })
  new Mastra({
    agents: { asker: agent },
    storage: new LibSQLStore({ id: 'ask', url: `file:${join(env.dir, 'mastra.db')}` }),
    logger: false,
  })
  return agent
}

async function askAndAnswer(input: Record<string, unknown>, answer: string | 'cancel', externalId: string) {
  const agent = askingAgent(input, {}, externalId)
  const [output, decision] = await Promise.all([
    agent.generate('Ask them'),
    answerNext(env.client, externalId, answer),
  ])
  return { result: toolResults(output).get('ask_1'), decision, output }
}

describe('createPusharyAskTool', () => {
  it('approves only a confirm answered yes, asking the customer bound at construction', async () => {
    const { result, decision, output } = await askAndAnswer(
      // A model cannot pick whom to ask: a smuggled externalId is ignored.
      { question: 'Refund EUR 20 on order o1?', type: 'confirm', externalId: 'attacker' },
      'yes',
      'customer_yes',
    )
    expect(decision.externalId).toBe('customer_yes')
    expect(result).toEqual({
      approved: true,
      value: 'yes',
      status: 'answered',
      decisionId: decision.decisionId,
    })
    expect(output.text).toContain('"approved":true')
  })

  it('reports a confirm answered no as not approved', async () => {
    const { result } = await askAndAnswer({ question: 'Refund?', type: 'confirm' }, 'no', 'customer_no')
    expect(result).toEqual({
      approved: false,
      value: 'no',
      status: 'answered',
      decisionId: expect.any(String),
    })
  })

  it('keeps a select answered yes as data, never approval', async () => {
    const { result } = await askAndAnswer(
      { question: 'Which refund?', type: 'select', options: ['yes', 'store credit'] },
      'yes',
      'customer_select',
    )
    expect(result).toEqual({
      approved: false,
      value: 'yes',
      status: 'answered',
      decisionId: expect.any(String),
    })
  })

  it('keeps typed text yes as data, never approval', async () => {
    const { result } = await askAndAnswer(
      { question: 'Anything else?', type: 'input' },
      'yes',
      'customer_input',
    )
    expect(result).toEqual({
      approved: false,
      value: 'yes',
      status: 'answered',
      decisionId: expect.any(String),
    })
  })

  it('declines a cancelled question', async () => {
    const { result } = await askAndAnswer(
      { question: 'Refund?', type: 'confirm' },
      'cancel',
      'customer_cancel',
    )
    expect(result).toEqual({
      approved: false,
      value: null,
      status: 'cancelled',
      decisionId: expect.any(String),
    })
  })

  it('declines an expired question', async () => {
    const agent = askingAgent(
      { question: 'Refund?' },
      { expiresInSeconds: 1, timeoutMs: 20_000 },
      'customer_exp',
    )
    const output = await agent.generate('Ask them')
    expect(toolResults(output).get('ask_1')).toEqual({
      approved: false,
      value: null,
      status: 'expired',
      decisionId: expect.any(String),
    })
  })

  it('reports an unanswered local wait as still pending, not approved, and leaves the question open', async () => {
    const agent = askingAgent({ question: 'Refund?' }, { timeoutMs: 200 }, 'customer_wait')
    const output = await agent.generate('Ask them')
    const { decisions } = await env.client.decisions.list({ externalId: 'customer_wait' })
    // Nobody cancelled anything: the question is open, and the result names it for a follow-up.
    expect(decisions.map((d) => d.status)).toEqual(['pending'])
    expect(toolResults(output).get('ask_1')).toEqual({
      approved: false,
      value: null,
      status: 'pending',
      decisionId: decisions[0]?.decisionId,
    })
  })

  it('refuses a blank or 257-unit customer at construction, before any request', async () => {
    for (const externalId of ['   ', 'x'.repeat(257)]) {
      let error: unknown
      try {
        createPusharyAskTool({ client: env.client }, { externalId })
      } catch (caught) {
        error = caught
      }
      expect(isPusharyValidationError(error)).toBe(true)
      expect(error).toMatchObject({ code: 'invalid_external_id', field: 'opts.externalId' })
    }
  })
})

describe('connect', () => {
  it('returns a single-use enrollment link of the local service for the customer', async () => {
    const link = await connect({ apiKey: env.apiKey, baseUrl: env.baseUrl }, ' customer_1 ')
    expect(link.externalId).toBe(' customer_1 ')
    expect(link.universalLink).toMatch(/\/e\//)
    const page = await fetch(link.universalLink)
    expect(page.status).toBe(200)
  })

  it('reads PUSHARY_API_KEY and PUSHARY_BASE_URL when the config omits them', async () => {
    const saved = { key: process.env.PUSHARY_API_KEY, url: process.env.PUSHARY_BASE_URL }
    process.env.PUSHARY_API_KEY = env.apiKey
    process.env.PUSHARY_BASE_URL = env.baseUrl
    try {
      const link = await connect({}, 'customer_env')
      expect(link.universalLink.startsWith(env.baseUrl.replace('/api/v1/server', ''))).toBe(true)
    } finally {
      if (saved.key === undefined) delete process.env.PUSHARY_API_KEY
      else process.env.PUSHARY_API_KEY = saved.key
      if (saved.url === undefined) delete process.env.PUSHARY_BASE_URL
      else process.env.PUSHARY_BASE_URL = saved.url
    }
  })

  it('refuses a blank customer before any request', async () => {
    await expect(connect({ client: env.client }, ' ')).rejects.toMatchObject({
      code: 'invalid_external_id',
      field: 'externalId',
    })
    expect(pendingDecisionOf).toBeTypeOf('function')
  })
})
