/**
 * Issue 42's cost bar: a resume with Mastra's observability on costs at most
 * 5% more than with it off. Two Mastra instances in one process, each on its
 * own LibSQL file, with the same workflow (approval step, gate, protected
 * step), the same decision service, client and review store: one with
 * `@mastra/observability`'s DefaultExporter (spans stored in that LibSQL
 * storage, as Studio reads them), one without. Sample by sample, in turning
 * order: the first pass until the step suspends (timed: the ask row), the
 * answer, then `dispatcher.resumeDecision` until the protected step ran
 * (timed: the resume row).
 *
 * The DefaultExporter batches its writes (on LibSQL, one batch every 5 s by
 * default); here each sample's spans are flushed right after its timed part,
 * outside it, so a batch never lands inside another sample (on or off). That
 * flush is timed on its own (the storage write of one resume's spans, and
 * of one first pass's) and reported beside the rows. At the end the stored
 * spans are read back: every observed resume left its `pushary.resume` span,
 * the other storage none.
 *
 * Beside them, on the same two instances and in the same turning order, bare
 * Mastra's resume of the same shape (a step that suspends under a label, the
 * gate, the protected step) with observability on and off: what Mastra's own
 * tracing of a resumed run costs. And our resume with Mastra's spans only:
 * the run asked by an untraced Mastra (no asking trace, so the resume records
 * no approval spans) and resumed by a traced one on the same storage, which
 * splits the difference into Mastra's spans of the resumed run and the
 * approval spans' own cost.
 */
import { join } from 'node:path'
import { Mastra } from '@mastra/core/mastra'
import { createStep, createWorkflow } from '@mastra/core/workflows'
import { LibSQLStore } from '@mastra/libsql'
import { DefaultExporter, Observability } from '@mastra/observability'
import { z } from 'zod/v4'
import { createPusharyDispatcher } from '../../src/agents/dispatcher.js'
import { pusharyAnswerSchema } from '../../src/pushary/question.js'
import { pusharyApprovalStepInputSchema } from '../../src/steps/approval-schemas.js'
import { pusharyApprovalStep } from '../../src/steps/approval-step.js'
import { pusharyGate } from '../../src/steps/gate-step.js'
import { type BenchEnv, EXTERNAL_ID } from '../lib/env.js'
import { type Row, timedRow } from '../lib/report.js'
import { inTurningOrder, median, timed } from '../lib/stats.js'

const GROUP = '9. Observability'
const WORKFLOW_ID = 'observed'
const BARE_ID = 'bare-observed'

interface RunLike {
  runId: string
  start(params: { inputData: unknown }): Promise<{
    status: string
    steps?: Record<string, { suspendPayload?: { decisionId?: string } }>
  }>
  resume(params: { label: string; resumeData: unknown }): Promise<{ status: string }>
}
interface WorkflowLike {
  createRun(options?: { runId?: string }): Promise<RunLike>
}

/**
 * One side: its own Mastra (observability on or off), dispatcher and effect
 * counts; on its own LibSQL file unless `file` names one another side shares.
 */
export function observabilitySide(env: BenchEnv, name: 'on' | 'off', file = `mastra-${name}.db`) {
  const effects = { protected: 0, bare: 0 }
  const config = { client: env.client, store: env.store }
  const protectedStep = (count: () => void) =>
    createStep({
      id: 'protected',
      inputSchema: pusharyAnswerSchema,
      outputSchema: z.object({ done: z.literal(true) }),
      execute: async () => {
        count()
        return { done: true as const }
      },
    })
  const workflow = createWorkflow({
    id: WORKFLOW_ID,
    inputSchema: pusharyApprovalStepInputSchema,
    outputSchema: z.object({ done: z.literal(true) }),
    options: { autoRestartActiveRuns: false },
  })
    .then(pusharyApprovalStep(config, { externalId: EXTERNAL_ID }))
    .then(pusharyGate())
    .then(protectedStep(() => effects.protected++))
    .commit()
  // Bare Mastra, same shape: a step that suspends under a label, the gate, the protected step.
  const bare = createWorkflow({
    id: BARE_ID,
    inputSchema: pusharyApprovalStepInputSchema,
    outputSchema: z.object({ done: z.literal(true) }),
    options: { autoRestartActiveRuns: false },
  })
    .then(
      createStep({
        id: 'approval',
        inputSchema: pusharyApprovalStepInputSchema,
        outputSchema: pusharyAnswerSchema,
        resumeSchema: z.object({ answer: z.string() }),
        suspendSchema: z.object({ label: z.string() }),
        execute: async ({ inputData, resumeData, suspend }) => {
          if (resumeData) {
            return {
              status: 'answered' as const,
              value: resumeData.answer,
              approved: resumeData.answer === 'yes',
            }
          }
          return suspend({ label: inputData.operationId }, { resumeLabel: inputData.operationId })
        },
      }),
    )
    .then(pusharyGate())
    .then(protectedStep(() => effects.bare++))
    .commit()
  const storage = new LibSQLStore({
    id: `observability-${name}-${file}`,
    url: `file:${join(env.dir, file)}`,
  })
  const mastra = new Mastra({
    storage,
    workflows: { [WORKFLOW_ID]: workflow, [BARE_ID]: bare },
    logger: false,
    ...(name === 'on'
      ? {
          observability: new Observability({
            configs: { default: { serviceName: 'bench', exporters: [new DefaultExporter()] } },
          }),
        }
      : {}),
  })
  const dispatcher = createPusharyDispatcher({
    mastra,
    client: env.client,
    store: env.store,
    webhookSecret: env.service.webhookSecret,
  })
  return { name, mastra, storage, dispatcher, effects }
}
export type ObservabilitySide = ReturnType<typeof observabilitySide>

