/**
 * The info lines that show each approval's path (asked, answered, resumed)
 * in real runs: Mastra on a LibSQL file with a logger that keeps every call
 * (level, message, structured fields), the local decision service over
 * loopback HTTP, the SQLite review store. A workflow approval (approval step,
 * gate, protected step) resumed by the dispatcher, a workflow question whose
 * typed answer is distinctive, and agent reviews (a `requireApproval` call
 * and a deferred question) opened with `openPusharyAgentReview` and resumed
 * with `resumePusharyAgentReview`. No line, at any level, carries the
 * answer's text or the customer ID.
 */
import { join } from 'node:path'
import { Agent } from '@mastra/core/agent'
import { ConsoleLogger } from '@mastra/core/logger'
import { Mastra } from '@mastra/core/mastra'
import { createTool } from '@mastra/core/tools'
import { createStep, createWorkflow } from '@mastra/core/workflows'
import { LibSQLStore } from '@mastra/libsql'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod/v4'
import { createPusharyDeferredAskTool } from '../../src/agents/deferred-ask-tool.js'
import { createPusharyDispatcher } from '../../src/agents/dispatcher.js'
import { openPusharyAgentReview } from '../../src/agents/open-review.js'
import { resumePusharyAgentReview } from '../../src/agents/resume-review.js'
import { pusharyAnswerSchema } from '../../src/pushary/question.js'
import { askingAgentOf } from '../../src/steps/approval-log.js'
import { pusharyApprovalStepInputSchema } from '../../src/steps/approval-schemas.js'
import { PACKAGE_WORKFLOW_OPTIONS, pusharyApprovalStep } from '../../src/steps/approval-step.js'
import type { PusharyApprovers } from '../../src/steps/approver-set.js'
import { pusharyGate } from '../../src/steps/gate-step.js'
import type { PusharyReviewStore } from '../../src/store/review-store.js'
import { createSqliteReviewStore } from '../../src/store/sqlite-store.js'
import { callsOnce, type ScriptedToolCall, scriptedModel } from '../../src/testing/scripted-model.js'
import { createTestEnv, type TestEnv } from '../helpers/mastra.js'

/** Distinctive: a line that carried either would be found by a plain substring search. */
const CUSTOMER = 'cust-okapi-4417'
const TYPED = 'violet kraken 7731'

type Level = 'debug' | 'info' | 'warn' | 'error'
interface Line {
  level: Level
  message: string
  fields: Record<string, unknown>
  /** Everything the call carried, as one string. */
  text: string
}

/** A real Mastra logger that keeps every call, as an operator's log sink would. */
class CapturingLogger extends ConsoleLogger {
  readonly lines: Line[] = []
  private keep(level: Level, message: string, args: unknown[]): void {
    const fields = (args.find((arg) => typeof arg === 'object' && arg !== null) ?? {}) as Record<
      string,
      unknown
    >
    this.lines.push({ level, message, fields, text: `${message} ${JSON.stringify(args)}` })
  }
  override debug(message: string, ...args: unknown[]): void {
    this.keep('debug', message, args)
  }
  override info(message: string, ...args: unknown[]): void {
    this.keep('info', message, args)
  }
  override warn(message: string, ...args: unknown[]): void {
    this.keep('warn', message, args)
  }
  override error(message: string, ...args: unknown[]): void {
    this.keep('error', message, args)
  }
}

let env: TestEnv
let store: PusharyReviewStore
let n = 0

beforeAll(async () => {
  env = await createTestEnv('approval-log')
  store = createSqliteReviewStore({ url: `file:${join(env.dir, 'reviews.db')}` })
})
afterAll(async () => {
  await store?.close()
  await env?.close()
})

/** The `[pushary]` lines of one event, in order. */
function events(logger: CapturingLogger, event: string): Line[] {
  return logger.lines.filter((line) => line.fields.event === event)
}

