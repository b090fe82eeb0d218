/**
 * What became of one approved tool call, read from Mastra's own output of
 * the native approval, never assumed from the review run finishing. Mastra
 * hands a tool's error to the model as the tool result and ends the
 * generation normally, so a run that ended `success` may have run nothing
 * (the tool refused its input) or failed (the tool threw). Shapes read
 * (Mastra 1.71, measured): a thrown tool leaves a `tool-result` part with an
 * `error-text`/`error-json` output (or a `tool-error` part) in the steps and
 * no entry in `toolResults`; a refused input leaves a `toolResults` entry
 * whose result is `{ error: true, message: 'Tool input validation failed …' }`.
 */
import type { ActionEnding } from '../resume/action-evidence.js'
import type { PusharyActionOutcome } from '../store/review-schema.js'

/**
 * The outcome of one approved call, and the evidence it was read from.
 * `moved_on`: the generation suspended again on another call of the same
 * step before finishing it; Mastra's output of such a generation holds no
 * result for any call of that step (measured), so there is nothing to read
 * yet, which is not read as success either: no action outcome is recorded.
 */
export interface ToolCallOutcome {
  outcome: Extract<PusharyActionOutcome, 'ran' | 'failed' | 'refused' | 'unknown'> | 'moved_on'
  evidence: string
}

const EVIDENCE_MAX = 300

function record(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : null
}

function short(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value ?? null)
  return (text ?? '').slice(0, EVIDENCE_MAX)
}

/** A Mastra validation refusal: the tool never ran. */
function refusedInput(result: unknown): string | null {
  const value = record(result)
  if (value?.error !== true || typeof value.message !== 'string') return null
  return /^Tool input validation failed/.test(value.message) ? value.message : null
}

/** Every content part of the generation's steps (a stream's are awaited). */
async function stepParts(output: Record<string, unknown>): Promise<Record<string, unknown>[]> {
  const steps = await Promise.resolve(output.steps).catch(() => undefined)
  if (!Array.isArray(steps)) return []
  const parts: Record<string, unknown>[] = []
  for (const step of steps) {
    const content = record(step)?.content ?? step
    if (!Array.isArray(content)) continue
    for (const part of content) {
      const item = record(part)
      if (item) parts.push(item)
    }
  }
  return parts
}

/** The `toolResults` entries of the generation (a stream's are awaited). */
async function toolResults(output: Record<string, unknown>): Promise<Record<string, unknown>[]> {
  const results = await Promise.resolve(output.toolResults).catch(() => undefined)
  if (!Array.isArray(results)) return []
  return results.flatMap((entry) => {
    const item = record(entry)
    const payload = record(item?.payload) ?? item
    return payload ? [payload] : []
  })
}

/**
 * Reads what the native approval did with `toolCallId`. `unknown` when the
 * output holds nothing about the call (the evidence is missing, which is
 * never read as success).
 *
 * @example
 * const { outcome } = await toolCallOutcome(await agent.approveToolCallGenerate(ids), ids.toolCallId)
 */
export async function toolCallOutcome(output: unknown, toolCallId: string): Promise<ToolCallOutcome> {
  const value = record(output)
  if (!value) return { outcome: 'unknown', evidence: 'the native resume returned no output' }
  for (const part of await stepParts(value)) {
    if (part.toolCallId !== toolCallId) continue
    if (part.type === 'tool-error') {
      return { outcome: 'failed', evidence: `the tool threw: ${short(part.error)}` }
    }
    if (part.type !== 'tool-result') continue
    const result = record(part.output)
    if (result?.type === 'error-text' || result?.type === 'error-json') {
      return { outcome: 'failed', evidence: `the tool threw: ${short(result.value)}` }
    }
  }
  for (const result of await toolResults(value)) {
    if (result.toolCallId !== toolCallId) continue
    const refused = refusedInput(result.result ?? result.output)
    if (refused) return { outcome: 'refused', evidence: `the tool refused its input: ${short(refused)}` }
    return { outcome: 'ran', evidence: 'the tool returned its result' }
  }
  for (const part of await stepParts(value)) {
    if (part.toolCallId !== toolCallId || part.type !== 'tool-result') continue
    const result = record(part.output)
    const refused = refusedInput(result?.value)
    if (refused) return { outcome: 'refused', evidence: `the tool refused its input: ${short(refused)}` }
    return { outcome: 'ran', evidence: 'the tool returned its result' }
  }
  if ((await Promise.resolve(value.finishReason).catch(() => undefined)) === 'suspended') {
    return {
      outcome: 'moved_on',
      evidence: 'the generation suspended again on another call of the same step before reporting this one',
    }
  }
  return { outcome: 'unknown', evidence: `the native resume reported nothing about tool call ${toolCallId}` }
}

/**
 * The ending an agent review earns from its finished review run's result
 * (`{ action, toolOutcome, toolEvidence }`, written by the run's last step):
 * `completed` only when the approved tool ran (or nothing was approved: a
 * decline, or a question answered); a refused input never ran (`stale`); a
 * thrown tool, or a run that kept no evidence (one finished by an earlier
 * release of the package), is `uncertain` for an operator. A generation that
 * moved on to the next approval of the same step completes the review with
 * no action outcome (see `moved_on`).
 *
 * @example
 * const ending = agentRunEnding(review.kind, snapshot.result)
 */
export function agentRunEnding(kind: 'approval' | 'question', result: unknown): ActionEnding {
  const value = record(result)
  const action = value?.action
  if (kind === 'question' || action === 'answered') {
    return { state: 'completed', outcome: 'ran', reason: 'the question tool resumed with the answer' }
  }
  if (action === 'declined') {
    return {
      state: 'completed',
      outcome: 'not_run',
      reason: 'the call was declined; the tool did not run',
    }
  }
  const outcome = value?.toolOutcome
  const evidence = typeof value?.toolEvidence === 'string' ? value.toolEvidence : 'no evidence was kept'
  const hint = 'confirm it from the business records, then reviews recover <decisionId> completed|stale'
  switch (action === 'approved' ? outcome : undefined) {
    case 'moved_on':
      return {
        state: 'completed',
        outcome: null,
        reason: `the approval was applied and the agent run went on to its next approval (${evidence}); no outcome of this call to record yet`,
      }
    case 'ran':
      return { state: 'completed', outcome: 'ran', reason: `the approved tool ran: ${evidence}` }
    case 'refused':
      return {
        state: 'stale',
        outcome: 'refused',
        reason: `the approved call never ran: ${evidence}`,
        reasonCode: 'tool_input_refused',
      }
    case 'failed':
      return {
        state: 'uncertain',
        outcome: 'failed',
        reason: `the approved tool failed: ${evidence}; ${hint}`,
        reasonCode: 'tool_failed',
      }
    default:
      return {
        state: 'uncertain',
        outcome: 'unknown',
        reason: `the review run finished without evidence that the approved tool ran (${evidence}); ${hint}`,
        reasonCode: 'action_unknown',
      }
  }
}
