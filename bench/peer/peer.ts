/**
 * Another installed implementation of the public API as one side of the
 * side-by-side benchmark, loaded from `DIR/node_modules/@pushary/mastra`
 * (`npm run bench -- --peer DIR`). Nothing of it is vendored here: this
 * module only maps the calls its README and type declarations name onto the
 * bench's paths. Its code resolves its own dependencies (its `@mastra/core`,
 * zod and decision SDK) from DIR; the agents, the review store, the decision
 * service and the Mastra instance it runs on are the environment's, the same
 * objects the other side gets.
 *
 * Where its API differs: it is configured with `{ apiKey, baseUrl }` instead
 * of a client; its step needs a `callbackUrl` and leaves the gate to the
 * application; it has no resumer, so a workflow item is resumed as its README
 * routes a callback: verify the signed body with `resolvePusharyCallback`,
 * then `run.resume({ label: correlationId, resumeData: { answer, status } })`.
 */
import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { createStep, createWorkflow, type DefaultEngineType, type Step } from '@mastra/core/workflows'
import { z } from 'zod/v4'
import { type BenchEnv, type CapturedCallback, EXTERNAL_ID } from '../lib/env.js'
import { deliveryRecorded } from '../scenarios/resume.js'
import type { AgentSide, RunShape, Side, StartedRun, WorkflowSide } from './side.js'

type Fn = (...args: never[]) => unknown

/** The exports this adapter calls, as the peer's declarations name them. */
interface PeerModule {
  openPusharyAgentReview?: Fn
  resumePusharyAgentReview?: Fn
  pusharyApprovalStep?: Fn
  resolvePusharyCallback?: Fn
}

interface PeerConfig {
  apiKey: string
  baseUrl: string
}

interface RunResult {
  status: string
  steps?: Record<string, { suspendPayload?: PeerSuspend }>
}
interface PeerSuspend {
  decisionId?: string
  // Mastra's own record of a suspended `.foreach`: one entry per item.
  __workflow_meta?: { foreachOutput?: { suspendPayload?: { decisionId?: string } }[] }
}
interface RunLike {
  runId: string
  start(params: { inputData: unknown }): Promise<RunResult>
  resume(params: { label: string; resumeData: unknown }): Promise<RunResult>
}
interface WorkflowLike {
  createRun(options?: { runId?: string }): Promise<RunLike>
  getWorkflowRunById(runId: string): Promise<{ status?: string } | null>
}

const STEP_ID = 'pushary-approval'

function manifestEntry(manifest: { exports?: unknown; module?: string; main?: string }): string {
  const root = (manifest.exports as Record<string, unknown> | undefined)?.['.']
  const esm = (root as { import?: unknown } | undefined)?.import
  const entry = typeof esm === 'string' ? esm : (esm as { default?: string } | undefined)?.default
  const chosen = entry ?? manifest.module ?? manifest.main
  if (!chosen) throw new Error('--peer: its package.json names no ESM entry')
  return chosen
}

/** Imports the peer installed in `dir`; throws naming what is missing. */
async function importPeer(dir: string) {
  const packageDir = join(resolve(dir), 'node_modules', '@pushary', 'mastra')
  const manifestPath = join(packageDir, 'package.json')
  if (!existsSync(manifestPath)) {
    throw new Error(
      `--peer ${dir}: no ${manifestPath}; point it at a folder where the other implementation is installed (docs/operations.md, "Running the tests")`,
    )
  }
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as {
    name: string
    version: string
    exports?: unknown
    module?: string
    main?: string
  }
  const loaded = (await import(pathToFileURL(join(packageDir, manifestEntry(manifest))).href)) as PeerModule
  return { label: `${manifest.name} ${manifest.version} (peer)`, module: loaded }
}

const isFn = (value: unknown): value is Fn => typeof value === 'function'

function peerAgent(env: BenchEnv, peer: PeerModule, config: PeerConfig): AgentSide | undefined {
  const open = peer.openPusharyAgentReview
  const resume = peer.resumePusharyAgentReview
  if (!isFn(open) || !isFn(resume)) return undefined
  const call = <T>(fn: Fn, ...args: unknown[]) => (fn as unknown as (...a: unknown[]) => Promise<T>)(...args)
  return {
    async open(suspended) {
      const review = await call<{ decisionId: string }>(open, config, {
        agent: suspended.agent,
        agentId: suspended.agentId,
        runId: suspended.runId,
        toolCallId: suspended.toolCallId,
        externalId: suspended.externalId,
        actionVersion: 'v1',
        store: env.store,
      })
      return review.decisionId
    },
    async resume(suspended, decisionId) {
      const outcome = await call<{ status: string; reason?: string }>(resume, config, {
        agent: suspended.agent,
        agentId: suspended.agentId,
        externalId: suspended.externalId,
        decisionId,
        store: env.store,
        currentActionVersion: async () => 'v1',
      })
      if (outcome.status !== 'resumed')
        throw new Error(`peer agent resume ended ${outcome.status} ${outcome.reason ?? ''}`)
    },
  }
}

const itemSchema = z.object({ operationId: z.string(), question: z.string(), type: z.literal('confirm') })
const answerSchema = z.object({ status: z.string(), value: z.string().nullable(), approved: z.boolean() })
const doneSchema = z.object({ done: z.literal(true) })
const OPTIONS = { autoRestartActiveRuns: false } as const
type ApprovalStepLike = Step<
  'pushary-approval',
  unknown,
  z.infer<typeof itemSchema>,
  z.infer<typeof answerSchema>,
  unknown,
  unknown,
  DefaultEngineType,
  unknown
>

