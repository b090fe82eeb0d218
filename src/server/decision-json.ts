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
