/**
 * This package as one side of the side-by-side benchmark: agent reviews
 * through `openPusharyAgentReview` / `resumePusharyAgentReview`, workflow
 * items resumed through `dispatcher.resumeDecision` (one GET of the answer,
 * the claim and the finish around Mastra's resume by label), all on the
 * bench environment's review store, decision service and Mastra instance.
 */
import { openPusharyAgentReview } from '../../src/agents/open-review.js'
import { resumePusharyAgentReview } from '../../src/agents/resume-review.js'
import { createPusharyForeachApprovalWorkflow } from '../../src/workflows/approval-workflows.js'
import { type BenchEnv, EXTERNAL_ID } from '../lib/env.js'
import { pendingReviews } from '../scenarios/multi-item.js'
import type { RunShape, Side, StartedRun } from './side.js'

interface RunLike {
  runId: string
  start(params: { inputData: unknown }): Promise<{
    status: string
    steps?: Record<string, { suspendPayload?: { decisionId?: string } }>
  }>
}
interface WorkflowLike {
  createRun(options?: { runId?: string }): Promise<RunLike>
  getWorkflowRunById(runId: string): Promise<{ status?: string } | null>
}

/** The step shape is the environment's `approved` workflow: our step, `pusharyGate()`, a protected step. */
const workflowKey = (shape: RunShape) => (shape.kind === 'step' ? 'approved' : `ours-foreach-${shape.items}`)

export function createOurSide(env: BenchEnv): Side {
  const config = { client: env.client }
  const workflow = (shape: RunShape) =>
    env.mastra.getWorkflow(workflowKey(shape) as never) as unknown as WorkflowLike
  return {
    label: 'ours',
    describes: [
      'ours: agent open and resume through `openPusharyAgentReview` / `resumePusharyAgentReview`; a workflow item through `dispatcher.resumeDecision(decisionId)` (GET of the answer, claim, `run.resume` by label, finish).',
    ],
    agent: {
      async open(call) {
        const review = await openPusharyAgentReview(config, {
          agent: call.agent,
          agentId: call.agentId,
          runId: call.runId,
          toolCallId: call.toolCallId,
          externalId: call.externalId,
          actionVersion: 'v1',
          store: env.store,
        })
        return review.decisionId
      },
      async resume(call, decisionId) {
        const outcome = await resumePusharyAgentReview(config, {
          agent: call.agent,
          agentId: call.agentId,
          externalId: call.externalId,
          decisionId,
          store: env.store,
          currentActionVersion: () => 'v1',
        })
        if (outcome.status !== 'resumed') throw new Error(`our agent resume ended ${outcome.status}`)
      },
    },
    workflow: {
      register(shape) {
        if (shape.kind === 'step') return
        const key = workflowKey(shape)
        const foreach = createPusharyForeachApprovalWorkflow(
          { client: env.client, store: env.store },
          { workflowId: key, externalId: EXTERNAL_ID, concurrency: shape.items },
        )
        env.mastra.addWorkflow(foreach as never, key)
      },
      async start(shape, inputs) {
        const run = await workflow(shape).createRun()
        const result = await run.start({ inputData: shape.kind === 'step' ? inputs[0] : inputs })
        if (result.status !== 'suspended') throw new Error(`our ${shape.kind} start ended ${result.status}`)
        return { runId: run.runId, result }
      },
      async decisions(shape, run: StartedRun) {
        if (shape.kind === 'step') {
          const result = run.result as Awaited<ReturnType<RunLike['start']>>
          const decisionId = result.steps?.['pushary-approval']?.suspendPayload?.decisionId
          if (!decisionId) throw new Error('our step suspended without a decision')
          return [decisionId]
        }
        const reviews = (await pendingReviews(env)).filter((review) => review.runId === run.runId)
        if (reviews.length !== shape.items)
          throw new Error(`expected ${shape.items} reviews, found ${reviews.length}`)
        return reviews.map((review) => review.decisionId)
      },
      async answered() {},
      async resume(shape, _run, decisionId) {
        const before = env.effects.protected
        const outcome = await env.dispatcher.resumeDecision(decisionId)
        if (outcome.status !== 'resumed') throw new Error(`our ${shape.kind} resume ended ${outcome.status}`)
        if (shape.kind === 'step' && env.effects.protected !== before + 1)
          throw new Error('our protected step did not run')
      },
      async finished(shape, run) {
        const state = await workflow(shape).getWorkflowRunById(run.runId)
        if (state?.status !== 'success') throw new Error(`our ${shape.kind} run ended ${state?.status}`)
      },
    },
  }
}