function peerWorkflow(env: BenchEnv, peer: PeerModule, config: PeerConfig): WorkflowSide | undefined {
  const stepFactory = peer.pusharyApprovalStep
  const verify = peer.resolvePusharyCallback
  if (!isFn(stepFactory) || !isFn(verify)) return undefined
  // Its step, built by its own @mastra/core; typed as a step of ours only to chain it.
  const approvalStep = () =>
    (stepFactory as unknown as (...a: unknown[]) => ApprovalStepLike)(config, {
      callbackUrl: env.receiver.url,
      externalId: EXTERNAL_ID,
    })
  let protectedRuns = 0
  // The application's gate: the peer's README leaves checking `approved` to a later step.
  const gate = createStep({
    id: 'gate',
    inputSchema: answerSchema,
    outputSchema: z.object({ approved: z.literal(true) }),
    execute: async ({ inputData }) => {
      if (!inputData.approved) throw new Error('not approved')
      return { approved: true as const }
    },
  })
  const protectedStep = createStep({
    id: 'protected',
    inputSchema: z.object({ approved: z.literal(true) }),
    outputSchema: doneSchema,
    execute: async () => {
      protectedRuns++
      return { done: true as const }
    },
  })
  const key = (shape: RunShape) => (shape.kind === 'step' ? 'peer-step' : `peer-foreach-${shape.items}`)
  const workflow = (shape: RunShape) => env.mastra.getWorkflow(key(shape) as never) as unknown as WorkflowLike
  const callbacks = new Map<string, CapturedCallback>()
  return {
    register(shape) {
      const id = key(shape)
      const built =
        shape.kind === 'step'
          ? createWorkflow({ id, inputSchema: itemSchema, outputSchema: doneSchema, options: OPTIONS })
              .then(approvalStep())
              .then(gate)
              .then(protectedStep)
              .commit()
          : createWorkflow({
              id,
              inputSchema: z.array(itemSchema),
              outputSchema: z.array(answerSchema),
              options: OPTIONS,
            })
              .foreach(approvalStep(), { concurrency: shape.items })
              .commit()
      env.mastra.addWorkflow(built as never, id)
    },
    async start(shape, inputs) {
      const run = await workflow(shape).createRun()
      const result = await run.start({ inputData: shape.kind === 'step' ? inputs[0] : inputs })
      if (result.status !== 'suspended')
        throw new Error(
          `peer ${shape.kind} start ended ${result.status}: ${JSON.stringify((result as { error?: unknown }).error ?? result.steps?.[STEP_ID]).slice(0, 500)}`,
        )
      return { runId: run.runId, result }
    },
    async decisions(shape, run: StartedRun) {
      const suspended = (run.result as RunResult).steps?.[STEP_ID]?.suspendPayload
      const ids =
        shape.kind === 'step'
          ? [suspended?.decisionId]
          : (suspended?.__workflow_meta?.foreachOutput ?? []).map((item) => item.suspendPayload?.decisionId)
      const found = ids.filter((id): id is string => typeof id === 'string')
      const expected = shape.kind === 'step' ? 1 : shape.items
      if (found.length !== expected)
        throw new Error(`peer run suspended ${found.length} of ${expected} items`)
      return found
    },
    async answered(decisionId) {
      // Its resume starts from the signed callback; the service's own delivery
      // bookkeeping must be over before the timed part, as in the callback row.
      callbacks.set(decisionId, await env.receiver.next(decisionId))
      await deliveryRecorded(env, decisionId)
    },
    async resume(shape, run, decisionId) {
      const callback = callbacks.get(decisionId)
      if (!callback) throw new Error(`no callback for ${decisionId}`)
      callbacks.delete(decisionId)
      const verified = (
        verify as unknown as (...a: unknown[]) => { correlationId: string; answer: string } | null
      )(callback.body, callback.signature, env.service.webhookSecret)
      if (verified?.correlationId !== decisionId) throw new Error('the peer refused the signed callback')
      const before = protectedRuns
      // The application's correlationId → runId map is `run` itself here, held in memory.
      const handle = await workflow(shape).createRun({ runId: run.runId })
      const result = await handle.resume({
        label: verified.correlationId,
        resumeData: { answer: verified.answer, status: 'answered' },
      })
      const ok =
        shape.kind === 'step'
          ? result.status === 'success' && protectedRuns === before + 1
          : result.status === 'success' || result.status === 'suspended'
      if (!ok) throw new Error(`peer ${shape.kind} resume ended ${result.status}`)
    },
    async finished(shape, run) {
      const state = await workflow(shape).getWorkflowRunById(run.runId)
      if (state?.status !== 'success') throw new Error(`peer ${shape.kind} run ended ${state?.status}`)
    },
  }
}

/** The peer installed in `dir` as a side; paths its exports cannot run are left out. */
export async function loadPeerSide(env: BenchEnv, dir: string): Promise<Side> {
  const { label, module } = await importPeer(dir)
  const config = { apiKey: env.service.apiKey, baseUrl: env.service.baseUrl }
  const agent = peerAgent(env, module, config)
  const workflow = peerWorkflow(env, module, config)
  return {
    label,
    describes: [
      `${label}: agent open and resume through its \`openPusharyAgentReview\` / \`resumePusharyAgentReview\` on the same review store; a workflow item as its README routes a callback: the signed body verified with \`resolvePusharyCallback\`, then \`run.resume({ label: correlationId })\` with its answer (no GET, no claim; the correlationId → runId lookup is held in memory, so not timed).`,
    ],
    ...(agent ? { agent } : {}),
    ...(workflow ? { workflow } : {}),
  }
}
