import { createTool } from '@mastra/core/tools'
import { z } from 'zod/v4'
import { type PusharyConfig, resolvePusharyClient } from '../pushary/config.js'
import { PusharyValidationError } from '../pushary/errors.js'
import { canonicalJson, fingerprintPusharyAction } from '../pushary/identity.js'
import {
  answerPusharyQuestion,
  type PusharyQuestion,
  pusharyAnswerSchema,
  pusharyQuestionSchema,
} from '../pushary/question.js'
import { AGENT_REVIEW_WORKFLOW_ID } from './agent-binding.js'
import { pusharyQuestionSuspendSchema, questionSuspensionOf } from './question-suspension.js'
import { checkedId } from './review-subject.js'

/**
 * Options of {@link createPusharyDeferredAskTool}.
 *
 * @example
 * const opts: PusharyDeferredAskToolOptions = { externalId: customer.id }
 */
export interface PusharyDeferredAskToolOptions {
  externalId: string
  id?: string
  description?: string
}

const DEFAULT_DESCRIPTION =
  'Ask this customer yes/no (confirm), a choice (select with options) or a written answer (input) in ' +
  'the Pushary app. Pauses until they answer. Only a confirm answered yes is approval.'

function refuse(field: string, message: string): never {
  throw new PusharyValidationError({
    code: 'binding_mismatch',
    operation: 'pusharyDeferredAskTool',
    field,
    message,
  })
}

/** The decision must be the one the package workflow created for exactly this customer and question. */
function checkDecision(
  decision: {
    externalId: string | null
    type: string
    question: string
    options: string[] | null
    context: string | null
  },
  externalId: string,
  request: PusharyQuestion,
): void {
  if (decision.externalId !== null && decision.externalId !== externalId)
    refuse('externalId', 'another customer')
  if (decision.type !== request.type || decision.question.trim() !== request.question) {
    refuse('question', 'the decision asks another question')
  }
  if (canonicalJson(decision.options ?? []) !== canonicalJson(request.options ?? []))
    refuse('options', 'other options')
  let context: Record<string, unknown> = {}
  try {
    context = JSON.parse(decision.context ?? '') as Record<string, unknown>
  } catch {
    refuse('context', 'the decision carries no review binding')
  }
  if (
    context.workflowId !== AGENT_REVIEW_WORKFLOW_ID ||
    context.externalId !== externalId ||
    context.questionHash !== fingerprintPusharyAction(request)
  ) {
    refuse('context', 'the decision was not opened for this question')
  }
}

/**
 * The deferred question tool: the model asks (confirm, select or input), the
 * tool suspends with `{ pushary: 'question', externalId, request }` and makes
 * no request; `openPusharyAgentReview` opens the phone review afterwards and
 * `resumePusharyAgentReview` (or the dispatcher) resumes it with the decision
 * ID. On that framework resume the tool re-reads the decision and returns
 * `{ status, value, approved }`: select and input are data (`approved:
 * false`, even for "yes"). Resume data the model puts in its own arguments
 * (Mastra passes it through) is ignored: without a framework resume of this
 * very suspension the tool suspends again. Keep `autoResumeSuspendedTools`
 * off for customer reviews.
 *
 * @example
 * const askHuman = createPusharyDeferredAskTool(config, { externalId: customer.id })
 */
export function createPusharyDeferredAskTool(config: PusharyConfig, opts: PusharyDeferredAskToolOptions) {
  const operation = 'createPusharyDeferredAskTool'
  const externalId = checkedId(opts?.externalId, 'opts.externalId', operation, true)
  const id = opts.id === undefined ? 'ask-human' : checkedId(opts.id, 'opts.id', operation)
  const client = resolvePusharyClient(config, operation)

  return createTool({
    id,
    description: opts.description ?? DEFAULT_DESCRIPTION,
    inputSchema: pusharyQuestionSchema,
    outputSchema: pusharyAnswerSchema,
    suspendSchema: pusharyQuestionSuspendSchema,
    resumeSchema: z.object({ decisionId: z.string().min(1) }),
    toModelOutput: (output) => ({ type: 'json', value: output }),
    execute: async (input, context) => {
      const agent = context?.agent
      if (!agent) throw new Error('Pushary: the deferred question tool must run inside a Mastra agent.')
      const request = pusharyQuestionSchema.parse(input)
      const asked = { pushary: 'question' as const, externalId, request }
      const suspended = questionSuspensionOf(agent.suspendPayload)
      const framework =
        agent.resumeData !== undefined &&
        suspended !== null &&
        fingerprintPusharyAction(suspended) === fingerprintPusharyAction(asked)
      // No framework resume of this exact suspension (first call, a model that
      // smuggled resumeData into its arguments, auto-resume): ask, never answer.
      if (!framework) return agent.suspend(asked)
      const decisionId = (agent.resumeData as { decisionId: string }).decisionId
      const decision = await client.decisions.get(decisionId)
      checkDecision(decision, externalId, request)
      if (decision.status === 'pending') throw new Error('Pushary: the customer has not answered yet.')
      return answerPusharyQuestion(request, decision.status, decision.value)
    },
  })
}
