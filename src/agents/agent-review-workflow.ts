/**
 * The package workflow every agent question and approval runs through:
 * `ask` (the store-less `pusharyApprovalStep`: creates the decision, suspends,
 * and on resume re-verifies the answer against the service) then
 * `resume-agent` (performs the native agent resume). Each review is one run,
 * listable in Mastra storage like any workflow run: suspended while waiting,
 * success once the agent was resumed. Mastra's claim on a workflow resume
 * (suspended -> running in one transaction) makes the native resume happen
 * at most once per run even without the review store.
 */
import type { Mastra } from '@mastra/core/mastra'
import type { TracingContext } from '@mastra/core/observability'
import { RequestContext } from '@mastra/core/request-context'
import { createStep, createWorkflow } from '@mastra/core/workflows'
import { z } from 'zod/v4'
import { openAgentReviewTrace } from '../observability/agent-trace.js'
import type { PusharyClient } from '../pushary/client.js'
import { idSchema } from '../pushary/identity.js'
import { type PusharyAnswer, pusharyAnswerSchema } from '../pushary/question.js'
import { loadRunSnapshot, type RunSnapshotView } from '../resume/run-position.js'
import { PUSHARY_FALLBACK_CONTEXT_KEY, type PusharyFallbackLink } from '../steps/approval-delivery.js'
import { type PusharyApprovalStepInput, pusharyApprovalStepInputSchema } from '../steps/approval-schemas.js'
import { PACKAGE_WORKFLOW_OPTIONS, pusharyApprovalStep } from '../steps/approval-step.js'
import { PUSHARY_GUARD_METADATA_KEY } from '../steps/gate-warning.js'
import type { AskedMember } from './agent-approvers.js'
import {
  AGENT_REVIEW_ASK_STEP,
  AGENT_REVIEW_WORKFLOW_ID,
  agentWorkflowBinding,
  type PusharyAgentReviewBinding,
} from './agent-binding.js'
import { questionResumeData } from './agent-resume-data.js'
import { setDeclineReason, settledAgentSetOf, settledAgentSetSchema } from './agent-set-answer.js'
import { finishReasonOf, type PusharyResumableAgent } from './agent-shapes.js'
import { resumeGenerateOf } from './durable-approvals.js'
import { openPersistence, type PersistencePredicate } from './review-run-persistence.js'
import { toolCallOutcome } from './tool-call-outcome.js'

/** Request-context key of the resume hook (functions are never persisted in the snapshot). */
export const RESUME_HOOK_KEY = 'pushary.agent-resume'

/** How the native resume is issued and where its output goes. */
export interface AgentResumeHook {
  agent: PusharyResumableAgent
  mode: 'generate' | 'stream'
  decisionId: string
  deliver(output: unknown): void
}

const agentTargetSchema = z.object({
  agentId: idSchema,
  runId: idSchema,
  toolCallId: idSchema,
  kind: z.enum(['approval', 'question']),
  /** When the agent run's row was created, as the open read it: a resume finds the run without reading it again. */
  runCreatedAt: z.iso.datetime().optional(),
})

/**
 * The agent run's creation time the review run was started with, or
 * undefined (a run started before it was kept, or none in its input: then
 * `findSuspendedRun` reads it). Only a hint: a wrong one narrows the listing
 * to nothing and the full listing decides.
 *
 * @example
 * const hint = agentRunCreatedAtOf(before.context)
 */
export function agentRunCreatedAtOf(context: Record<string, unknown> | undefined): Date | undefined {
  const parsed = agentTargetSchema.shape.runCreatedAt.safeParse(
    (context?.input as { agent?: { runCreatedAt?: unknown } } | undefined)?.agent?.runCreatedAt,
  )
  return parsed.success && parsed.data !== undefined ? new Date(parsed.data) : undefined
}

const inputSchema = z.intersection(pusharyApprovalStepInputSchema, z.object({ agent: agentTargetSchema }))

const resumedSchema = z.object({
  action: z.enum(['approved', 'declined', 'answered']),
  reason: z.string().nullable(),
  finishReason: z.string().nullable(),
  /** For an approved call: what the tool did, read from Mastra's output (`tool-call-outcome.ts`). */
  toolOutcome: z.enum(['ran', 'failed', 'refused', 'unknown', 'moved_on']).optional(),
  toolEvidence: z.string().optional(),
  /** Several approvers: the settled set as the ask step returned it (absent for one approver). */
  approverSet: settledAgentSetSchema.optional(),
})

