/**
 * The info lines that show the path of each approval in a default setup:
 * asked, answered, resumed. One logger call per line through the Mastra
 * instance's logger (never `console`), a short message an operator can read
 * and the same facts as structured fields (`event`, `decisionId`, ...). Never
 * the answer's text, never the customer: a line says what happened, the
 * review store and `pushary-mastra reviews show` say to whom.
 */
import type { Mastra } from '@mastra/core/mastra'

/** The structured fields of the `asked` line. */
export interface AskedLogFields {
  decisionId: string
  workflowId: string
  runId: string
  stepId: string
  delivery: 'push' | 'fallback'
  /** The tool or action the card names (`subject.toolName`), when it names one. */
  toolName?: string | undefined
  /**
   * The suspended agent call the question is about, when an agent review's
   * run asked: the `answered` and `resumed` lines name that agent run, so the
   * `asked` line names it too, beside the review run that asked.
   */
  agent?: AskingAgent | undefined
}

/** The agent call an agent review's run asks about. */
export interface AskingAgent {
  agentId: string
  runId: string
  toolCallId: string
}

/** The agent review workflow's ID (`agents/agent-binding.ts`; this room sits below it, so it is named here too). */
const AGENT_REVIEW_WORKFLOW = 'pushary-agent-review'

/**
 * The agent call an agent review's run asks about, from its input (`agent`,
 * as the agent review workflow starts its run); undefined for any other
 * workflow, whatever its input holds. It only labels a log line.
 *
 * @example
 * askingAgentOf(workflowId, getInitData()) // { agentId: 'refunder', runId: '…', toolCallId: 'call_1' }
 */
export function askingAgentOf(workflowId: string, inputData: unknown): AskingAgent | undefined {
  if (workflowId !== AGENT_REVIEW_WORKFLOW) return undefined
  const agent = (inputData as { agent?: Record<string, unknown> } | null)?.agent
  if (typeof agent !== 'object' || agent === null) return undefined
  const { agentId, runId, toolCallId } = agent
  if (typeof agentId !== 'string' || typeof runId !== 'string' || typeof toolCallId !== 'string')
    return undefined
  return { agentId, runId, toolCallId }
}

/** The structured fields of the `answered` line: the verified reading, never the answer's text. */
export interface AnsweredLogFields {
  decisionId: string
  runId: string
  /** The decision's status as the service reported it (`answered`, `expired`, `cancelled`). */
  status: string
  approved: boolean | null
  target: 'workflow-step' | 'agent'
}

/** The structured fields of the `resumed` line: how the resume ended the review, and why. */
export interface ResumedLogFields {
  decisionId: string
  /** The dispatch result (`resumed`, `stale`, `uncertain`, `duplicate`, ...). */
  status: string
  /** The state the review is in after it (`completed`, `stale`, `uncertain`, ...), when known. */
  state: string | null
  reasonCode?: string | undefined
  reason?: string | undefined
  actionOutcome?: string | undefined
}

function info(mastra: Mastra | undefined, message: string, fields: Record<string, unknown>): void {
  try {
    mastra?.getLogger()?.info(`[pushary] ${message}`, fields)
  } catch {
    // A logger that throws must not fail the question or the resume.
  }
}

/**
 * Logs that a person was asked (the decision was created and the review saved).
 *
 * @example
 * logAsked(mastra, { decisionId, workflowId, runId, stepId, delivery: 'push' })
 */
export function logAsked(mastra: Mastra | undefined, fields: AskedLogFields): void {
  const by = fields.delivery === 'fallback' ? 'approval link (fallback)' : 'push'
  const tool = fields.toolName === undefined ? '' : ` tool ${oneLine(fields.toolName)}`
  const where = `workflow ${fields.workflowId} run ${fields.runId} step ${fields.stepId}`
  const agent = fields.agent
  const about = agent
    ? `agent ${oneLine(agent.agentId)} run ${oneLine(agent.runId)} call ${oneLine(agent.toolCallId)}${tool}; review ${where}`
    : `${where}${tool}`
  info(mastra, `asked: decision ${fields.decisionId} by ${by} (${about})`, {
    event: 'pushary.asked',
    ...withoutUndefined(fields),
  })
}

/**
 * Logs the verified answer a resume read from the service (its status and
 * whether it approves; never its text).
 *
 * @example
 * logAnswered(mastra, { decisionId, runId, status: 'answered', approved: true, target: 'workflow-step' })
 */
export function logAnswered(mastra: Mastra | undefined, fields: AnsweredLogFields): void {
  const reading =
    fields.approved === null ? 'no approval reading' : fields.approved ? 'approved' : 'not approved'
  info(mastra, `answered: decision ${fields.decisionId} ${fields.status}, ${reading} (run ${fields.runId})`, {
    event: 'pushary.answered',
    ...fields,
  })
}

/**
 * Logs how a resume ended a review: the state it left and the reason.
 *
 * @example
 * logResumed(mastra, { decisionId, status: 'resumed', state: 'completed' })
 */
export function logResumed(mastra: Mastra | undefined, fields: ResumedLogFields): void {
  const why = fields.reasonCode ?? fields.reason
  info(
    mastra,
    `resumed: decision ${fields.decisionId} ${fields.status}${fields.state ? `, review ${fields.state}` : ''}${why ? ` (${why})` : ''}`,
    { event: 'pushary.resumed', ...withoutUndefined(fields) },
  )
}

/**
 * Text from an application or a model (a card's tool name, an agent's IDs)
 * as one line of a plain-text log: control characters become spaces, so it
 * cannot start a line that reads like another. The structured fields keep it
 * as given.
 */
function oneLine(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the characters this removes
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, ' ')
}

function withoutUndefined<T extends object>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as Partial<T>
}