/** Exactly one line of `event` for `decisionId`, at info level. */
function oneLine(logger: CapturingLogger, event: string, decisionId: string): Line {
  const found = events(logger, event).filter((line) => line.fields.decisionId === decisionId)
  expect(found, `${event} lines for ${decisionId}`).toHaveLength(1)
  const line = found[0]!
  expect(line.level).toBe('info')
  expect(line.message).toMatch(/^\[pushary\] /)
  expect(line.message).toContain(decisionId)
  return line
}

/** Nothing the package logged (any level), nor any line at info or above, carries these. */
function expectNoneCarry(logger: CapturingLogger, ...secrets: string[]): void {
  const visible = logger.lines.filter(
    (line) => line.level !== 'debug' || line.message.startsWith('[pushary]'),
  )
  expect(visible.length).toBeGreaterThan(0)
  for (const line of visible) for (const secret of secrets) expect(line.text).not.toContain(secret)
}

describe('approval info lines through the Mastra logger', () => {
  function workflowApp(
    recipients: { externalId: string } | { approvers: PusharyApprovers } = { externalId: CUSTOMER },
  ) {
    const effects = { refunded: 0 }
    const refund = createWorkflow({
      id: 'refund',
      inputSchema: pusharyApprovalStepInputSchema,
      outputSchema: z.unknown(),
      options: PACKAGE_WORKFLOW_OPTIONS,
    })
      .then(pusharyApprovalStep({ client: env.client, store }, { id: 'approve', ...recipients }))
      .then(pusharyGate())
      .then(
        createStep({
          id: 'issue-refund',
          inputSchema: pusharyAnswerSchema,
          outputSchema: z.object({ refunded: z.boolean() }),
          execute: async () => {
            effects.refunded++
            return { refunded: true }
          },
        }),
      )
      .commit()
    const logger = new CapturingLogger()
    const mastra = new Mastra({
      workflows: { refund },
      storage: new LibSQLStore({ id: `log${++n}`, url: `file:${join(env.dir, `mastra-${n}.db`)}` }),
      logger,
    })
    const dispatcher = createPusharyDispatcher({ mastra, client: env.client, store })
    return { mastra, logger, dispatcher, effects }
  }

  async function asked(app: ReturnType<typeof workflowApp>, question: Record<string, unknown>) {
    const run = await app.mastra.getWorkflow('refund').createRun()
    const result = await run.start({ inputData: { operationId: `refund:${++n}`, ...question } as never })
    expect(result.status).toBe('suspended')
    const payload = (result as { suspendPayload?: Record<string, { decisionId?: string }> }).suspendPayload
    const decisionId = payload?.approve?.decisionId
    expect(decisionId).toBeTruthy()
    return { runId: run.runId, decisionId: decisionId! }
  }

  it('logs asked, answered (approved) and resumed for a workflow approval the dispatcher resumes', async () => {
    const app = workflowApp()
    const { runId, decisionId } = await asked(app, {
      question: 'Refund EUR 20 for order o_1?',
      type: 'confirm',
    })
    expect(oneLine(app.logger, 'pushary.asked', decisionId).fields).toMatchObject({
      decisionId,
      workflowId: 'refund',
      runId,
      stepId: 'approve',
      delivery: 'push',
    })
    // Asked, not yet answered: a resume that finds the decision pending logs neither line.
    expect((await app.dispatcher.resumeDecision(decisionId)).status).toBe('pending')
    expect(events(app.logger, 'pushary.answered')).toHaveLength(0)
    expect(events(app.logger, 'pushary.resumed')).toHaveLength(0)

    await env.client.decisions.answer(decisionId, 'yes')
    expect(await app.dispatcher.resumeDecision(decisionId)).toMatchObject({
      status: 'resumed',
      runStatus: 'success',
    })
    expect(app.effects.refunded).toBe(1)
    expect(oneLine(app.logger, 'pushary.answered', decisionId).fields).toMatchObject({
      decisionId,
      runId,
      status: 'answered',
      approved: true,
      target: 'workflow-step',
    })
    expect(oneLine(app.logger, 'pushary.resumed', decisionId).fields).toMatchObject({
      decisionId,
      status: 'resumed',
      state: 'completed',
    })
    // In order: asked, answered, resumed. A replay changed nothing and logs nothing.
    const order = app.logger.lines.map((line) => line.fields.event).filter((event) => event !== undefined)
    expect(order).toEqual(['pushary.asked', 'pushary.answered', 'pushary.resumed'])
    expect((await app.dispatcher.resumeDecision(decisionId)).status).toBe('duplicate')
    expect(events(app.logger, 'pushary.resumed')).toHaveLength(1)
    expectNoneCarry(app.logger, CUSTOMER)
  })

  it("logs one asked line per approver of a set, each naming its own decision, the run and the card's tool", async () => {
    const app = workflowApp({ approvers: { externalIds: ['alice', 'bob', 'carol'], required: 2 } })
    const run = await app.mastra.getWorkflow('refund').createRun()
    const result = await run.start({
      inputData: {
        operationId: `refund:${++n}`,
        question: 'Refund EUR 20 for order o_1?',
        type: 'confirm',
        subject: { toolName: 'refund.create' },
      } as never,
    })
    expect(result.status).toBe('suspended')
    const lines = events(app.logger, 'pushary.asked')
    expect(lines).toHaveLength(3)
    for (const line of lines) {
      expect(line.level).toBe('info')
      expect(line.fields).toMatchObject({
        workflowId: 'refund',
        runId: run.runId,
        stepId: 'approve',
        delivery: 'push',
        toolName: 'refund.create',
      })
      expect(line.message).toContain(`run ${run.runId} step approve tool refund.create`)
    }
    const decisionIds = lines.map((line) => line.fields.decisionId as string)
    const asked = await Promise.all(decisionIds.map((decisionId) => store.get(decisionId)))
    expect(asked.map((review) => (review as { externalId?: string } | null)?.externalId).sort()).toEqual([
      'alice',
      'bob',
      'carol',
    ])
  })

  it("keeps an asked line one line whatever the card's tool name holds, the field as given", async () => {
    const app = workflowApp()
    const toolName = 'refund.create\n[pushary] resumed: decision dec_forged resumed'
    const { decisionId } = await asked(app, {
      question: 'Refund EUR 20?',
      type: 'confirm',
      subject: { toolName },
    })
    const line = oneLine(app.logger, 'pushary.asked', decisionId)
    expect(line.fields.toolName).toBe(toolName)
    expect(line.message).not.toMatch(/[\n\r]/)
    expect(line.message).toContain('tool refund.create [pushary] resumed: decision dec_forged resumed)')
  })

  it("names an agent call only for the agent review's own workflow, whatever another workflow's input holds", () => {
    const input = { agent: { agentId: 'refunder', runId: 'run_1', toolCallId: 'call_1' } }
    expect(askingAgentOf('pushary-agent-review', input)).toEqual(input.agent)
    expect(askingAgentOf('refund', input)).toBeUndefined()
    expect(askingAgentOf('pushary-agent-review', { agent: { agentId: 'refunder' } })).toBeUndefined()
  })

  it("never logs a typed answer's text: an input question resumed by the dispatcher logs its reading only", async () => {
    const app = workflowApp()
    const { runId, decisionId } = await asked(app, {
      question: 'Which note goes on the refund?',
      type: 'input',
    })
    await env.client.decisions.answer(decisionId, TYPED)
    const result = await app.dispatcher.resumeDecision(decisionId)
    expect(result.status).toBe('resumed')
    // The gate refused the typed answer: the refund never ran.
    expect(app.effects.refunded).toBe(0)
    expect(oneLine(app.logger, 'pushary.answered', decisionId).fields).toMatchObject({
      runId,
      status: 'answered',
      approved: false,
    })
    oneLine(app.logger, 'pushary.resumed', decisionId)
    expectNoneCarry(app.logger, CUSTOMER, TYPED)
  })

  function agentApp(calls: ScriptedToolCall[]) {
    const executions: string[] = []
    const issueRefund = createTool({
      id: 'issue-refund',
      description: 'Refund an order',
      inputSchema: z.object({ orderId: z.string() }),
      outputSchema: z.object({ refunded: z.boolean() }),
      requireApproval: true,
      execute: async ({ orderId }) => {
        executions.push(orderId)
        return { refunded: true }
      },
    })
    const askHuman = createPusharyDeferredAskTool({ client: env.client }, { externalId: CUSTOMER })
    const refunder = new Agent({
      id: 'refunder',
      name: 'refunder',
      instructions: 'Refund when asked.',
      model: scriptedModel(callsOnce(calls)),
      tools: { issueRefund, askHuman },
    })
    const logger = new CapturingLogger()
    const mastra = new Mastra({
      agents: { refunder },
      storage: new LibSQLStore({ id: `log${++n}`, url: `file:${join(env.dir, `mastra-${n}.db`)}` }),
      logger,
    })
    return { mastra, refunder, logger, executions }
  }

  async function agentReview(calls: ScriptedToolCall[], answer: string) {
    const app = agentApp(calls)
    const output = await app.refunder.generate('Handle order o_1')
    expect(output.finishReason).toBe('suspended')
    const review = await openPusharyAgentReview(
      { client: env.client },
      {
        agent: app.refunder,
        agentId: 'refunder',
        runId: output.runId!,
        toolCallId: calls[0]!.toolCallId,
        externalId: CUSTOMER,
        actionVersion: 'draft_1',
        store,
      },
    )
    const askedLine = oneLine(app.logger, 'pushary.asked', review.decisionId)
    // Asked by the review's own workflow run, about the agent run the answered and resumed lines name.
    expect(askedLine.fields).toMatchObject({
      decisionId: review.decisionId,
      workflowId: 'pushary-agent-review',
      stepId: 'ask',
      delivery: 'push',
      toolName: calls[0]!.toolName,
      agent: { agentId: 'refunder', runId: review.runId, toolCallId: calls[0]!.toolCallId },
    })
    expect(askedLine.fields.runId).toEqual(expect.any(String))
    expect(askedLine.fields.runId).not.toBe(review.runId)
    expect(askedLine.message).toContain(
      `agent refunder run ${review.runId} call ${calls[0]!.toolCallId} tool ${calls[0]!.toolName}; review workflow pushary-agent-review`,
    )
    await env.client.decisions.answer(review.decisionId, answer)
    const result = await resumePusharyAgentReview(
      { client: env.client },
      {
        agent: app.refunder,
        agentId: 'refunder',
        externalId: CUSTOMER,
        decisionId: review.decisionId,
        store,
      },
    )
    expect(result.status).toBe('resumed')
    return { app, review }
  }

  it('logs asked, answered and resumed for an agent approval resumed with resumePusharyAgentReview', async () => {
    const { app, review } = await agentReview(
      [{ toolCallId: 'refund_1', toolName: 'issueRefund', input: { orderId: 'o_1' } }],
      'yes',
    )
    expect(app.executions).toEqual(['o_1'])
    expect(oneLine(app.logger, 'pushary.answered', review.decisionId).fields).toMatchObject({
      runId: review.runId,
      status: 'answered',
      approved: true,
      target: 'agent',
    })
    expect(oneLine(app.logger, 'pushary.resumed', review.decisionId).fields).toMatchObject({
      status: 'resumed',
      state: 'completed',
    })
    expectNoneCarry(app.logger, CUSTOMER)
  })

  it("logs an agent question's path without the typed answer", async () => {
    const { app, review } = await agentReview(
      [
        {
          toolCallId: 'ask_1',
          toolName: 'askHuman',
          input: { question: 'Which note goes on it?', type: 'input' },
        },
      ],
      TYPED,
    )
    expect(review.kind).toBe('question')
    expect(oneLine(app.logger, 'pushary.answered', review.decisionId).fields).toMatchObject({
      status: 'answered',
      approved: false,
      target: 'agent',
    })
    expect(oneLine(app.logger, 'pushary.resumed', review.decisionId).fields).toMatchObject({
      status: 'resumed',
      state: 'completed',
    })
    expectNoneCarry(app.logger, CUSTOMER, TYPED)
  })
})