/**
 * The reason a declined tool call carries; the model reads it as the tool result.
 *
 * @example
 * declineReasonFor({ status: 'expired', value: null, approved: false }) // 'The review expired.'
 */
export function declineReasonFor(answer: PusharyAnswer): string {
  switch (answer.status) {
    case 'answered':
      return 'The customer declined.'
    case 'expired':
      return 'The review expired.'
    case 'cancelled':
      return 'The review was cancelled.'
    case 'unknown':
      return 'The review ended in a status this package does not know, which is never approval.'
    default: {
      const unreachable: never = answer.status
      return unreachable
    }
  }
}

function lookupAgent(mastra: Mastra | undefined, agentId: string): PusharyResumableAgent {
  for (const lookup of [() => mastra?.getAgentById(agentId), () => mastra?.getAgent(agentId as never)]) {
    try {
      const agent = lookup()
      if (agent) return agent as unknown as PusharyResumableAgent
    } catch {
      // try the next lookup
    }
  }
  throw new Error(`agent "${agentId}" is not registered on this Mastra instance`)
}

type AskPayload = { decisionId?: unknown; expiresAt?: unknown; approvers?: unknown }

function askPayloadOf(snapshot: RunSnapshotView | null): AskPayload {
  const ask = snapshot?.context[AGENT_REVIEW_ASK_STEP] as { suspendPayload?: AskPayload } | undefined
  return ask?.suspendPayload ?? {}
}

/** Several approvers: who the ask step asked on which decision, from its suspend payload. */
function askedMembers(payload: AskPayload): AskedMember[] | undefined {
  if (!Array.isArray(payload.approvers)) return undefined
  return (payload.approvers as { externalId?: unknown; decisionId?: unknown }[]).flatMap((member) =>
    typeof member?.externalId === 'string' && typeof member.decisionId === 'string'
      ? [{ externalId: member.externalId, decisionId: member.decisionId }]
      : [],
  )
}

/** The decision the review run's ask step waits on (for several approvers: the first still open). */
export function decisionIdOf(snapshot: RunSnapshotView | null): string | undefined {
  const id = askPayloadOf(snapshot).decisionId
  return typeof id === 'string' ? id : undefined
}

/** The review run's asked decision and, when the service reported it, its expiry. */
function askedDecision(snapshot: RunSnapshotView | null, runId: string): AgentReviewRun | null {
  const decisionId = decisionIdOf(snapshot)
  if (!decisionId) return null
  const payload = askPayloadOf(snapshot)
  const expiresAt = payload.expiresAt
  const approvers = askedMembers(payload)
  return {
    workflowRunId: runId,
    decisionId,
    ...(typeof expiresAt === 'string' ? { expiresAt } : {}),
    ...(approvers ? { approvers } : {}),
  }
}

async function settle(output: unknown): Promise<string | null> {
  const reason = (output as { finishReason?: unknown } | null)?.finishReason
  // A stream's finishReason is a promise; waiting for it means the workflow
  // run ends `success` only once the generation settled (the stream replays).
  const settled = reason instanceof Promise ? await reason : finishReasonOf(output)
  return typeof settled === 'string' ? settled : null
}

