/**
 * The decisions a workflow run is waiting on, typed: what a caller reaches
 * for after `run.start()` (to tell the customer, log the decision, or resume
 * a store-less run by its label) without walking Mastra's step results.
 *
 * Read from what the approval step suspended with (`PusharyApprovalSuspend`:
 * decision, customer, question, operation, decision page) and, for a
 * `.foreach`, from each suspended iteration. A batch step's decisions live
 * in its child runs, so only the variant that reads storage
 * ({@link readPusharyPendingDecisions}) can list them; the result variant
 * refuses a batch instead of answering "nothing pending".
 */
import type { Mastra } from '@mastra/core/mastra'
import { z } from 'zod/v4'
import { PusharyValidationError } from '../pushary/errors.js'
import { idSchema } from '../pushary/identity.js'
import { loadRunSnapshot } from '../resume/run-position.js'
import { pusharyApprovalSuspendSchema } from '../steps/approval-schemas.js'
import { batchChildRunId } from './batch-children.js'
import { type PusharyBatchSuspend, pusharyBatchSuspendSchema } from './batch-parent.js'

/**
 * One decision a run is waiting on. `itemIndex` is the item's position in a
 * `.foreach` or a batch (`null` for a single approval step). `question`,
 * `externalId` and `operationId` are `null` only for a run an earlier release
 * suspended without recording them. `link` is the service's decision page
 * (it opens on an enrolled device); the approval link of a customer without
 * a device is handed to `onFallback` only and never kept in Mastra's storage.
 *
 * @example
 * const first: PusharyPendingDecision = pusharyPendingDecisions(result)[0]!
 * await notify(first.externalId, `${first.question} ${first.link ?? ''}`)
 */
export interface PusharyPendingDecision {
  decisionId: string
  stepId: string
  itemIndex: number | null
  question: string | null
  externalId: string | null
  operationId: string | null
  link: string | null
  /** `push` to a device, or `fallback` (an approval link went to `onFallback`). */
  delivery: 'push' | 'fallback' | null
  expiresAt: string | null
}

/**
 * The parts of a Mastra workflow result (`run.start()`, `run.resume()`) that
 * are read: its status and its step results. Any Mastra result fits.
 *
 * @example
 * const view: PusharyRunResultView = await run.start({ inputData })
 */
export interface PusharyRunResultView {
  readonly status: string
  readonly steps?: Readonly<Record<string, unknown>>
}

type Record_ = Record<string, unknown>

function record(value: unknown): Record_ | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record_) : undefined
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null
}

/** One approval suspension, or `null` when the payload is not the approval step's. */
function decisionOf(
  stepId: string,
  itemIndex: number | null,
  suspendPayload: unknown,
  input: unknown,
): PusharyPendingDecision | null {
  const parsed = pusharyApprovalSuspendSchema.safeParse(suspendPayload)
  if (!parsed.success) return null
  const suspended = parsed.data
  // An earlier release kept only the decision in its payload: the step's
  // input (when the result or snapshot holds it) still names the rest.
  const asked = record(input)
  return {
    decisionId: suspended.decisionId,
    stepId,
    itemIndex,
    question: suspended.question ?? text(asked?.question),
    externalId: suspended.externalId ?? text(asked?.externalId),
    operationId: suspended.operationId ?? text(asked?.operationId),
    link: suspended.link ?? null,
    delivery: suspended.delivery ?? null,
    expiresAt: suspended.expiresAt ?? null,
  }
}

interface BatchFound {
  stepId: string
  batch: PusharyBatchSuspend
  items: readonly unknown[]
}

/** Walks one run's step results; batch steps are handed back for the caller to read. */
function walkSteps(steps: Record_): { decisions: PusharyPendingDecision[]; batches: BatchFound[] } {
  const decisions: PusharyPendingDecision[] = []
  const batches: BatchFound[] = []
  for (const [stepId, raw] of Object.entries(steps)) {
    const step = record(raw)
    if (step?.status !== 'suspended') continue
    const payload = record(step.suspendPayload)
    const iterations = record(payload?.__workflow_meta)?.foreachOutput
    if (Array.isArray(iterations)) {
      const inputs = Array.isArray(step.payload) ? step.payload : []
      iterations.forEach((iteration, index) => {
        const item = record(iteration)
        if (item?.status !== 'suspended') return
        const found = decisionOf(stepId, index, item.suspendPayload, item.payload ?? inputs[index])
        if (found) decisions.push(found)
      })
      continue
    }
    const found = decisionOf(stepId, null, payload, step.payload)
    if (found) {
      decisions.push(found)
      continue
    }
    const batch = pusharyBatchSuspendSchema.safeParse(payload)
    if (batch.success) {
      batches.push({ stepId, batch: batch.data, items: Array.isArray(step.payload) ? step.payload : [] })
    }
  }
  return { decisions, batches }
}

