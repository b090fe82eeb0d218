/**
 * Issue 41's cost bar: "a 3-approver decision adds no more than the cost of
 * its extra creates and one settle". One workflow (approval step, gate,
 * protected step) on its own Mastra LibSQL file, with the bench's decision
 * service (loopback HTTP), client and SQLite review store, run two ways in
 * turning order:
 * - A, one approver: `createRun` + `start` until suspended, the answer, then
 *   `dispatcher.resumeDecision` until the protected step ran;
 * - B, 2 of 3 (the same workflow, `approvers` in the input): `start` until
 *   suspended on three decisions, two answers, each approval dispatched (the
 *   first resume applies it and the run waits on; the second settles the
 *   set, runs the protected step once and withdraws the third decision).
 * The answers are the people's side and are not timed: A and B time only the
 * package's calls (the start and every resume). In the same rounds, the
 * parts the bound is made of: asking one more member (a
 * `client.decisions.create` shaped like a member's, with its context,
 * idempotency key and card parameters, and the save of its review), one
 * `client.decisions.cancel` of an open decision, ending a withdrawn
 * member's review (re-read, claim, finish), against the same service and
 * store, and one read of an open member's decision. B is A plus two
 * member asks, the second approval's resume (a member resume that does not
 * complete the run: B's first) and one settle: reading the member still
 * open, withdrawing it and ending its review. Each round's bound is summed
 * from that round's parts (as each B sample sums its own parts).
 */
import { join } from 'node:path'
import { Mastra } from '@mastra/core/mastra'
import { createStep, createWorkflow } from '@mastra/core/workflows'
import { LibSQLStore } from '@mastra/libsql'
import { z } from 'zod/v4'
import { createPusharyDispatcher } from '../../src/agents/dispatcher.js'
import { fingerprintPusharyAction } from '../../src/pushary/identity.js'
import { pusharyAnswerSchema } from '../../src/pushary/question.js'
import { pusharyApprovalStepInputSchema } from '../../src/steps/approval-schemas.js'
import { pusharyApprovalStep } from '../../src/steps/approval-step.js'
import { approverCardParameters } from '../../src/steps/approver-set.js'
import { pusharyGate } from '../../src/steps/gate-step.js'
import {
  type PusharyWorkflowBinding,
  workflowApprovalKey,
  workflowBindingContext,
} from '../../src/steps/workflow-binding.js'
import { type BenchEnv, EXTERNAL_ID } from '../lib/env.js'
import { type Row, timedRow } from '../lib/report.js'
import { inTurningOrder, median, timed } from '../lib/stats.js'

const GROUP = '10. Several approvers'
const WORKFLOW_ID = 'approvers-bench'
const APPROVERS = ['bench-alice', 'bench-bob', 'bench-carol']
const RULE = { externalIds: APPROVERS, required: 2, veto: true }

interface Started {
  status: string
  steps?: Record<
    string,
    { suspendPayload?: { decisionId?: string; approvers?: { externalId: string; decisionId: string }[] } }
  >
}
interface RunLike {
  runId: string
  start(params: { inputData: unknown }): Promise<Started>
}
interface WorkflowLike {
  createRun(options?: { runId?: string }): Promise<RunLike>
}

/** The workflow both paths run, on its own Mastra, and the dispatcher over it. */
function approversSide(env: BenchEnv) {
  const effects = { protected: 0 }
  const config = { client: env.client, store: env.store }
  const workflow = createWorkflow({
    id: WORKFLOW_ID,
    inputSchema: pusharyApprovalStepInputSchema,
    outputSchema: z.object({ done: z.literal(true) }),
    options: { autoRestartActiveRuns: false },
  })
    .then(pusharyApprovalStep(config, { id: 'approve' }))
    .then(pusharyGate())
    .then(
      createStep({
        id: 'protected',
        inputSchema: pusharyAnswerSchema,
        outputSchema: z.object({ done: z.literal(true) }),
        execute: async () => {
          effects.protected++
          return { done: true as const }
        },
      }),
    )
    .commit()
  const mastra = new Mastra({
    storage: new LibSQLStore({ id: 'approvers', url: `file:${join(env.dir, 'mastra-approvers.db')}` }),
    workflows: { [WORKFLOW_ID]: workflow },
    logger: false,
  })
  const dispatcher = createPusharyDispatcher({
    mastra,
    client: env.client,
    store: env.store,
    webhookSecret: env.service.webhookSecret,
  })
  return {
    mastra,
    dispatcher,
    effects,
    workflow: () => mastra.getWorkflow(WORKFLOW_ID) as unknown as WorkflowLike,
  }
}
type ApproversSide = ReturnType<typeof approversSide>

