import { createTool } from '@mastra/core/tools'
import { z } from 'zod/v4'
import { type PusharyConfig, resolvePusharyClient } from '../pushary/config.js'
import { PusharyValidationError } from '../pushary/errors.js'
import { externalIdSchema, idSchema } from '../pushary/identity.js'
import { PUSHARY_LIMITS } from '../pushary/limits.js'
import {
  answerPusharyQuestion,
  decisionStatusSchema,
  type PusharyQuestion,
  pusharyQuestionSchema,
} from '../pushary/question.js'
import { shownAgentName } from './agent-card.js'

/**
 * Options of {@link createPusharyAskTool}. The customer is bound here, by
 * trusted application code; the model never chooses whom to ask.
 *
 * @example
 * const opts: PusharyAskToolOptions = { externalId: customer.id, timeoutMs: 120_000 }
 */
export interface PusharyAskToolOptions {
  /** The person asked, from your authenticated session. */
  externalId: string
  /** Tool id; default `'ask-human'`. */
  id?: string
  description?: string
  /**
   * How long the tool waits for the answer; default 55 000 ms. When it ends
   * unanswered the tool returns `status: 'pending'` (not approved) with the
   * `decisionId`; the question stays open for your application to follow up.
   */
  timeoutMs?: number
  expiresInSeconds?: number
  requireReachable?: boolean
  /** Sandbox keys only: the outcome the service answers with by itself (`approve`, `deny`, `no_answer`). */
  sandboxOutcome?: 'approve' | 'deny' | 'no_answer'
  /** Who asks, on the card; default the name of the Mastra agent running the tool. */
  agentName?: string
}

/**
 * What the blocking ask tool returns to the model. `approved` is true only for
 * a confirm question answered affirmatively; a choice or typed text is
 * `value`, never permission. `status` is `pending` when the local wait ended
 * unanswered: nobody answered and nobody cancelled, the question is still
 * open, and `decisionId` names it so the application can follow up
 * (`client.decisions.get(decisionId)`), or withdraw it
 * (`client.decisions.cancel(decisionId)`).
 *
 * @example
 * pusharyAskToolOutputSchema.parse({ approved: false, value: null, status: 'expired', decisionId: 'dec_1' })
 */
export const pusharyAskToolOutputSchema = z.object({
  approved: z.boolean(),
  value: z.string().nullable(),
  status: z.enum([...decisionStatusSchema.options, 'unknown']),
  decisionId: z.string(),
})

/** @example const out: PusharyAskToolOutput = { approved: true, value: 'yes', status: 'answered', decisionId: 'dec_1' } */
export type PusharyAskToolOutput = z.infer<typeof pusharyAskToolOutputSchema>

const DEFAULT_DESCRIPTION =
  'Ask the customer on their phone: yes/no (type confirm), a choice (type select with options), or a ' +
  'written answer (type input). Blocks until they reply. Only a confirm answered yes is approval. ' +
  'status "pending" means they have not answered yet: do not act as if they had.'

const optionsSchema = z.object({
  externalId: externalIdSchema,
  id: idSchema.max(200).default('ask-human'),
  description: z.string().min(1).max(2000).optional(),
  timeoutMs: z.number().int().min(0).max(3_600_000).optional(),
  expiresInSeconds: z.number().int().min(1).max(2_592_000).optional(),
  requireReachable: z.boolean().optional(),
  sandboxOutcome: z.enum(['approve', 'deny', 'no_answer']).optional(),
  agentName: z.string().trim().min(1).max(PUSHARY_LIMITS.agentNameMax).optional(),
})

/**
 * Fail closed: only a well-formed confirm `yes` approves. An answer that does
 * not fit the question is reported as given but never approves.
 */
function toOutput(
  question: PusharyQuestion,
  decisionId: string,
  status: PusharyAskToolOutput['status'],
  value: string | null,
): PusharyAskToolOutput {
  if (status === 'pending') return { approved: false, value: null, status, decisionId }
  try {
    const { approved, value: answered, status: settled } = answerPusharyQuestion(question, status, value)
    return { approved, value: answered, status: settled, decisionId }
  } catch {
    return { approved: false, value: status === 'answered' ? value : null, status, decisionId }
  }
}

/** The card's name for the agent running the tool (its `name`, else its id); none outside an agent. */
function runningAgentName(context: unknown): string | undefined {
  const { agent, mastra } = (context ?? {}) as {
    agent?: { agentId?: unknown }
    mastra?: { getAgentById?: (id: string) => unknown }
  }
  const agentId = agent?.agentId
  if (typeof agentId !== 'string' || agentId === '') return undefined
  let found: unknown
  try {
    found = mastra?.getAgentById?.(agentId)
  } catch {
    found = undefined
  }
  return shownAgentName(found, agentId)
}

/**
 * A Mastra tool that asks the bound customer one question (confirm, select or
 * input) and blocks until they answer or the local wait ends. Returns
 * `{ approved, value, status }`. The model cannot force approval before
 * another tool with it: protect actions with Mastra's `requireApproval`.
 *
 * @example
 * const agent = new Agent({
 *   id: 'support', name: 'Support', instructions: 'Ask before refunds.', model,
 *   tools: { askHuman: createPusharyAskTool(config, { externalId: customer.id }) },
 * })
 */
export function createPusharyAskTool(config: PusharyConfig, opts: PusharyAskToolOptions) {
  const parsed = optionsSchema.safeParse(opts)
  if (!parsed.success) {
    const first = parsed.error.issues[0]?.path[0]
    throw PusharyValidationError.fromZod(parsed.error, {
      operation: 'createPusharyAskTool',
      code: first === 'externalId' ? 'invalid_external_id' : 'invalid_options',
      fieldPrefix: 'opts',
    })
  }
  const options = parsed.data
  const client = resolvePusharyClient(config, 'createPusharyAskTool')

  return createTool({
    id: options.id,
    description: options.description ?? DEFAULT_DESCRIPTION,
    inputSchema: pusharyQuestionSchema,
    outputSchema: pusharyAskToolOutputSchema,
    // Mastra reads an object with a `value` key as an already-wrapped result
    // and would show the model only the value; wrap it so the model also
    // sees `approved` and `status`.
    toModelOutput: (output) => ({ type: 'json', value: output }),
    execute: async (input, context) => {
      const question = pusharyQuestionSchema.parse(input)
      const agentName = options.agentName ?? runningAgentName(context)
      const result = await client.decisions.ask({
        question: question.question,
        type: question.type,
        ...(question.options ? { options: question.options } : {}),
        // Bound at construction: anything the model put in its arguments is ignored.
        externalId: options.externalId,
        toolName: options.id,
        ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
        ...(options.expiresInSeconds === undefined ? {} : { expiresInSeconds: options.expiresInSeconds }),
        ...(options.requireReachable === undefined ? {} : { requireReachable: options.requireReachable }),
        ...(agentName === undefined ? {} : { agentName }),
        ...(options.sandboxOutcome === undefined ? {} : { sandboxOutcome: options.sandboxOutcome }),
      })
      // An unanswered local wait is reported as what it is: still pending,
      // not approved, the question left open under its decisionId. Nobody
      // cancelled it, so the tool does not either.
      return toOutput(question, result.decisionId, result.status, result.value)
    },
  })
}