function createAgentReviewWorkflow(client: PusharyClient) {
  const resumeAgent = createStep({
    id: 'resume-agent',
    description:
      'Approve, decline (with a reason the model reads) or resume the question tool with the answer.',
    // It reads `approved` itself: approves only an approved answer, declines every other.
    metadata: { [PUSHARY_GUARD_METADATA_KEY]: 'own-check' },
    inputSchema: pusharyAnswerSchema,
    outputSchema: resumedSchema,
    execute: async ({
      inputData: answer,
      getInitData,
      getStepResult,
      requestContext,
      mastra,
      runId,
      workflowId,
    }) => {
      const target = agentTargetSchema.parse((getInitData() as { agent: unknown }).agent)
      // Several approvers: the whole settled set, read from the ask step's own result.
      const set = settledAgentSetOf(getStepResult(AGENT_REVIEW_ASK_STEP))
      const hook = requestContext?.get(RESUME_HOOK_KEY as never) as AgentResumeHook | undefined
      const agent = hook?.agent ?? lookupAgent(mastra, target.agentId)
      const stream = hook?.mode === 'stream'
      const ids = { runId: target.runId, toolCallId: target.toolCallId }
      let output: unknown
      let action: z.infer<typeof resumedSchema>['action']
      let reason: string | null = null
      if (target.kind === 'question') {
        const decisionId = hook?.decisionId ?? decisionIdOf(await loadRunSnapshot(mastra, workflowId, runId))
        if (!decisionId) throw new Error('the review workflow lost its decision ID')
        // The question tool re-reads and verifies the decision itself.
        const resumeData = questionResumeData(decisionId)
        output = stream
          ? await agent.resumeStream(resumeData, ids)
          : await resumeGenerateOf(agent, resumeData, ids)
        action = 'answered'
      } else if (answer.approved) {
        output = stream ? await agent.approveToolCall(ids) : await agent.approveToolCallGenerate(ids)
        action = 'approved'
      } else {
        reason = set ? setDeclineReason(set) : declineReasonFor(answer)
        output = stream
          ? await agent.declineToolCall({ ...ids, reason })
          : await agent.declineToolCallGenerate({ ...ids, reason })
        action = 'declined'
      }
      hook?.deliver(output)
      const finishReason = await settle(output)
      const approverSet = set ? { approverSet: set } : {}
      if (action !== 'approved') return { action, reason, finishReason, ...approverSet }
      // Kept in the run's result, so recovery reads the same evidence later.
      const tool = await toolCallOutcome(output, target.toolCallId)
      return {
        action,
        reason,
        finishReason,
        toolOutcome: tool.outcome,
        toolEvidence: tool.evidence,
        ...approverSet,
      }
    },
  })
  return createWorkflow({
    id: AGENT_REVIEW_WORKFLOW_ID,
    inputSchema,
    outputSchema: resumedSchema,
    // Like every package workflow: never re-driven by Mastra's boot-time restart.
    options: PACKAGE_WORKFLOW_OPTIONS,
  })
    .then(pusharyApprovalStep({ client }, { id: AGENT_REVIEW_ASK_STEP }))
    .then(resumeAgent)
    .commit()
}

/** Whom the ask step asks: the one customer, or the set (the requester already removed, kept to be checked again). */
function recipientsOf(binding: PusharyAgentReviewBinding): Record<string, unknown> {
  const set = binding.approverSet
  if (!set) return { externalId: binding.externalId }
  return {
    approvers: { externalIds: set.externalIds, required: set.required, veto: set.veto },
    ...(set.requestedBy === undefined ? {} : { requestedBy: set.requestedBy }),
  }
}

type ReviewRun = {
  /** Mastra's status of the run as `createRun` read it from storage (`pending` when it has no row). */
  workflowRunStatus: string
  start(p: {
    inputData: unknown
    requestContext?: RequestContext
    tracingContext?: TracingContext
  }): Promise<{ status: string; error?: unknown; steps?: Record<string, unknown> }>
  resume(p: { step: string; resumeData: unknown; requestContext: RequestContext }): Promise<{
    status: string
    error?: unknown
    result?: unknown
  }>
}
type ReviewWorkflow = {
  createRun(options: { runId: string; shouldPersistSnapshot?: PersistencePredicate }): Promise<ReviewRun>
}

/** The review workflow each Mastra instance holds, once found or registered (no lookup per call). */
const reviewWorkflows = new WeakMap<Mastra, ReviewWorkflow>()

/** The workflow registered under the review workflow's ID, found without Mastra's not-found exceptions. */
function registeredReviewWorkflow(mastra: Mastra): ReviewWorkflow | undefined {
  const listed = (mastra as { listWorkflows?: () => Record<string, { id?: string }> }).listWorkflows?.()
  if (listed) {
    const found = Object.values(listed).find((workflow) => workflow?.id === AGENT_REVIEW_WORKFLOW_ID)
    if (found) return found as unknown as ReviewWorkflow
  }
  try {
    // Hidden workflows are not listed; Mastra throws when there is none.
    return (
      (mastra.getWorkflowById(AGENT_REVIEW_WORKFLOW_ID as never) as unknown as ReviewWorkflow) ?? undefined
    )
  } catch {
    return undefined
  }
}

/**
 * The agent review workflow on this Mastra, registered on first use
 * (`mastra.addWorkflow`). Its approval step uses the first registering
 * helper's client; only the resume pass, which re-reads the decision, uses it
 * after that.
 *
 * @example
 * const workflow = ensureAgentReviewWorkflow(mastra, client)
 */
