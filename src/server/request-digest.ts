/**
 * What an idempotency key is bound to. A key names one request: a retry of
 * the same create lands on the same decision, but a key reused for another
 * question or another customer must never hand back the first decision's
 * answer (that answer was given to a question nobody showed for the second).
 * The digest covers what is asked and of whom, not how it is delivered
 * (callback URL, lifetime, waiting), so a retry from a restarted host with
 * another callback address still finds its decision.
 */
import { createHash } from 'node:crypto'
import type { DecisionRecord, NewDecision } from './decisions-repo.js'

type DigestSource = Pick<
  NewDecision,
  | 'type'
  | 'question'
  | 'options'
  | 'placeholder'
  | 'context'
  | 'externalId'
  | 'email'
  | 'agentName'
  | 'toolName'
  | 'toolTarget'
  | 'actor'
  | 'environment'
  | 'parameters'
  | 'presentation'
>

// Keys sorted at every level, so the digest does not depend on the order the
// caller wrote its JSON in.
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical)
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, entry]) => entry !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return Object.fromEntries(entries.map(([key, entry]) => [key, canonical(entry)]))
  }
  return value
}

/**
 * SHA-256 (hex) of the request content an idempotency key is bound to.
 *
 * @example
 * const digest = requestDigest(newDecision)
 */
export function requestDigest(source: DigestSource): string {
  const content = {
    type: source.type,
    question: source.question,
    options: source.options,
    placeholder: source.placeholder,
    context: source.context,
    externalId: source.externalId,
    email: source.email,
    agentName: source.agentName,
    toolName: source.toolName,
    toolTarget: source.toolTarget,
    actor: source.actor,
    environment: source.environment,
    parameters: source.parameters,
    presentation: source.presentation,
  }
  return createHash('sha256')
    .update(JSON.stringify(canonical(content)))
    .digest('hex')
}

/**
 * True when `stored` (the decision already holding the key) was created by
 * the same request content as `digest`. A row written before digests were
 * stored is compared by the digest of its stored fields.
 *
 * @example
 * if (!sameRequest(existing, requestDigest(input))) return conflict()
 */
export function sameRequest(stored: DecisionRecord, digest: string): boolean {
  return (stored.requestDigest ?? requestDigest(stored)) === digest
}