const question = (operationId: string) => `Approve ${operationId}?`

/** Times `createRun` + `start` until the step suspended. */
async function timedStart(side: ApproversSide, inputData: Record<string, unknown>) {
  const started = await timed(async () => {
    const run = await side.workflow().createRun()
    return run.start({ inputData })
  })
  if (started.value.status !== 'suspended') throw new Error(`start ended ${started.value.status}`)
  return { ms: started.ms, payload: started.value.steps?.approve?.suspendPayload }
}

async function timedResume(side: ApproversSide, decisionId: string, runStatus: 'suspended' | 'success') {
  const resumed = await timed(() => side.dispatcher.resumeDecision(decisionId))
  const value = resumed.value
  if (value.status !== 'resumed' || value.runStatus !== runStatus) {
    throw new Error(`resumeDecision ended ${value.status}/${'runStatus' in value ? value.runStatus : ''}`)
  }
  return resumed.ms
}

/** A's timed parts: the start and the one resume. */
interface OneSample {
  totalMs: number
  startMs: number
  resumeMs: number
}

/** B's timed parts: the start, the first (member) resume and the resume that settles the set. */
interface SetSample {
  totalMs: number
  startMs: number
  memberResumeMs: number
  settleMs: number
}

/** A: one approver, start → suspended, answer, dispatched → protected step done. */
async function oneApprover(env: BenchEnv, side: ApproversSide, operationId: string): Promise<OneSample> {
  const asked = await timedStart(side, {
    operationId,
    question: question(operationId),
    type: 'confirm',
    externalId: EXTERNAL_ID,
  })
  const decisionId = asked.payload?.decisionId
  if (!decisionId) throw new Error('one approver: no decision')
  await env.client.decisions.answer(decisionId, 'yes')
  const before = side.effects.protected
  const resumeMs = await timedResume(side, decisionId, 'success')
  if (side.effects.protected !== before + 1)
    throw new Error('one approver: the protected step did not run once')
  return { totalMs: asked.ms + resumeMs, startMs: asked.ms, resumeMs }
}

async function twoOfThree(env: BenchEnv, side: ApproversSide, operationId: string): Promise<SetSample> {
  const asked = await timedStart(side, {
    operationId,
    question: question(operationId),
    type: 'confirm',
    approvers: { externalIds: APPROVERS, required: 2 },
  })
  const members = asked.payload?.approvers ?? []
  const [alice, bob, carol] = APPROVERS.map(
    (name) => members.find((member) => member.externalId === name)?.decisionId as string,
  )
  if (!alice || !bob || !carol) throw new Error(`2 of 3: ${members.length} decisions asked`)
  const before = side.effects.protected
  await env.client.decisions.answer(alice, 'yes')
  const memberResumeMs = await timedResume(side, alice, 'suspended')
  await env.client.decisions.answer(bob, 'yes')
  const settleMs = await timedResume(side, bob, 'success')
  // Checked outside the timed part: the action ran once, the third question was withdrawn.
  if (side.effects.protected !== before + 1) throw new Error('2 of 3: the protected step did not run once')
  const third = await env.client.decisions.get(carol)
  const review = await env.store.get(carol)
  if (third.status !== 'cancelled' || review?.state !== 'stale') {
    throw new Error(`2 of 3: the third decision is ${third.status}, its review ${review?.state}`)
  }
  return { totalMs: asked.ms + memberResumeMs + settleMs, startMs: asked.ms, memberResumeMs, settleMs }
}

