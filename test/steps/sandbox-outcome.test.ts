/**
 * `sandboxOutcome` against the local decision service in sandbox mode, over
 * loopback HTTP, with real Mastra runs and agents: nobody answers, the
 * service answers as told, and the approval step, the blocking ask tool and
 * an agent's `requireApproval` review follow that answer (approve runs the
 * action once, deny runs nothing).
 */
import { Agent } from '@mastra/core/agent'
import type { Mastra } from '@mastra/core/mastra'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPusharyAskTool } from '../../src/agents/ask-tool.js'
import { createPusharyDispatcher } from '../../src/agents/dispatcher.js'
import { resolvePusharyApprovals } from '../../src/agents/resolve-approvals.js'
import { isPusharyValidationError } from '../../src/pushary/errors.js'
import { pusharyApprovalStep } from '../../src/steps/approval-step.js'
import type { PusharyReviewStore } from '../../src/store/review-store.js'
import { toolResults } from '../agents/support/agent-env.js'
import { callsOnce, scriptedModel } from '../agents/support/scripted-model.js'
import { createTestEnv, type TestEnv } from '../helpers/mastra.js'
import { mastraOnFile, refundAgent, refundWorkflow, scratchReviewStore } from './support/refund-fixtures.js'

let env: TestEnv
let dir: string
let store: PusharyReviewStore
let mastra: Mastra
const refunds: Record<string, number> = { approve: 0, deny: 0 }

function sandboxWorkflow(outcome: 'approve' | 'deny') {
  return refundWorkflow({
    id: `sandbox-${outcome}`,
    config: { client: env.client, store },
    approval: { id: 'approve', sandboxOutcome: outcome },
    onRefund: () => {
      refunds[outcome] = (refunds[outcome] ?? 0) + 1
    },
  })
}

beforeAll(async () => {
  env = await createTestEnv('sandbox-outcome', { sandbox: true })
  const scratch = scratchReviewStore('pushary-sandbox-mastra-')
  dir = scratch.dir
  store = scratch.store
  mastra = mastraOnFile({
    dir,
    id: 'sandbox',
    workflows: { approveFlow: sandboxWorkflow('approve'), denyFlow: sandboxWorkflow('deny') },
  })
}, 60_000)

afterAll(async () => {
  await store?.close()
  await env?.close()
})

/** Waits (long-poll) until the sandbox answered the decision the run suspended on. */
async function sandboxAnswered(decisionId: string) {
  return env.client.decisions.get(decisionId, { wait: 10 })
}

describe('sandboxOutcome on the approval step', () => {
  for (const [key, outcome, expected] of [
    ['approveFlow', 'approve', 1],
    ['denyFlow', 'deny', 0],
  ] as const) {
    it(`${outcome}: the service answers by itself and the refund runs ${expected} time(s)`, async () => {
      const dispatcher = createPusharyDispatcher({ mastra, client: env.client, store, webhookSecret: false })
      const run = await mastra.getWorkflow(key).createRun()
      const started = await run.start({
        inputData: {
          operationId: `refund:${outcome}`,
          question: 'Refund order o-9?',
          externalId: 'cust_sandbox',
        },
      })
      expect(started.status).toBe('suspended')
      const suspended = started.status === 'suspended' ? started.steps.approve : undefined
      const decisionId = (suspended as { suspendPayload?: { decisionId?: string } }).suspendPayload
        ?.decisionId
      expect(decisionId).toBeDefined()
      const answered = await sandboxAnswered(decisionId as string)
      expect(answered).toMatchObject({ status: 'answered', value: outcome === 'approve' ? 'yes' : 'no' })

      const result = await dispatcher.resumeDecision(decisionId as string)
      expect(result).toMatchObject({ status: 'resumed', answer: { approved: outcome === 'approve' } })
      expect((await dispatcher.resumeDecision(decisionId as string)).status).toBe('duplicate')
      expect(refunds[outcome]).toBe(expected)
    })
  }

  it('refuses an unknown sandboxOutcome, naming the field, before anything is asked', () => {
    let caught: unknown
    try {
      pusharyApprovalStep({ client: env.client }, { sandboxOutcome: 'maybe' as never })
    } catch (error) {
      caught = error
    }
    expect(isPusharyValidationError(caught) && caught.field).toBe('opts.sandboxOutcome')
  })
})

describe('sandboxOutcome on the blocking ask tool', () => {
  it('returns the denial the service gave, never approval', async () => {
    const agent = new Agent({
      id: 'sandbox-asker',
      name: 'Sandbox asker',
      instructions: 'Ask the customer.',
      model: scriptedModel(
        callsOnce([
          { toolCallId: 'ask_1', toolName: 'askHuman', input: { question: 'Refund?', type: 'confirm' } },
        ]),
      ),
      tools: {
        askHuman: createPusharyAskTool(
          { client: env.client },
          { externalId: 'cust_sandbox', sandboxOutcome: 'deny', timeoutMs: 10_000 },
        ),
      },
    })
    mastraOnFile({ dir, id: 'sandbox-ask', file: 'ask.db', agents: { asker: agent } })
    const output = await agent.generate('Ask them')
    expect(toolResults(output).get('ask_1')).toMatchObject({
      approved: false,
      value: 'no',
      status: 'answered',
    })
  })
})

describe('sandboxOutcome on an agent requireApproval review', () => {
  it('approve: the resolver follows the service answer and the tool runs once', async () => {
    let refunded = 0
    const agent = refundAgent({
      id: 'sandbox-refunder',
      name: 'Sandbox refunder',
      orderId: 'o-9',
      onRefund: () => {
        refunded += 1
      },
    })
    mastraOnFile({ dir, id: 'sandbox-agent', file: 'agent.db', agents: { refunder: agent } })
    const first = await agent.generate('Refund o-9', {
      memory: { thread: 'sandbox-thread', resource: 'cust_sandbox' },
    })
    expect(first.finishReason).toBe('suspended')
    expect(refunded).toBe(0)
    const outcome = await resolvePusharyApprovals(
      {
        client: env.client,
        externalId: 'cust_sandbox',
        policy: false,
        sandboxOutcome: 'approve',
        timeoutMs: 10_000,
      },
      { agent, resourceId: 'cust_sandbox' },
    )
    expect(outcome.allApproved).toBe(true)
    expect(outcome.resolved).toHaveLength(1)
    expect(refunded).toBe(1)
  })
})
