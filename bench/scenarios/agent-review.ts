/**
 * Agent reviews, issue 12 target 2 and issue 21 target 3: a real Mastra agent
 * (scripted model) whose `requireApproval` refund tool suspended. Ours: the
 * review is opened (timed: the open row), the decision answered yes, then
 * `resumePusharyAgentReview` is timed until the tool has run. Beside it, in
 * the same run and in turning order: the same agent shape approved natively
 * with `agent.approveToolCallGenerate`, and the floor of a verified agent
 * resume (that native call + one GET of an answered decision through the
 * client + two durable single-statement commits on the same disk); for the
 * open, one create through the client + one review-store save. A fresh agent
 * set per sample (the scripted model calls its tool once); building it is not timed.
 */
import { mkdtempSync } from 'node:fs'
import { join } from 'node:path'
import type { Client } from '@libsql/client'
import type { LibSQLStore } from '@mastra/libsql'
import { openPusharyAgentReview } from '../../src/agents/open-review.js'
import { resumePusharyAgentReview } from '../../src/agents/resume-review.js'
import type { PusharyAgentReview } from '../../src/store/review-schema.js'
import { buildAgents } from '../../test/agents/support/agents.js'
import { type BenchEnv, instrumentMastraStorage } from '../lib/env.js'
import type { Row } from '../lib/report.js'
import { inTurningOrder, summarize, timed } from '../lib/stats.js'
import { betweenTwoCommits, floorDatabase } from './resume.js'

const GROUP = '2. Agent reviews'
let sequence = 0

async function suspendedRefund(env: BenchEnv, counted: boolean) {
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
  if (counted) {
    // The agent's own Mastra (its LibSQL file): workflows and memory domains.
    const storage = built.mastra.getStorage() as unknown as LibSQLStore
    await instrumentMastraStorage(storage, env.probe, 'workflows')
    await instrumentMastraStorage(storage, env.probe, 'memory')
  }
  return { ...built, externalId, runId: output.runId, toolCallId: `r${n}` }
}

type Around = <T>(body: () => Promise<T>) => Promise<T>
const plain: Around = (body) => body()

/**
 * One agent review opened and resumed; returns both timings. `around` wraps
 * only the timed resume (the profile counts calls inside it); `counted` also
 * instruments the agent's own Mastra storage for that count.
 */
