/**
 * Agent reviews, issue 12 target 2: a real Mastra agent (scripted model) whose
 * `requireApproval` refund tool suspended. Ours: the review is opened, the
 * decision answered yes, then `resumePusharyAgentReview` is timed until the
 * tool has run. Beside it, in the same run, the same agent shape approved
 * natively with `agent.approveToolCallGenerate`. A fresh agent set per sample
 * (the scripted model calls its tool once); building it is not timed.
 */
import { mkdtempSync } from 'node:fs'
import { join } from 'node:path'
import { openPusharyAgentReview } from '../../src/agents/open-review.js'
import { resumePusharyAgentReview } from '../../src/agents/resume-review.js'
import { buildAgents } from '../../test/agents/support/agents.js'
import type { BenchEnv } from '../lib/env.js'
import type { Row } from '../lib/report.js'
import { summarize, timed } from '../lib/stats.js'

let sequence = 0

async function suspendedRefund(env: BenchEnv) {
  const n = ++sequence
  const externalId = `agent_customer_${n}`
  const built = buildAgents({
    dir: mkdtempSync(join(env.dir, `agent-${n}-`)),
    client: env.client,
    externalId,
    calls: [{ toolCallId: `r${n}`, toolName: 'issueRefund', input: { orderId: `o${n}`, amount: 20 } }],
  })
  const output = await built.refunder.generate('Refund it', {
    memory: { thread: `t${n}`, resource: externalId },
  })
  if (output.finishReason !== 'suspended' || !output.runId)
    throw new Error(`generate ended ${output.finishReason}`)
  return { ...built, externalId, runId: output.runId, toolCallId: `r${n}` }
}

/** `around` wraps only the timed resume (the profile counts calls inside it). */
export async function agentResume(
  env: BenchEnv,
  around: <T>(body: () => Promise<T>) => Promise<T> = (body) => body(),
): Promise<number> {
  const s = await suspendedRefund(env)
  const config = { client: env.client }
  const review = await openPusharyAgentReview(config, {
    agent: s.refunder,
    agentId: 'refunder',
    runId: s.runId,
    toolCallId: s.toolCallId,
    externalId: s.externalId,
    actionVersion: 'v1',
    store: env.store,
  })
  await env.client.decisions.answer(review.decisionId, 'yes')
  const { ms, value } = await around(() =>
    timed(() =>
      resumePusharyAgentReview(config, {
        agent: s.refunder,
        agentId: 'refunder',
        externalId: s.externalId,
        decisionId: review.decisionId,
        store: env.store,
        currentActionVersion: () => 'v1',
      }),
    ),
  )
  if (value.status !== 'resumed' || s.executions.length !== 1)
    throw new Error(`agent review ended ${value.status}`)
  return ms
}

async function native(env: BenchEnv): Promise<number> {
  const s = await suspendedRefund(env)
  const { ms } = await timed(() =>
    s.refunder.approveToolCallGenerate({ runId: s.runId, toolCallId: s.toolCallId }),
  )
  if (s.executions.length !== 1) throw new Error('native approval did not run the tool')
  return ms
}

export async function benchAgentReview(
  env: BenchEnv,
  options: { warmups: number; samples: number },
): Promise<Row> {
  const oursMs: number[] = []
  const nativeMs: number[] = []
  for (let round = 0; round < options.warmups + options.samples; round++) {
    const a = await agentResume(env)
    const b = await native(env)
    if (round < options.warmups) continue
    oursMs.push(a)
    nativeMs.push(b)
  }
  const summary = summarize(oursMs)
  const baseline = summarize(nativeMs).median
  return {
    group: '2. Agent reviews',
    scenario: 'answered agent review → `resumePusharyAgentReview` → tool executed',
    params: `${options.samples} reviews after ${options.warmups} warm-ups, scripted model, requireApproval tool`,
    unit: 'ms',
    median: summary.median,
    p95: summary.p95,
    p99: summary.p99,
    baseline: { label: 'native `approveToolCallGenerate`, same agent shape', value: baseline },
    target: '≤ 1.1× native',
    met: summary.median <= 1.1 * baseline,
  }
}
