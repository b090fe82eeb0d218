import { z } from 'zod/v4'
import { externalIdSchema } from '../pushary/identity.js'
import { type PusharyQuestion, pusharyQuestionSchema } from '../pushary/question.js'

/**
 * What the deferred question tool suspends with: a marker, the customer bound
 * at construction, and the question the model asked. Only suspensions of this
 * shape may be opened as question reviews.
 *
 * @example
 * pusharyQuestionSuspendSchema.parse({ pushary: 'question', externalId: 'c1', request: { question: 'Which size?', type: 'input' } })
 */
export const pusharyQuestionSuspendSchema = z.object({
  pushary: z.literal('question'),
  externalId: externalIdSchema,
  request: pusharyQuestionSchema,
})

/** @example const s: PusharyQuestionSuspend = { pushary: 'question', externalId: 'c1', request } */
export type PusharyQuestionSuspend = { pushary: 'question'; externalId: string; request: PusharyQuestion }

/**
 * The question suspension in a payload, or `null` when it is anything else.
 *
 * @example
 * const question = questionSuspensionOf(call.suspendPayload)
 */
export function questionSuspensionOf(payload: unknown): PusharyQuestionSuspend | null {
  const parsed = pusharyQuestionSuspendSchema.safeParse(payload)
  return parsed.success ? parsed.data : null
}
