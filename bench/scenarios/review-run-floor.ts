/**
 * What keeping the review run costs in Mastra alone (issue 40: "keep the
 * design: an agent review is a claimable Mastra workflow run"). A bare
 * two-step workflow of the review run's shape, with no package code in it: a
 * step that suspends, then a step that approves the suspended agent call
 * natively. Its start until suspended (with the review run's own persistence
 * predicate) is the least an open that keeps the run adds; its resume until
 * the native approval returned, minus that native approval alone, is the
 * least a resume that keeps the run adds. Beside them, in the same rounds
 * and in turning order, both sides' open and resume of the same call shape,
 * so each row can set ours against the peer plus that floor, round by round.
 */
import { mkdtempSync } from 'node:fs'
import { join } from 'node:path'
import type { Mastra } from '@mastra/core/mastra'
import { createStep, createWorkflow } from '@mastra/core/workflows'
import { z } from 'zod/v4'
import { openPersistence } from '../../src/agents/review-run-persistence.js'
import { PACKAGE_WORKFLOW_OPTIONS } from '../../src/steps/approval-step.js'
import { buildAgents } from '../../test/agents/support/agents.js'
import type { BenchEnv } from '../lib/env.js'
import { type Row, timedRow } from '../lib/report.js'
import { inTurningOrder, median, timed } from '../lib/stats.js'
import type { Side, SuspendedRefund } from '../peer/side.js'

const GROUP = '8. Beside the peer'
const FLOOR_ID = 'bare-review-run'
let sequence = 0

interface BareRun {
  start(p: { inputData: unknown }): Promise<{ status: string }>
  resume(p: { step: string; resumeData: unknown }): Promise<{ status: string }>
}
interface BareWorkflow {
  createRun(o: { runId: string; shouldPersistSnapshot?: typeof openPersistence }): Promise<BareRun>
}

/**
 * A fresh agent (its own Mastra and LibSQL file) whose run suspended on its
 * `requireApproval` refund call; building it is never timed. Shared by every
 * side-by-side sample.
 */
export async function suspendedRefund(
  env: BenchEnv,
  tag: string,
): Promise<SuspendedRefund & { mastra: Mastra }> {
  const n = ++sequence
  const externalId = `side_customer_${n}`
  const toolCallId = `side-${tag}-${n}`
  const built = buildAgents({
    dir: mkdtempSync(join(env.dir, `side-${n}-`)),
    client: env.client,
    externalId,
    calls: [{ toolCallId, toolName: 'issueRefund', input: { orderId: `o${n}`, amount: 20 } }],
  })
  const output = await built.refunder.generate('Refund it', {
    memory: { thread: `t${n}`, resource: externalId },
  })
  if (output.finishReason !== 'suspended' || !output.runId)
    throw new Error(`generate ended ${output.finishReason}`)
  return {
    agent: built.refunder,
    agentId: 'refunder',
    runId: output.runId,
    toolCallId,
    externalId,
    executions: built.executions,
    mastra: built.mastra,
  }
}

/** The review run's shape with nothing of the package in it, registered on the call's own Mastra (untimed). */
function bareReviewWorkflow(call: SuspendedRefund & { mastra: Mastra }): BareWorkflow {
  const ask = createStep({
    id: 'ask',
    inputSchema: z.object({ runId: z.string(), toolCallId: z.string() }),
    outputSchema: z.object({ approved: z.boolean() }),
    resumeSchema: z.object({ approved: z.boolean() }),
    suspendSchema: z.object({ decisionId: z.string() }),
    execute: async ({ resumeData, suspend }) =>
      resumeData ? { approved: resumeData.approved } : suspend({ decisionId: `floor-${call.toolCallId}` }),
  })
  const act = createStep({
    id: 'act',
    inputSchema: z.object({ approved: z.boolean() }),
    outputSchema: z.object({ finishReason: z.string().nullable() }),
    execute: async () => {
      const output = await call.agent.approveToolCallGenerate({
        runId: call.runId,
        toolCallId: call.toolCallId,
      })
      return { finishReason: (output as { finishReason?: string }).finishReason ?? null }
    },
  })
  const workflow = createWorkflow({
    id: FLOOR_ID,
    inputSchema: z.object({ runId: z.string(), toolCallId: z.string() }),
    outputSchema: z.object({ finishReason: z.string().nullable() }),
    options: PACKAGE_WORKFLOW_OPTIONS,
  })
    .then(ask)
    .then(act)
    .commit()
  call.mastra.addWorkflow(workflow, FLOOR_ID)
  return call.mastra.getWorkflowById(FLOOR_ID as never) as unknown as BareWorkflow
}

interface AgentMeasure {
  open: number
  resume: number
}