/** Hands whatever the exporter holds to storage now; times it (a no-op without observability). */
async function flushed(of: ObservabilitySide): Promise<number> {
  if (of.name === 'off') return 0
  return (await timed(() => of.mastra.observability.flush())).ms
}

/** One sample: the timed first pass and resume, and each one's span flush (outside them). */
export interface ObservedSample {
  askMs: number
  resumeMs: number
  askFlushMs: number
  resumeFlushMs: number
}

/** Runs the timed part of a resume; a profile wraps it to sample only that part. */
export type Around = <T>(body: () => Promise<T>) => Promise<T>
const plain: Around = (body) => body()

const input = (operationId: string) => ({ operationId, question: `Approve ${operationId}?`, type: 'confirm' })

/** Our workflow: first pass until the approval step asked, the answer, `dispatcher.resumeDecision`. */
export async function askAndResume(
  env: BenchEnv,
  of: ObservabilitySide,
  operationId: string,
  around = plain,
  /** Another side on the same storage that asks instead (untraced: no approval spans on the resume). */
  asker: ObservabilitySide = of,
): Promise<ObservedSample> {
  const workflow = asker.mastra.getWorkflow(WORKFLOW_ID) as unknown as WorkflowLike
  const asked = await timed(async () => {
    const run = await workflow.createRun()
    return run.start({ inputData: input(operationId) })
  })
  const decisionId = asked.value.steps?.['pushary-approval']?.suspendPayload?.decisionId
  if (asked.value.status !== 'suspended' || !decisionId) throw new Error(`start ended ${asked.value.status}`)
  const askFlushMs = await flushed(asker)
  await env.client.decisions.answer(decisionId, 'yes')
  const before = of.effects.protected
  const resumed = await around(() => timed(() => of.dispatcher.resumeDecision(decisionId)))
  const value = resumed.value
  if (value.status !== 'resumed' || value.runStatus !== 'success' || of.effects.protected !== before + 1) {
    throw new Error(
      `resumeDecision (${of.name}) ended ${value.status}/${'runStatus' in value ? value.runStatus : ''}`,
    )
  }
  const resumeFlushMs = await flushed(of)
  return { askMs: asked.ms, resumeMs: resumed.ms, askFlushMs, resumeFlushMs }
}

/** Bare Mastra, same shape: `start` until suspended, then `createRun({ runId })` + `run.resume({ label })`. */
async function bareStartAndResume(of: ObservabilitySide, operationId: string): Promise<ObservedSample> {
  const workflow = of.mastra.getWorkflow(BARE_ID) as unknown as WorkflowLike
  const asked = await timed(async () => {
    const run = await workflow.createRun()
    return { run, result: await run.start({ inputData: input(operationId) }) }
  })
  if (asked.value.result.status !== 'suspended')
    throw new Error(`bare start ended ${asked.value.result.status}`)
  const askFlushMs = await flushed(of)
  const before = of.effects.bare
  const resumed = await timed(async () => {
    // A resumer holds only the run ID, like the dispatcher: it builds the run object first.
    const run = await workflow.createRun({ runId: asked.value.run.runId })
    return run.resume({ label: operationId, resumeData: { answer: 'yes' } })
  })
  if (resumed.value.status !== 'success' || of.effects.bare !== before + 1) {
    throw new Error(`bare resume (${of.name}) ended ${resumed.value.status}`)
  }
  const resumeFlushMs = await flushed(of)
  return { askMs: asked.ms, resumeMs: resumed.ms, askFlushMs, resumeFlushMs }
}

