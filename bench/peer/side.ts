/**
 * One implementation of the public API, as the side-by-side benchmark drives
 * it. The scenario owns everything both sides share (the suspended agent, the
 * answer, the timing, the checks); a side owns only the calls its own API
 * makes, split into the untimed preparation and the timed part. A side leaves
 * out a path its API cannot run, and that path is then not compared.
 */
import type { Agent } from '@mastra/core/agent'

/** An agent run suspended on its `requireApproval` refund call; `executions` counts the refunds. */
export interface SuspendedRefund {
  readonly agent: Agent
  readonly agentId: string
  readonly runId: string
  readonly toolCallId: string
  readonly externalId: string
  readonly executions: readonly unknown[]
}

/** One workflow run started and suspended: its ID and what `run.start` returned. */
export interface StartedRun {
  readonly runId: string
  readonly result: unknown
}

/**
 * A workflow shape both sides register: one approval step (then a gate and a
 * protected step, for `step`), or a `.foreach` of the approval step over
 * `items` items, every item asked at once (`concurrency` = `items`).
 */
export type RunShape = { readonly kind: 'step' } | { readonly kind: 'foreach'; readonly items: number }

export interface WorkflowSide {
  /** Registers the shape on the shared Mastra instance (untimed, once per shape). */
  register(shape: RunShape): void
  /** Starts one run of `shape` with these step inputs (timed); throws unless it suspended. */
  start(shape: RunShape, inputs: readonly unknown[]): Promise<StartedRun>
  /** The decision behind each suspended item of `run` (untimed). */
  decisions(shape: RunShape, run: StartedRun): Promise<string[]>
  /** Untimed work after the person answered `decisionId` (the peer waits for its signed callback). */
  answered(decisionId: string): Promise<void>
  /** The timed resume of one answered item; throws unless the item's step ran on the answer. */
  resume(shape: RunShape, run: StartedRun, decisionId: string): Promise<void>
  /** After the last item: throws unless the run ended in success. */
  finished(shape: RunShape, run: StartedRun): Promise<void>
}

export interface AgentSide {
  /** Opens the review of the suspended call; resolves with its decision ID. */
  open(call: SuspendedRefund): Promise<string>
  /** Resumes the answered review; throws unless the outcome says it resumed. */
  resume(call: SuspendedRefund, decisionId: string): Promise<void>
}

export interface Side {
  /** Column name, e.g. `ours` or `@pushary/mastra 0.4.1 (peer)`. */
  readonly label: string
  /** What this side's timed paths do, one line each, for the note under the table. */
  readonly describes: readonly string[]
  readonly agent?: AgentSide
  readonly workflow?: WorkflowSide
}