export function ensureAgentReviewWorkflow(mastra: Mastra, client: PusharyClient): ReviewWorkflow {
  const known = reviewWorkflows.get(mastra)
  if (known) return known
  let workflow = registeredReviewWorkflow(mastra)
  if (!workflow) {
    mastra.addWorkflow(createAgentReviewWorkflow(client), AGENT_REVIEW_WORKFLOW_ID)
    workflow = mastra.getWorkflowById(AGENT_REVIEW_WORKFLOW_ID as never) as unknown as ReviewWorkflow
  }
  reviewWorkflows.set(mastra, workflow)
  return workflow
}

/** What starting (or re-finding) one review run produced. */
export interface AgentReviewRun {
  workflowRunId: string
  decisionId: string
  /** When the decision expires, as the service reported it; saved on the review (`decision-expiry.ts`). */
  expiresAt?: string
  /** Several approvers: every member and its decision, in the order of the set. */
  approvers?: AskedMember[]
}

/**
 * Starts the review run for a binding, or finds the run an identical earlier
 * call started (same binding, same run ID, same decision), and returns its
 * decision ID. The approval step creates the decision with an idempotency
 * key derived from the run, so a concurrent duplicate start lands on the same one.
 *
 * @example
 * const { decisionId } = await startAgentReviewRun({ mastra, client, binding, ask: { subject } })
 */
export async function startAgentReviewRun(input: {
  mastra: Mastra
  client: PusharyClient
  binding: PusharyAgentReviewBinding
  ask: Pick<PusharyApprovalStepInput, 'subject' | 'delivery' | 'placeholder'>
  /** Delivers the approval link when the customer has no device (see `pusharyApprovalStep`). */
  onFallback?: (link: PusharyFallbackLink) => void | Promise<void>
  /** When the agent run's row was created (kept in the run's input for the resume). */
  agentRunCreatedAt?: Date
  operation: string
}): Promise<AgentReviewRun> {
  const workflowBinding = agentWorkflowBinding(input.binding, input.operation)
  const workflow = ensureAgentReviewWorkflow(input.mastra, input.client)
  const runId = workflowBinding.runId
  // `createRun` reads the run's row; only a run that exists (not `pending`)
  // can already hold the decision of an identical earlier open.
  const run = await workflow.createRun({ runId, shouldPersistSnapshot: openPersistence })
  if (run.workflowRunStatus !== 'pending') {
    const known = askedDecision(await loadRunSnapshot(input.mastra, AGENT_REVIEW_WORKFLOW_ID, runId), runId)
    if (known) return known
  }
  const question = input.binding.question
  const requestContext = new RequestContext()
  if (input.onFallback) requestContext.set(PUSHARY_FALLBACK_CONTEXT_KEY, input.onFallback)
  // In the agent's own trace, when Mastra traces it (observability/agent-trace.ts).
  const trace = await openAgentReviewTrace(input.mastra, input.binding.runId, input.binding)
  const started = await run.start({
    requestContext,
    ...(trace ? { tracingContext: trace.tracingContext } : {}),
    inputData: {
      operationId: workflowBinding.operationId,
      question: question.question,
      type: question.type,
      ...(question.options ? { options: question.options } : {}),
      ...recipientsOf(input.binding),
      ...input.ask,
      agent: {
        agentId: input.binding.agentId,
        runId: input.binding.runId,
        toolCallId: input.binding.toolCallId,
        kind: input.binding.kind,
        ...(input.agentRunCreatedAt ? { runCreatedAt: input.agentRunCreatedAt.toISOString() } : {}),
      },
    },
  })
  trace?.end(started.status)
  // The suspend payload comes back with the start result; the snapshot is read only when it does not.
  const asked =
    started.status === 'suspended'
      ? (askedDecision({ context: started.steps ?? {} } as RunSnapshotView, runId) ??
        askedDecision(await loadRunSnapshot(input.mastra, AGENT_REVIEW_WORKFLOW_ID, runId), runId))
      : null
  if (started.status !== 'suspended' || !asked) {
    const cause = (started.error as { message?: string } | undefined)?.message
    throw new Error(
      `the agent review workflow did not suspend (${started.status}${cause ? `: ${cause}` : ''})`,
      {
        cause: started.error,
      },
    )
  }
  return asked
}
