import { PusharyError } from '../pushary/errors.js'

/**
 * Every refusal of {@link resumePusharyApproval}. What the caller does next:
 * - `unknown_workflow`, `no_storage`: configuration; register the workflow / give Mastra storage.
 * - `unknown_run`: no snapshot for this run (wrong id, or not persisted yet: retry later).
 * - `run_not_suspended`: the run is running (retry later) or finished (nothing to resume).
 * - `unknown_label`: no suspended step or iteration carries this label (finished, or never asked).
 * - `label_mismatch`: the label names a different step or iteration than the one given.
 * - `ambiguous_step`, `ambiguous_iteration`: several are suspended; name exactly one.
 * - `step_not_suspended`, `iteration_not_suspended`: that exact target is finished, not started or out of range.
 * - `invalid_resume_data`: Mastra refused the data against the step's resume schema; the run is untouched.
 * - `resume_conflict`: other resumes of the same run kept winning until the retry budget ran out; retry later.
 *
 * @example
 * const code: PusharyResumeErrorCode = 'ambiguous_iteration'
 */
export type PusharyResumeErrorCode =
  | 'unknown_workflow'
  | 'no_storage'
  | 'unknown_run'
  | 'run_not_suspended'
  | 'unknown_label'
  | 'label_mismatch'
  | 'ambiguous_step'
  | 'ambiguous_iteration'
  | 'step_not_suspended'
  | 'iteration_not_suspended'
  | 'invalid_resume_data'
  | 'resume_conflict'

/**
 * A refused resume. Nothing ran: every refusal is raised before Mastra
 * claims the run, so the run and its iterations are untouched.
 *
 * @example
 * try { await resumePusharyApproval({ mastra, workflowId, runId, step: 'approve', resumeData }) }
 * catch (error) { if (isPusharyResumeError(error) && error.code === 'ambiguous_iteration') askWhichItem() }
 */
export class PusharyResumeError extends PusharyError {
  override name = 'PusharyResumeError'
  declare readonly code: PusharyResumeErrorCode
  readonly workflowId: string
  readonly runId: string
  readonly field: string

  constructor(input: {
    code: PusharyResumeErrorCode
    workflowId: string
    runId: string
    field: string
    message: string
    cause?: unknown
  }) {
    super(
      input.code,
      `Pushary resume of workflow "${input.workflowId}" run "${input.runId}": ${input.message} (field "${input.field}")`,
      { cause: input.cause },
    )
    this.workflowId = input.workflowId
    this.runId = input.runId
    this.field = input.field
  }
}

/**
 * @example
 * if (isPusharyResumeError(error)) console.error(error.code)
 */
export function isPusharyResumeError(value: unknown): value is PusharyResumeError {
  return value instanceof PusharyResumeError
}

/**
 * The message of anything thrown, for a result's `reason`.
 *
 * @example
 * return { status: 'error', decisionId, reason: errorMessage(error) }
 */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