function memberReview(
  binding: PusharyWorkflowBinding & { approverSet: { required: number } },
  decisionId: string,
) {
  return {
    target: 'workflow-step' as const,
    version: 1 as const,
    workflowId: binding.workflowId,
    runId: binding.runId,
    stepId: binding.stepId,
    forEachIndex: null,
    resumeLabel: decisionId,
    externalId: binding.externalId,
    operationId: binding.operationId,
    questionHash: fingerprintPusharyAction(binding.question),
    question: binding.question,
    approverSet: { decisionIds: [decisionId], externalIds: APPROVERS, required: 2, veto: true },
    decisionId,
    correlationId: decisionId,
    state: 'pending' as const,
  }
}

/**
 * Asking one more member, as the step does it: one create shaped like a
 * member's (binding context, idempotency key, card parameters) and the save
 * of the member's review.
 */
async function memberCreate(env: BenchEnv, operationId: string): Promise<number> {
  const binding = {
    workflowId: WORKFLOW_ID,
    runId: `create-${operationId}`,
    stepId: 'approve',
    operationId,
    externalId: 'bench-dave',
    question: { question: question(operationId), type: 'confirm' as const },
    approverSet: { required: 2 },
  }
  const created = await timed(async () => {
    const decision = await env.client.decisions.create({
      question: question(operationId),
      type: 'confirm',
      externalId: binding.externalId,
      parameters: approverCardParameters(RULE, binding.externalId, undefined),
      context: workflowBindingContext(binding),
      idempotencyKey: workflowApprovalKey(binding),
    })
    await env.store.save(memberReview(binding, decision.decisionId))
    return decision
  })
  if (!created.value.decisionId) throw new Error('create returned no decision')
  return created.ms
}

/**
 * Ending a withdrawn member's review, as a settling resume does it for the
 * third approver (its decision re-read, the review claimed and finished
 * `stale`); asked and withdrawn untimed first.
 */
async function withdrawnEnding(env: BenchEnv, operationId: string): Promise<number> {
  const binding = {
    workflowId: WORKFLOW_ID,
    runId: `withdrawn-${operationId}`,
    stepId: 'approve',
    operationId,
    externalId: 'bench-frank',
    question: { question: question(operationId), type: 'confirm' as const },
    approverSet: { required: 2 },
  }
  const asked = await env.client.decisions.create({
    question: question(operationId),
    type: 'confirm',
    externalId: binding.externalId,
    context: workflowBindingContext(binding),
  })
  await env.store.save(memberReview(binding, asked.decisionId))
  await env.client.decisions.cancel(asked.decisionId)
  const ended = await timed(async () => {
    const decision = await env.client.decisions.get(asked.decisionId)
    if (decision.status !== 'cancelled') throw new Error(`the withdrawn decision is ${decision.status}`)
    if ((await env.store.claim(asked.decisionId, binding.runId, 'bench')) !== 'claimed')
      throw new Error('no claim')
    await env.store.finish(asked.decisionId, 'stale', 'withdrawn')
  })
  return ended.ms
}

/** One read of an open member's decision, as the settling resume reads the members still open. */
async function openRead(env: BenchEnv, operationId: string): Promise<number> {
  const asked = await env.client.decisions.create({
    question: question(operationId),
    type: 'confirm',
    externalId: 'bench-grace',
  })
  const read = await timed(() => env.client.decisions.get(asked.decisionId))
  if (read.value.status !== 'pending') throw new Error(`the open decision is ${read.value.status}`)
  await env.client.decisions.cancel(asked.decisionId)
  return read.ms
}

