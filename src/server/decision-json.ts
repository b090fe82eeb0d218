/**
 * A stored decision as `GET /decisions/:id` (and each list item) answers it:
 * the hosted API's declared fields first, then this service's local extras
 * (tool and agent fields, presentation, parameters, answer source and the
 * callback deliveries), which the package never relies on against the
 * hosted API.
 */
import type { CallbackDelivery } from './callbacks-outbox.js'
import type { DecisionRecord } from './decisions-repo.js'

/**
 * Builds the JSON of one decision.
 *
 * @example
 * return c.json(decisionJson(decision, await outbox.deliveriesFor(decision.decisionId)))
 */
export function decisionJson(d: DecisionRecord, deliveries?: CallbackDelivery[]): Record<string, unknown> {
  return {
    decisionId: d.decisionId,
    status: d.status,
    answered: d.status === 'answered',
    value: d.value,
    type: d.type,
    question: d.question,
    options: d.options,
    externalId: d.externalId,
    context: d.context,
    createdAt: d.createdAt,
    answeredAt: d.answeredAt,
    expiresAt: d.expiresAt,
    toolName: d.toolName,
    toolTarget: d.toolTarget,
    agentName: d.agentName,
    placeholder: d.placeholder,
    presentation: d.presentation,
    parameters: d.parameters,
    autoResolved: d.answerSource === 'sandbox',
    decisionOrigin: 'local',
    answerSource: d.answerSource,
    ...(deliveries ? { deliveries: deliveries as unknown as Record<string, unknown>[] } : {}),
  }
}

// The fields the hosted API declares for `GET /decisions/:id`: enough for the
// customer's agent to learn its answer.
const BOUND_KEY_FIELDS = [
  'decisionId',
  'status',
  'answered',
  'value',
  'type',
  'question',
  'options',
  'externalId',
  'context',
  'createdAt',
  'answeredAt',
  'expiresAt',
] as const

/**
 * A decision as a bound key reads it (one or in a list): only the hosted
 * API's declared fields. The local extras name the application's side of
 * the decision, its callback URL (in `deliveries`) and what a permit binds
 * (tool, target, parameters, presentation), none of which the customer's
 * agent needs, and a site-created decision for the customer carries them too.
 *
 * @example
 * return c.json(boundKeyView(decisionJson(decision)))
 */
export function boundKeyView(json: Record<string, unknown>): Record<string, unknown> {
  const view: Record<string, unknown> = {}
  for (const field of BOUND_KEY_FIELDS) view[field] = json[field] ?? null
  return view
}