/**
 * The decisions a workflow run result is waiting on: one per suspended
 * approval step, one per suspended `.foreach` item (in item order). Empty
 * when the run is not suspended (it finished, failed, or asked nobody). A
 * batch step (`pusharyApprovalBatchStep`) keeps its decisions in child runs:
 * for it this throws a typed error naming the step; read such a run with
 * {@link readPusharyPendingDecisions}.
 *
 * @example
 * const result = await run.start({ inputData })
 * for (const pending of pusharyPendingDecisions(result)) {
 *   console.log(pending.decisionId, pending.externalId, pending.question)
 * }
 */
export function pusharyPendingDecisions(result: PusharyRunResultView): PusharyPendingDecision[] {
  const view = record(result)
  if (!view || typeof view.status !== 'string') {
    throw new PusharyValidationError({
      code: 'invalid_options',
      operation: 'pusharyPendingDecisions',
      field: 'result',
      message: 'expected the result of run.start() or run.resume() (an object with a status)',
    })
  }
  if (view.status !== 'suspended') return []
  const { decisions, batches } = walkSteps(record(view.steps) ?? {})
  const batch = batches[0]
  if (batch) {
    throw new PusharyValidationError({
      code: 'invalid_options',
      operation: 'pusharyPendingDecisions',
      field: `result.steps.${batch.stepId}`,
      message: `step "${batch.stepId}" is a batch: its ${batch.batch.count} decision(s) live in child runs of "${batch.batch.childWorkflowId}"; read them with readPusharyPendingDecisions({ mastra, workflowId, runId })`,
    })
  }
  return decisions
}

/**
 * Which run {@link readPusharyPendingDecisions} reads: the Mastra that runs
 * it (its storage), the workflow and the run.
 *
 * @example
 * const where: PusharyRunLocation = { mastra, workflowId: 'refund', runId: run.runId }
 */
export interface PusharyRunLocation {
  mastra: Mastra
  workflowId: string
  runId: string
}

const locationSchema = z.object({ workflowId: idSchema, runId: idSchema })

/**
 * The decisions a run is waiting on, read from the run as Mastra persisted it
 * (so from any process): single steps, `.foreach` items, and a batch step's
 * items (one read of each child run; `itemIndex` is the item's position).
 * Empty when the run is not suspended. A run this Mastra's storage does not
 * hold is a typed error naming `runId`, never an empty list.
 *
 * @example
 * const pending = await readPusharyPendingDecisions({ mastra, workflowId: 'refund-batch', runId })
 * console.log(`${pending.length} decision(s) open`)
 */
export async function readPusharyPendingDecisions(
  location: PusharyRunLocation,
): Promise<PusharyPendingDecision[]> {
  const operation = 'readPusharyPendingDecisions'
  const parsed = locationSchema.safeParse(location ?? {})
  if (!parsed.success) {
    throw PusharyValidationError.fromZod(parsed.error, { operation, code: 'invalid_identifier' })
  }
  const mastra = location.mastra
  if (!mastra || typeof (mastra as { getStorage?: unknown }).getStorage !== 'function') {
    throw new PusharyValidationError({
      code: 'invalid_options',
      operation,
      field: 'mastra',
      message: 'the Mastra instance that runs the workflow (its storage holds the run)',
    })
  }
  const { workflowId, runId } = parsed.data
  const snapshot = await loadRunSnapshot(mastra, workflowId, runId)
  if (!snapshot) {
    throw new PusharyValidationError({
      code: 'invalid_identifier',
      operation,
      field: 'runId',
      message: `no run ${runId} of workflow "${workflowId}" in this Mastra's storage`,
    })
  }
  if (snapshot.status !== 'suspended') return []
  const { decisions, batches } = walkSteps(snapshot.context)
  for (const { stepId, batch, items } of batches) {
    for (let index = 0; index < batch.count; index++) {
      const childRunId = batchChildRunId({ workflowId, runId, stepId }, index, items[index])
      const child = await loadRunSnapshot(mastra, batch.childWorkflowId, childRunId)
      // A child not started yet (the parent was killed while fanning out) asks nobody.
      if (child?.status !== 'suspended') continue
      for (const found of walkSteps(child.context).decisions) decisions.push({ ...found, itemIndex: index })
    }
  }
  return decisions
}