export async function agentReview(
  env: BenchEnv,
  around: Around = plain,
  counted = false,
  aroundOpen: Around = plain,
): Promise<{ openMs: number; resumeMs: number; review: PusharyAgentReview }> {
  const s = await suspendedRefund(env, counted)
  const config = { client: env.client }
  const { ms: openMs, value: review } = await aroundOpen(() =>
    timed(() =>
      openPusharyAgentReview(config, {
        agent: s.refunder,
        agentId: 'refunder',
        runId: s.runId,
        toolCallId: s.toolCallId,
        externalId: s.externalId,
        actionVersion: 'v1',
        store: env.store,
      }),
    ),
  )
  await env.client.decisions.answer(review.decisionId, 'yes')
  const { ms: resumeMs, value } = await around(() =>
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
  return { openMs, resumeMs, review }
}

/** Mastra's own approval of the same suspended call; `around` and `counted` as in {@link agentReview}. */
export async function nativeApproval(
  env: BenchEnv,
  around: Around = plain,
  counted = false,
): Promise<number> {
  const s = await suspendedRefund(env, counted)
  const { ms } = await around(() =>
    timed(() => s.refunder.approveToolCallGenerate({ runId: s.runId, toolCallId: s.toolCallId })),
  )
  if (s.executions.length !== 1) throw new Error('native approval did not run the tool')
  return ms
}

/** The floor of a verified agent resume: the native call + one GET + two durable commits. */
async function agentFloor(env: BenchEnv, db: Client, n: number): Promise<number> {
  const s = await suspendedRefund(env, false)
  const asked = await env.client.decisions.create({
    externalId: 'bench-agent-floor',
    question: `Refund ${s.runId}?`,
    type: 'confirm',
  })
  await env.client.decisions.answer(asked.decisionId, 'yes')
  const { ms, value } = await timed(async () => {
    const decision = await env.client.decisions.get(asked.decisionId)
    await betweenTwoCommits(db, `a${n}`, () =>
      s.refunder.approveToolCallGenerate({ runId: s.runId, toolCallId: s.toolCallId }),
    )
    return decision
  })
  if (value.status !== 'answered' || s.executions.length !== 1) throw new Error('agent floor did not run')
  return ms
}

/**
 * The floor of an open: one create through the client + one review-store save
 * of the same shape of review (a copy of an agent review opened earlier).
 */
async function openFloor(env: BenchEnv, template: PusharyAgentReview, n: number): Promise<number> {
  const { ms } = await timed(async () => {
    const asked = await env.client.decisions.create({
      externalId: template.externalId,
      question: `Refund order o${n}?`,
      type: 'confirm',
    })
    await env.store.save({
      ...template,
      runId: `open-floor-${n}`,
      decisionId: asked.decisionId,
      correlationId: asked.decisionId,
    })
  })
  return ms
}

export async function benchAgentReview(
  env: BenchEnv,
  options: { warmups: number; samples: number },
): Promise<Row[]> {
  const db = await floorDatabase(env, 'agent-floor')
  // The open floor saves a copy of the review opened last, so it has the same shape.
  let template = (await agentReview(env)).review
  let taken: {
    ours: { openMs: number; resumeMs: number }[]
    native: number[]
    floor: number[]
    openFloor: number[]
  }
  try {
    taken = await inTurningOrder(options, {
      ours: async () => {
        const reviewed = await agentReview(env)
        template = reviewed.review
        return reviewed
      },
      native: () => nativeApproval(env),
      floor: (round) => agentFloor(env, db, round),
      openFloor: (round) => openFloor(env, template, round),
    })
  } finally {
    db.close()
  }
  const ours = { open: taken.ours.map((r) => r.openMs), resume: taken.ours.map((r) => r.resumeMs) }
  const nativeMs = taken.native
  const floorMs = taken.floor
  const openFloorMs = taken.openFloor
  const params = `${options.samples} reviews after ${options.warmups} warm-ups, scripted model, requireApproval tool`
  const resume = summarize(ours.resume)
  const open = summarize(ours.open)
  const native = summarize(nativeMs).median
  const floor = summarize(floorMs)
  const openFloorSummary = summarize(openFloorMs)
  return [
    {
      group: GROUP,
      scenario: 'answered agent review → `resumePusharyAgentReview` → tool executed',
      params,
      unit: 'ms',
      median: resume.median,
      p95: resume.p95,
      p99: resume.p99,
      baseline: {
        label: 'agent floor: native approval + one GET + two durable commits',
        value: floor.median,
      },
      target: '≤ 1.2× agent floor',
      met: resume.median <= 1.2 * floor.median,
    },
    {
      group: GROUP,
      scenario: 'the same resume against native `approveToolCallGenerate`, same agent shape',
      params,
      unit: 'ms',
      median: resume.median,
      baseline: { label: 'native `approveToolCallGenerate`', value: native },
      target: '≤ 1.1× native',
      met: resume.median <= 1.1 * native,
    },
    {
      group: GROUP,
      scenario: 'agent floor: native approval + GET of the answered decision + two single-statement commits',
      params,
      unit: 'ms',
      median: floor.median,
      p95: floor.p95,
      p99: floor.p99,
      baseline: { label: 'native `approveToolCallGenerate`', value: native },
    },
    {
      group: GROUP,
      scenario: 'open an agent review: `openPusharyAgentReview` → decision asked, review saved',
      params,
      unit: 'ms',
      median: open.median,
      p95: open.p95,
      p99: open.p99,
      baseline: {
        label: 'one create through the client + one review-store save',
        value: openFloorSummary.median,
      },
      target: '≤ create + one save',
      met: open.median <= openFloorSummary.median,
    },
  ]
}
