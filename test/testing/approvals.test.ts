import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Agent } from '@mastra/core/agent'
import { Mastra } from '@mastra/core/mastra'
import { createTool } from '@mastra/core/tools'
import { createStep, createWorkflow } from '@mastra/core/workflows'
import { LibSQLStore } from '@mastra/libsql'
import {
  createPusharyDispatcher,
  createSqliteReviewStore,
  isPusharyDeclined,
  pusharyAnswerSchema,
  pusharyApprovalStep,
  pusharyApprovalStepInputSchema,
  pusharyApprovedAnswerSchema,
  pusharyGate,
  resolvePusharyApprovals,
} from '@pushary/mastra'
import {
  callsOnce,
  type PusharyTestService,
  type SimulatedPhone,
  scriptedModel,
  startPusharyTestService,
} from '@pushary/mastra/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'

const CUSTOMER = 'customer_1'
const dir = mkdtempSync(join(tmpdir(), 'my-app-test-'))
const refunds: string[] = []
const reasons: unknown[] = []

let service: PusharyTestService
let phone: SimulatedPhone

beforeAll(async () => {
  // The local decision service on a free port and a temporary SQLite file,
  // and a phone linked to the customer (it tapped the enrollment link).
  service = await startPusharyTestService()
  phone = await service.phone(CUSTOMER)
})
afterAll(() => service.close())

/** The app under test: a refund behind an approval and a gate, and a question whose answer is data. */
function buildApp() {
  const store = createSqliteReviewStore({ url: `file:${join(dir, 'reviews.db')}` })
  const config = { client: service.client, store }
  const refund = createStep({
    id: 'refund',
    inputSchema: pusharyApprovedAnswerSchema,
    outputSchema: z.object({ refunded: z.boolean() }),
    execute: async ({ getInitData }) => {
      refunds.push(getInitData<{ operationId: string }>().operationId)
      return { refunded: true }
    },
  })
  const recordReason = createStep({
    id: 'record-reason',
    inputSchema: pusharyAnswerSchema,
    outputSchema: z.object({ recorded: z.boolean() }),
    execute: async ({ inputData }) => {
      reasons.push(inputData.value)
      return { recorded: true }
    },
  })
  const refundWorkflow = createWorkflow({
    id: 'refund',
    inputSchema: pusharyApprovalStepInputSchema,
    outputSchema: z.unknown(),
    options: { autoRestartActiveRuns: false },
  })
    .then(pusharyApprovalStep(config, { externalId: CUSTOMER, requireReachable: true }))
    .then(pusharyGate())
    .then(refund)
    .commit()
  const askReason = createWorkflow({
    id: 'ask-reason',
    inputSchema: pusharyApprovalStepInputSchema,
    outputSchema: z.unknown(),
    options: { autoRestartActiveRuns: false },
  })
    .then(pusharyApprovalStep(config, { externalId: CUSTOMER }))
    .then(recordReason)
    .commit()
  const mastra = new Mastra({
    workflows: { refund: refundWorkflow, askReason },
    storage: new LibSQLStore({ id: 'app', url: `file:${join(dir, 'mastra.db')}` }),
    logger: false,
  })
  const dispatcher = createPusharyDispatcher({
    mastra,
    client: service.client,
    store,
    webhookSecret: service.webhookSecret,
  })
  return { mastra, dispatcher }
}

let app: ReturnType<typeof buildApp>
beforeAll(() => {
  app = buildApp()
})

/** Starts a run, lets the phone answer the question it asked, then resumes it (reconcile). */
async function runWorkflow(
  workflowId: 'refund' | 'askReason',
  inputData: z.infer<typeof pusharyApprovalStepInputSchema>,
  answer: (decisionId: string) => Promise<unknown>,
) {
  const workflow = app.mastra.getWorkflow(workflowId)
  const run = await workflow.createRun()
  expect((await run.start({ inputData })).status).toBe('suspended')
  const question = await phone.nextQuestion({ where: (q) => q.question === inputData.question })
  await answer(question.decisionId)
  await app.dispatcher.reconcile()
  return workflow.getWorkflowRunById(run.runId)
}

describe('refund workflow, answered on the phone', () => {
  it('refunds once when the customer taps Approve', async () => {
    const question = 'Refund EUR 48 on order o1?'
    const state = await runWorkflow(
      'refund',
      { operationId: 'refund:o1:v1', question, type: 'confirm' },
      (decisionId) => phone.approve(decisionId),
    )
    expect(state?.status).toBe('success')
    expect(refunds).toEqual(['refund:o1:v1'])
  })

  it('does not refund when the customer taps Deny', async () => {
    const question = 'Refund EUR 12 on order o2?'
    const state = await runWorkflow(
      'refund',
      { operationId: 'refund:o2:v1', question, type: 'confirm' },
      (decisionId) => phone.deny(decisionId),
    )
    expect(isPusharyDeclined(state?.result) && state.result.reason).toBe('denied')
    expect(refunds).not.toContain('refund:o2:v1')
  })

  it('hands the typed answer to the next step', async () => {
    const question = 'Why should order o3 be refunded?'
    const state = await runWorkflow(
      'askReason',
      { operationId: 'reason:o3:v1', question, type: 'input' },
      (decisionId) => phone.type(decisionId, 'It arrived broken'),
    )
    expect(state?.status).toBe('success')
    expect(reasons).toEqual(['It arrived broken'])
  })
})

describe('agent tool with requireApproval, answered on the phone', () => {
  function buildAgent(orderId: string) {
    const refundTool = createTool({
      id: 'refund',
      description: 'Refund an order',
      inputSchema: z.object({ orderId: z.string() }),
      outputSchema: z.object({ refunded: z.boolean() }),
      requireApproval: true,
      execute: async ({ orderId }) => {
        refunds.push(`agent:${orderId}`)
        return { refunded: true }
      },
    })
    const agent = new Agent({
      id: 'support',
      name: 'Support',
      instructions: 'Refund the order the customer names.',
      // No provider: the scripted model calls the tool once, then says "Done."
      model: scriptedModel(
        callsOnce([{ toolCallId: 'call_1', toolName: 'refund', input: { orderId } }], 'Done.'),
      ),
      tools: { refund: refundTool },
    })
    new Mastra({
      agents: { support: agent },
      storage: new LibSQLStore({ id: 'agent', url: `file:${join(dir, `agent-${orderId}.db`)}` }),
      logger: false,
    })
    return agent
  }

  async function askAgent(orderId: string, answer: (decisionId: string) => Promise<unknown>) {
    const agent = buildAgent(orderId)
    const output = await agent.generate(`Refund ${orderId}`, {
      memory: { thread: orderId, resource: CUSTOMER },
    })
    expect(output.finishReason).toBe('suspended')
    const [outcome] = await Promise.all([
      resolvePusharyApprovals(
        { client: service.client, externalId: CUSTOMER, policy: false, requireReachable: true },
        { agent, threadId: orderId },
      ),
      phone.nextQuestion({ where: (q) => q.text.includes(orderId) }).then((q) => answer(q.decisionId)),
    ])
    return outcome
  }

  it('runs the tool once when the customer taps Approve', async () => {
    const outcome = await askAgent('o4', (decisionId) => phone.approve(decisionId))
    expect(outcome.allApproved).toBe(true)
    expect(refunds.filter((entry) => entry === 'agent:o4')).toHaveLength(1)
  })

  it('never runs the tool when the customer taps Deny', async () => {
    const outcome = await askAgent('o5', (decisionId) => phone.deny(decisionId))
    expect(outcome.allApproved).toBe(false)
    expect(refunds).not.toContain('agent:o5')
  })
})
