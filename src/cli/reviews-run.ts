/**
 * The Mastra run behind a review, for `pushary-mastra reviews show`: read
 * through Mastra's own storage adapter (`@mastra/libsql` / `@mastra/pg`, the
 * application's dependency, imported only when asked), from the same place
 * the application keeps it (for PostgreSQL its `schemaName`), read only.
 * Every answer says where it looked, so "absent" is never mistaken for
 * "gone" when the run lives somewhere else.
 */
import { agentWorkflowBinding } from '../agents/agent-binding.js'
import {
  type ApprovalLocation,
  type ApprovalProgress,
  approvalProgress,
  type RunSnapshotView,
} from '../resume/run-position.js'
import type { PusharyReview } from '../store/review-schema.js'
import type { MastraLocation } from './reviews-args.js'

/** What `show` reports about the Mastra run a review belongs to. */
export interface RunView {
  workflowId: string
  runId: string
  status: string
  approval: ApprovalProgress | null
  /** Where the run was looked for (never the connection string: it may hold a password). */
  lookedIn: string
}

/** A refusal the command prints as its message (exit code 1). */
export class CommandRefused extends Error {}

interface WorkflowSnapshots {
  loadWorkflowSnapshot(args: { workflowName: string; runId: string }): Promise<Record<string, unknown> | null>
}

/**
 * The workflow run that holds a review's approval: its own run, the batch
 * parent's run, or for an agent review the package's `pushary-agent-review`
 * run asking for it (approval step `ask`; `suspended` there means the agent
 * was never touched).
 */
function runOf(review: PusharyReview): { workflowId: string; runId: string; approval: ApprovalLocation } {
  switch (review.target) {
    case 'workflow-step':
      return { workflowId: review.workflowId, runId: review.runId, approval: review }
    case 'batch-parent':
      return {
        workflowId: review.workflowId,
        runId: review.runId,
        approval: { stepId: review.stepId, resumeLabel: '', operationId: '' },
      }
    case 'agent': {
      const binding = agentWorkflowBinding(review, 'reviews show')
      return {
        workflowId: binding.workflowId,
        runId: binding.runId,
        approval: {
          stepId: binding.stepId,
          resumeLabel: review.decisionId,
          operationId: binding.operationId,
        },
      }
    }
    default: {
      const unreachable: never = review
      return unreachable
    }
  }
}

/** Where `show` looks for the run, said with every answer: "absent" means absent from there. */
function storageName(location: MastraLocation): string {
  return location.kind === 'pg' ? `PostgreSQL schema "${location.schema}"` : location.url
}

/** Why a run may be absent from where it was looked for, and what to pass instead. */
export function absentHint(location: MastraLocation): string {
  if (location.kind !== 'pg' || location.schemaGiven) return ''
  return '; if your app gives PostgresStore another schemaName, pass it as --mastra-pg-schema <name>'
}

/**
 * Opens Mastra's own storage adapter (the application's dependency, loaded
 * only when asked), so the run is read exactly as Mastra persisted it.
 */
export async function readRun(location: MastraLocation, review: PusharyReview): Promise<RunView> {
  const run = runOf(review)
  const lookedIn = storageName(location)
  let storage: {
    init(): Promise<void>
    getStore(name: 'workflows'): Promise<unknown>
    close?: () => Promise<void>
  }
  try {
    if (location.kind === 'libsql') {
      const { LibSQLStore } = await import('@mastra/libsql')
      storage = new LibSQLStore({ id: 'pushary-mastra-reviews', url: location.url }) as never
    } else {
      const { PostgresStore } = await import('@mastra/pg')
      // Read only: a mistyped schema must not be created (init would create
      // the schema and Mastra's tables in it).
      storage = new PostgresStore({
        id: 'pushary-mastra-reviews',
        connectionString: location.url,
        schemaName: location.schema,
        disableInit: true,
      }) as never
    }
  } catch (error) {
    const pkg = location.kind === 'libsql' ? '@mastra/libsql' : '@mastra/pg'
    throw new CommandRefused(
      `cannot load ${pkg} to read the run (install it beside @mastra/core): ${error instanceof Error ? error.message : String(error)}`,
    )
  }
  try {
    await storage.init()
    const workflows = (await storage.getStore('workflows')) as WorkflowSnapshots | undefined
    if (!workflows) throw new CommandRefused('the Mastra storage has no workflow store')
    let raw: Record<string, unknown> | null
    try {
      raw = await workflows.loadWorkflowSnapshot({ workflowName: run.workflowId, runId: run.runId })
    } catch (error) {
      throw new CommandRefused(
        `cannot read Mastra's runs in ${lookedIn}: ${error instanceof Error ? error.message : String(error)}${absentHint(location)}`,
      )
    }
    if (!raw)
      return { workflowId: run.workflowId, runId: run.runId, status: 'absent', approval: null, lookedIn }
    const snapshot: RunSnapshotView = {
      status: String(raw.status),
      resumeLabels: (raw.resumeLabels ?? {}) as RunSnapshotView['resumeLabels'],
      suspendedPaths: (raw.suspendedPaths ?? {}) as Record<string, unknown>,
      context: (raw.context ?? {}) as Record<string, unknown>,
    }
    return {
      workflowId: run.workflowId,
      runId: run.runId,
      status: snapshot.status,
      approval: approvalProgress(snapshot, run.approval),
      lookedIn,
    }
  } finally {
    await storage.close?.().catch(() => undefined)
  }
}
