/**
 * Shared preparation of one agent review: the question for an approval, the
 * trusted subject, and the binding. Everything here runs before any HTTP
 * request and throws typed errors naming the field.
 */
import { refineDisplayedText } from '../pushary/display-text.js'
import { isPusharyValidationError, PusharyValidationError } from '../pushary/errors.js'
import { externalIdSchema, fingerprintPusharyAction, idSchema } from '../pushary/identity.js'
import { type PusharyQuestion, parsePusharyQuestion } from '../pushary/question.js'
import { readableParameters } from '../pushary/readable-input.js'
import { type PusharyApprovalSubject, pusharyApprovalSubjectSchema } from '../steps/approval-schemas.js'
import { agentBindingContext, inputFingerprint, type PusharyAgentReviewBinding } from './agent-binding.js'
import type { AgentCard } from './agent-card.js'
import type { NormalizedCall } from './agent-shapes.js'
import { questionSuspensionOf } from './question-suspension.js'

/**
 * Trusted facts shown to the reviewer, supplied by your application (never
 * taken from the model): parameters, presentation, target, actor, environment
 * and free-form context (fingerprinted into the binding, not sent).
 *
 * @example
 * const subject: PusharyReviewSubject = { toolTarget: 'order o1', parameters: { amountMinor: 4800 } }
 */
export type PusharyReviewSubject = Omit<PusharyApprovalSubject, 'toolName' | 'agentName'> & {
  context?: string
}

/**
 * `Approve <tool>?`, followed by the args as JSON only when they are not sent
 * as parameters; JSON longer than 300 characters is cut with a note saying
 * how much is not shown (the binding still covers all of it).
 */
export function renderApprovalQuestion(toolName: string, args: unknown, shownAsParameters = false): string {
  if (shownAsParameters) return `Approve ${toolName}?`
  let summary: string | undefined
  try {
    summary =
      typeof args === 'string' ? args : args === undefined || args === null ? undefined : JSON.stringify(args)
  } catch {
    summary = undefined
  }
  if (!summary) return `Approve ${toolName}?`
  const head = `Approve ${toolName}? `
  const room = Math.min(300, 500 - head.length - 48)
  if (summary.length <= room) return `${head}${summary}`
  return `${head}${summary.slice(0, room)}… (${summary.length - room} more characters not shown)`
}

/**
 * The arguments' scalar leaves become `parameters`, keyed by path (all or
 * nothing, so a policy never reads half of them and the card never shows half).
 */
function deriveParameters(args: unknown): Record<string, string | number | boolean> | undefined {
  return readableParameters(args)
}

function fail(
  operation: string,
  field: string,
  message: string,
  code: 'invalid_identifier' | 'invalid_decision_input' | 'invalid_question' = 'invalid_decision_input',
): never {
  throw new PusharyValidationError({ code, operation, field, message })
}

export function checkedId(value: unknown, field: string, operation: string, external = false): string {
  const parsed = (external ? externalIdSchema : idSchema).safeParse(value)
  if (parsed.success) return parsed.data
  throw PusharyValidationError.fromZod(parsed.error, {
    operation,
    code: external ? 'invalid_external_id' : 'invalid_identifier',
    fieldPrefix: field,
  })
}

/**
 * The input fingerprint, refused before any request when the tool arguments
 * are not JSON (a bigint, a function, a cycle, a class instance, a
 * non-finite number): a review must bind exactly what the service can echo.
 */
function argumentsFingerprint(input: unknown, kind: 'approval' | 'question', operation: string): string {
  try {
    return inputFingerprint(input)
  } catch (error) {
    if (!isPusharyValidationError(error)) throw error
    const root = kind === 'approval' ? 'args' : 'suspendPayload.request'
    const field = error.field === undefined ? root : `${root}${error.field.replace(/^value/, '')}`
    throw new PusharyValidationError({
      code: 'invalid_decision_input',
      operation,
      field,
      message: 'the tool arguments are not JSON, so no review can bind them',
      cause: error,
    })
  }
}