/** One cancel of an open decision (asked untimed first). */
async function cancelOpen(env: BenchEnv, operationId: string): Promise<number> {
  const asked = await env.client.decisions.create({
    question: question(operationId),
    type: 'confirm',
    externalId: 'bench-erin',
  })
  const cancelled = await timed(() => env.client.decisions.cancel(asked.decisionId))
  const after = await env.client.decisions.get(asked.decisionId)
  if (after.status !== 'cancelled') throw new Error(`cancel left the decision ${after.status}`)
  return cancelled.ms
}

export async function benchApprovers(
  env: BenchEnv,
  options: { warmups: number; samples: number },
): Promise<Row[]> {
  const side = approversSide(env)
  try {
    const taken = await inTurningOrder(options, {
      one: (round) => oneApprover(env, side, `one-${round}`),
      set: (round) => twoOfThree(env, side, `set-${round}`),
      create: (round) => memberCreate(env, `create-${round}`),
      cancel: (round) => cancelOpen(env, `cancel-${round}`),
      ending: (round) => withdrawnEnding(env, `ending-${round}`),
      read: (round) => openRead(env, `read-${round}`),
    })
    const ones = taken.one.map((sample) => sample.totalMs)
    const of = <T>(samples: T[], pick: (sample: T) => number) => median(samples.map(pick)).toFixed(1)
    const create = median(taken.create)
    const cancel = median(taken.cancel)
    const memberResume = median(taken.set.map((sample) => sample.memberResumeMs))
    const ending = median(taken.ending)
    const read = median(taken.read)
    // The bound of each round from that round's own measurements (B is a
    // per-round sum too), and its median.
    const bounds = taken.one.map(
      (one, round) =>
        one.totalMs +
        2 * (taken.create[round] ?? create) +
        (taken.set[round]?.memberResumeMs ?? memberResume) +
        (taken.read[round] ?? read) +
        (taken.cancel[round] ?? cancel) +
        (taken.ending[round] ?? ending),
    )
    const bound = median(bounds)
    const params = `${options.samples} runs a path after ${options.warmups} warm-ups, in turning order, one process, loopback; answers not timed`
    const row = (scenario: string, samples: number[], extra: Partial<Row> = {}): Row =>
      timedRow({ group: GROUP, scenario, params }, samples, extra)
    const b = taken.set.map((sample) => sample.totalMs)
    return [
      row(
        'A, one approver: `start` → suspended, answer, `dispatcher.resumeDecision` → protected step done',
        ones,
        {
          note: `start ${of(taken.one, (s) => s.startMs)} ms, resume ${of(taken.one, (s) => s.resumeMs)} ms (medians)`,
        },
      ),
      row(
        'B, 2 of 3, same workflow: `start` (3 creates) → suspended, two approve, each dispatched → protected step done once, third withdrawn',
        b,
        {
          baseline: { label: 'bound A + 2·member ask + 1·member resume + 1·settle', value: bound },
          note: `start ${of(taken.set, (s) => s.startMs)} ms, first resume ${of(taken.set, (s) => s.memberResumeMs)} ms, settling resume ${of(taken.set, (s) => s.settleMs)} ms (medians); the bound is the median over rounds of that round's A + two extra member asks (create + the member's review save) + the second approval's member resume (one that applies an approval without completing the run) + one settle (reading the member still open, the cancel that withdraws it, ending its review)`,
          target: '≤ A + 2·member ask + 1·member resume + 1·settle',
          met: median(b) <= bound,
        },
      ),
      row(
        "part: asking one more member (`client.decisions.create` shaped like a member's + the save of its review)",
        taken.create,
      ),
      row(
        "part: member resume that does not complete the run (B's first approval: GET, claim, run.resume re-reading the set, suspend, finish)",
        taken.set.map((sample) => sample.memberResumeMs),
      ),
      row(
        "part: reading an open member's decision (`client.decisions.get` of a pending decision)",
        taken.read,
      ),
      row('part: `client.decisions.cancel` of an open decision', taken.cancel),
      row(
        "part: ending a withdrawn member's review (its decision re-read, claim, finish `stale`)",
        taken.ending,
      ),
    ]
  } finally {
    await side.mastra.shutdown()
  }
}