/** The stored spans named `name` (any name: `undefined`), across every trace of this storage (read back page by page). */
async function storedSpans(storage: LibSQLStore, name: string | undefined): Promise<number> {
  const observability = await storage.getStore('observability')
  if (!observability) return 0
  let count = 0
  for (let page = 0; ; page++) {
    const listed = await observability.listTraces({ pagination: { page, perPage: 100 } })
    for (const root of listed.spans) {
      const trace = await observability.getTrace({ traceId: root.traceId })
      count += (trace?.spans ?? []).filter((span) => name === undefined || span.name === name).length
    }
    if (!listed.pagination?.hasMore) return count
  }
}

export async function benchObservability(
  env: BenchEnv,
  options: { warmups: number; samples: number },
): Promise<Row[]> {
  const on = observabilitySide(env, 'on')
  const off = observabilitySide(env, 'off')
  // Mastra's spans alone: a run asked by an untraced Mastra (so no asking
  // trace, hence no approval spans) and resumed by a traced one, one storage.
  const untracedAsker = observabilitySide(env, 'off', 'mastra-mixed.db')
  const mastraOnly = observabilitySide(env, 'on', 'mastra-mixed.db')
  try {
    const taken = await inTurningOrder(options, {
      on: (round) => askAndResume(env, on, `observed-on-${round}`),
      off: (round) => askAndResume(env, off, `observed-off-${round}`),
      mastraOnly: (round) => askAndResume(env, mastraOnly, `observed-mixed-${round}`, plain, untracedAsker),
      bareOn: (round) => bareStartAndResume(on, `bare-on-${round}`),
      bareOff: (round) => bareStartAndResume(off, `bare-off-${round}`),
    })
    const rounds = options.warmups + options.samples
    const storedOn = await storedSpans(on.storage, 'pushary.resume')
    const storedOff = await storedSpans(off.storage, 'pushary.resume')
    const storedMixed = await storedSpans(mastraOnly.storage, 'pushary.resume')
    const mastraSpans = await storedSpans(mastraOnly.storage, undefined)
    if (storedOn !== rounds || storedOff !== 0 || storedMixed !== 0 || mastraSpans < rounds) {
      throw new Error(
        `expected ${rounds} stored pushary.resume spans on, 0 off and 0 with only Mastra's spans (of which at least ${rounds}), found ${storedOn}, ${storedOff}, ${storedMixed} (${mastraSpans})`,
      )
    }
    const params = `${options.samples} runs a side after ${options.warmups} warm-ups, on/off in turning order, one process, loopback`
    const row = (
      scenario: string,
      samples: { on: ObservedSample[]; off: ObservedSample[] },
      pick: 'askMs' | 'resumeMs',
      options: { note: string; target?: boolean; baseline?: string },
    ): Row => {
      const on = samples.on.map((sample) => sample[pick])
      const offMedian = median(samples.off.map((sample) => sample[pick]))
      const flush = median(
        samples.on.map((sample) => sample[pick === 'askMs' ? 'askFlushMs' : 'resumeFlushMs']),
      )
      return timedRow({ group: GROUP, scenario, params }, on, {
        baseline: { label: options.baseline ?? 'observability off', value: offMedian },
        note: `${options.note}; its spans' flush to LibSQL, outside the timed part: ${flush.toFixed(2)} ms median`,
        ...(options.target ? { target: '≤ 1.05× off', met: median(on) <= 1.05 * offMedian } : {}),
      })
    }
    const ours = { on: taken.on, off: taken.off }
    const bare = { on: taken.bareOn, off: taken.bareOff }
    return [
      row(
        'resume with observability on (spans stored) vs off: `dispatcher.resumeDecision` → protected step done',
        ours,
        'resumeMs',
        { note: `${storedOn} \`pushary.resume\` spans stored on, 0 off: checked`, target: true },
      ),
      row(
        "resume with Mastra's spans only vs off: the same resume, the run asked by an untraced Mastra on the same storage (no asking trace, so no approval spans), resumed by the traced one",
        { on: taken.mastraOnly, off: taken.off },
        'resumeMs',
        { note: `${mastraSpans} of Mastra's spans stored, 0 \`pushary.resume\`: checked` },
      ),
      row(
        "the approval spans' own cost: resume with Mastra's spans and the approval spans vs Mastra's spans only",
        { on: taken.on, off: taken.mastraOnly },
        'resumeMs',
        {
          note: 'the resume records waiting, answer, claim, resume and end',
          baseline: "Mastra's spans only",
        },
      ),
      row(
        'first pass with observability on vs off: `createRun` + `start` until the approval step asked',
        ours,
        'askMs',
        {
          note: 'the ask side',
        },
      ),
      row(
        'bare Mastra resume with observability on vs off: `createRun({ runId })` + `run.resume({ label })`, same shape',
        bare,
        'resumeMs',
        { note: "Mastra's own spans of a resumed run, for comparison" },
      ),
    ]
  } finally {
    await on.mastra.shutdown()
    await off.mastra.shutdown()
    await mastraOnly.mastra.shutdown()
    await untracedAsker.mastra.shutdown()
  }
}