// The same displayed-text rule as the step's input, checked here so a bad
// tool description or agent name is refused before the review run starts.
const shownSubjectSchema = pusharyApprovalSubjectSchema.superRefine((value, context) =>
  refineDisplayedText(value, context),
)

export interface PreparedReview {
  binding: PusharyAgentReviewBinding
  /** What the decision carries besides the question (tool name, trusted subject). */
  stepSubject: PusharyApprovalSubject
}

/**
 * Builds and checks the binding of one suspended call.
 *
 * @example
 * const { binding } = prepareAgentReview({ operation, agentId, run, call, externalId, actionVersion })
 */
export function prepareAgentReview(input: {
  operation: string
  agentId: string
  run: { runId: string; threadId?: string | undefined; resourceId?: string | undefined }
  call: NormalizedCall
  externalId: string
  actionVersion: string
  question?: string | undefined
  subject?: PusharyReviewSubject | undefined
  /** The agent's name, and for an approval the tool's description and risk (`agentCardOf`). */
  card?: AgentCard | undefined
  /** Several approvers (`externalId` is then the set's first member). */
  approverSet?: PusharyAgentReviewBinding['approverSet']
}): PreparedReview {
  const { operation, call } = input
  const toolCallId = checkedId(call.toolCallId, 'toolCallId', operation)
  const toolName = checkedId(call.toolName, 'toolName', operation)
  const externalId = checkedId(input.externalId, 'externalId', operation, true)
  let question: PusharyQuestion
  let kind: 'approval' | 'question'
  let toolInput: unknown
  // The args as a labelled list (read once: the question's wording and the card both use it).
  const derived = call.kind === 'approval' ? deriveParameters(call.args) : undefined
  if (call.kind === 'approval') {
    kind = 'approval'
    toolInput = call.args ?? null
    // The args are shown as a labelled list when they go out as parameters.
    const asParameters = input.subject?.parameters === undefined && derived !== undefined
    question = parsePusharyQuestion(
      {
        type: 'confirm',
        question: input.question ?? renderApprovalQuestion(toolName, call.args, asParameters),
      },
      operation,
    )
  } else {
    const suspension = questionSuspensionOf(call.suspendPayload)
    if (!suspension) {
      fail(
        operation,
        'toolCallId',
        "the call is suspended by a tool that is not this package's deferred ask tool",
      )
    }
    if (suspension.externalId !== externalId)
      fail(operation, 'externalId', 'the question was asked for another customer')
    kind = 'question'
    toolInput = suspension.request
    question = suspension.request
  }
  const { context: subjectContext, ...shown } = input.subject ?? {}
  // What the card shows is all in the subject, so all of it is in the subject hash.
  const parsedSubject = shownSubjectSchema.safeParse({
    ...shown,
    ...input.card,
    toolName,
    parameters: shown.parameters ?? derived,
  })
  if (!parsedSubject.success) {
    throw PusharyValidationError.fromZod(parsedSubject.error, {
      operation,
      code: 'invalid_decision_input',
      fieldPrefix: 'subject',
    })
  }
  const stepSubject = parsedSubject.data
  const binding: PusharyAgentReviewBinding = {
    version: 1,
    agentId: checkedId(input.agentId, 'agentId', operation),
    runId: checkedId(input.run.runId, 'runId', operation),
    toolCallId,
    toolName,
    externalId,
    actionVersion: checkedId(input.actionVersion, 'actionVersion', operation),
    inputHash: argumentsFingerprint(toolInput, kind, operation),
    subjectHash: fingerprintPusharyAction({ ...stepSubject, context: subjectContext }),
    kind,
    question,
    ...(input.run.threadId === undefined ? {} : { threadId: input.run.threadId }),
    ...(input.run.resourceId === undefined ? {} : { resourceId: input.run.resourceId }),
    ...(input.approverSet === undefined ? {} : { approverSet: input.approverSet }),
  }
  agentBindingContext(binding, operation)
  return { binding, stepSubject }
}
