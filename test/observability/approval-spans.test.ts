import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { LibSQLStore } from '@mastra/libsql'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestEnv, runFixture, type TestEnv, writeEnvFile } from '../helpers/mastra.js'

const SCRIPT = 'test/observability/fixtures/span-app.ts'
// How long the fake person takes to answer.
const DELAY_MS = 1500
// Generous: the resume runs in a fresh process on a shared 2-core machine.
const SLACK_MS = 30_000

type Span = {
  spanId: string
  parentSpanId: string | null
  traceId: string
  name: string
  startedAt: Date
  endedAt: Date | null
  metadata: Record<string, unknown> | null
}

let env: TestEnv
beforeAll(async () => {
  env = await createTestEnv('spans')
})
afterAll(async () => {
  await env?.close()
})

function scenarioDir(name: string): string {
  const dir = join(env.dir, name)
  mkdirSync(dir, { recursive: true })
  writeEnvFile({ dir, baseUrl: env.baseUrl, apiKey: env.apiKey, webhookSecret: env.webhookSecret })
  return dir
}

async function storedSpans(dir: string): Promise<Span[]> {
  const storage = new LibSQLStore({ id: 'read', url: `file:${join(dir, 'mastra.db')}` })
  await storage.init()
  const observability = await storage.getStore('observability')
  if (!observability) throw new Error('no observability store')
  const { spans: roots } = await observability.listTraces({})
  const spans: Span[] = []
  for (const root of roots) {
    const trace = await observability.getTrace({ traceId: root.traceId })
    spans.push(...((trace?.spans ?? []) as unknown as Span[]))
  }
  return spans
}

async function askAnswerResume(dir: string, kind: 'workflow' | 'agent', off = false) {
  const options = off ? { script: SCRIPT, env: { PUSHARY_SPANS_OBSERVABILITY: 'off' } } : { script: SCRIPT }
  const asked = await runFixture<{ status: string; decisionId: string }>([`${kind}-ask`, dir], options)
  expect(asked.status).toBe('suspended')
  await new Promise((resolve) => setTimeout(resolve, DELAY_MS))
  await env.client.decisions.answer(asked.decisionId, 'yes')
  const resumed = await runFixture<{ status: string }>(
    [`${kind}-resume`, dir, JSON.stringify({ decisionId: asked.decisionId })],
    options,
  )
  expect(resumed.status).toBe('resumed')
  return asked.decisionId
}

function one(spans: Span[], name: string, decisionId: string): Span {
  const found = spans.filter(
    (span) => span.name === name && span.metadata?.['pushary.decisionId'] === decisionId,
  )
  expect(found, name).toHaveLength(1)
  return found[0]!
}

function expectApprovalSpans(spans: Span[], decisionId: string, stepName: string, kind: string): void {
  const ask = one(spans, 'pushary.ask', decisionId)
  const step = spans.find((span) => span.spanId === ask.parentSpanId)
  expect(step?.name).toBe(stepName)
  expect(ask.metadata).toMatchObject({
    'pushary.questionType': 'confirm',
    'pushary.risk': 'high',
    'pushary.delivery': 'push',
    'pushary.fallbackLink': false,
    'pushary.outcome': 'asked',
  })
  // Hashed by default: the customer ID itself is never on a span.
  expect(ask.metadata?.['pushary.customer']).toMatch(/^sha256:[0-9a-f]{16}$/)
  // (Mastra's own step spans carry the step input; `hideInput` in its tracing options covers those.)
  expect(JSON.stringify(spans.filter((span) => span.name.startsWith('pushary.')))).not.toContain('customer_1')

  // Recorded by the resuming process, in the asking trace, under the asking step.
  const waiting = one(spans, 'pushary.waiting', decisionId)
  const resume = one(spans, 'pushary.resume', decisionId)
  for (const span of [waiting, resume]) {
    expect(span.traceId).toBe(ask.traceId)
    expect(span.parentSpanId).toBe(step?.spanId)
  }
  expect(resume.metadata).toMatchObject({
    'pushary.kind': kind,
    'pushary.outcome': 'resumed',
    'pushary.risk': 'high',
    // The claim's result rides on the resume span (no event span of its own).
    'pushary.claim': 'claimed',
  })
  const waited = waiting.endedAt!.getTime() - waiting.startedAt.getTime()
  expect(waited).toBeGreaterThanOrEqual(DELAY_MS)
  expect(waited).toBeLessThan(DELAY_MS + SLACK_MS)
  expect(waiting.metadata?.['pushary.humanLatencyMs']).toBeGreaterThanOrEqual(DELAY_MS)

  const children = spans.filter((span) => span.parentSpanId === resume.spanId)
  const byName = Object.fromEntries(children.map((span) => [span.name, span.metadata]))
  expect(byName['pushary.answer']).toMatchObject({
    'pushary.verified': true,
    'pushary.status': 'answered',
    'pushary.approved': true,
  })
  expect(Object.keys(byName).sort()).toEqual(['pushary.answer', 'pushary.end'])
  expect(byName['pushary.end']).toMatchObject({
    'pushary.outcome': 'resumed',
    'pushary.actionOutcome': 'ran',
  })
  // No answer text by default.
  for (const span of spans) expect(span.metadata?.['pushary.answer']).toBeUndefined()
}

describe('approval spans through Mastra observability', () => {
  it('records asked, waiting, answer, resume (with its claim) and ending spans of a workflow approval resumed in another process, in the asking trace', async () => {
    const dir = scenarioDir('workflow')
    const decisionId = await askAnswerResume(dir, 'workflow')
    expectApprovalSpans(await storedSpans(dir), decisionId, "workflow step: 'approve'", 'workflow-step')
  }, 120_000)

  it("records an agent approval's spans in the agent's own trace, resumed in another process", async () => {
    const dir = scenarioDir('agent')
    const decisionId = await askAnswerResume(dir, 'agent')
    const spans = await storedSpans(dir)
    expectApprovalSpans(spans, decisionId, "workflow step: 'ask'", 'agent')
    const review = spans.find((span) => span.name === 'pushary.agent-review')
    const agentRun = spans.find((span) => span.name === "agent run: 'refunder'")
    expect(review?.traceId).toBe(agentRun?.traceId)
    expect(one(spans, 'pushary.ask', decisionId).traceId).toBe(agentRun?.traceId)
  }, 120_000)

  it('records nothing when observability is off', async () => {
    const dir = scenarioDir('off')
    await askAnswerResume(dir, 'workflow', true)
    await askAnswerResume(dir, 'agent', true)
    expect(await storedSpans(dir)).toEqual([])
  }, 120_000)
})