/** One side's open and resume of a fresh call (as the side-by-side agent sample). */
async function sideSample(env: BenchEnv, side: Side): Promise<AgentMeasure> {
  const agent = side.agent
  if (!agent) throw new Error(`${side.label} has no agent reviews`)
  const call = await suspendedRefund(env, 'floor')
  const opened = await timed(() => agent.open(call))
  await env.client.decisions.answer(opened.value, 'yes')
  const resumed = await timed(() => agent.resume(call, opened.value))
  if (call.executions.length !== 1)
    throw new Error(`${side.label}: the refund ran ${call.executions.length}×`)
  return { open: opened.ms, resume: resumed.ms }
}

/** The bare run: start until suspended (open), resume until the native approval returned (resume). */
async function bareSample(env: BenchEnv): Promise<AgentMeasure> {
  const call = await suspendedRefund(env, 'floor')
  const workflow = bareReviewWorkflow(call)
  const runId = `bare-review-${call.toolCallId}`
  const opened = await timed(async () => {
    const run = await workflow.createRun({ runId, shouldPersistSnapshot: openPersistence })
    return run.start({ inputData: { runId: call.runId, toolCallId: call.toolCallId } })
  })
  if (opened.value.status !== 'suspended') throw new Error(`bare review run ended ${opened.value.status}`)
  const resumed = await timed(async () => {
    const run = await workflow.createRun({ runId })
    return run.resume({ step: 'ask', resumeData: { approved: true } })
  })
  if (resumed.value.status !== 'success' || call.executions.length !== 1)
    throw new Error(`bare review run resumed ${resumed.value.status}, refund ran ${call.executions.length}×`)
  return { open: opened.ms, resume: resumed.ms }
}

async function nativeSample(env: BenchEnv): Promise<number> {
  const call = await suspendedRefund(env, 'floor')
  const { ms } = await timed(() =>
    call.agent.approveToolCallGenerate({ runId: call.runId, toolCallId: call.toolCallId }),
  )
  if (call.executions.length !== 1) throw new Error('native approval did not run the refund')
  return ms
}

/**
 * Rows: the bare run's open and resume cost, then ours against the peer plus
 * that cost, per round (round r's peer open + bare start; round r's peer
 * resume + bare resume − native approval).
 */
export async function benchReviewRunFloor(
  env: BenchEnv,
  sides: readonly [Side, Side],
  rounds: { warmups: number; samples: number },
): Promise<Row[]> {
  const [ours, peer] = sides
  const taken = await inTurningOrder(rounds, {
    ours: () => sideSample(env, ours),
    peer: () => sideSample(env, peer),
    bare: () => bareSample(env),
    native: () => nativeSample(env),
  })
  const params = `${rounds.samples} rounds after ${rounds.warmups} warm-ups, the four paths in turning order; scripted model, requireApproval tool`
  const openCost = taken.bare.map((sample) => sample.open)
  const resumeCost = taken.bare.map((sample, index) => sample.resume - (taken.native[index] as number))
  const floor = (pick: keyof AgentMeasure, cost: number[]) =>
    median(taken.peer.map((sample, index) => sample[pick] + (cost[index] as number)))
  const row = (scenario: string, values: number[], extra: Partial<Row> = {}): Row =>
    timedRow({ group: GROUP, scenario, params }, values, extra)
  const openFloor = floor('open', openCost)
  const resumeFloor = floor('resume', resumeCost)
  const oursOpen = taken.ours.map((sample) => sample.open)
  const oursResume = taken.ours.map((sample) => sample.resume)
  return [
    row(
      "the review run's Mastra part of an open: a bare two-step run of its shape (suspend, then approve natively), `createRun` + `start` until suspended, the review run's persistence",
      openCost,
      { note: 'no package code in the run' },
    ),
    row(
      "the review run's Mastra part of a resume: the same bare run's `createRun` + `resume` until the native approval returned, minus that approval alone",
      resumeCost,
      { baseline: { label: 'native `approveToolCallGenerate` alone', value: median(taken.native) } },
    ),
    row("open an agent review, against the peer + the review run's Mastra part (per round)", oursOpen, {
      peer: { label: peer.label, value: median(taken.peer.map((sample) => sample.open)) },
      baseline: { label: "the peer + the bare run's start", value: openFloor },
      target: '≤ 1.0× that',
      met: median(oursOpen) <= openFloor,
    }),
    row(
      "answered agent review → resumed, against the peer + the review run's Mastra part (per round)",
      oursResume,
      {
        peer: { label: peer.label, value: median(taken.peer.map((sample) => sample.resume)) },
        baseline: { label: "the peer + the bare run's resume − native", value: resumeFloor },
        target: '≤ 1.0× that',
        met: median(oursResume) <= resumeFloor,
      },
    ),
  ]
}
