/**
 * What a permit binds, as the reviewer sees it. A human approval is spent
 * (`POST /authorizations/consume`) only for exactly the action fields of its
 * decision: action name, target, actor, environment and parameters. The
 * cards draw those fields from this module and `permits.ts` refuses a
 * consume from the same answer, so what the card shows and what a permit may
 * cover cannot drift apart: a field the card could not draw exactly (a value
 * written before the displayed-text rule refused invisible characters) was
 * not seen, and its approval authorizes nothing.
 */
import { isDisplayedTextExact } from '../pushary/display-text.js'
import type { DecisionContent } from './service-types.js'

/** The text fields of an action a permit binds, in the order a card lists them, with their labels. */
export const BOUND_TEXT_FIELDS = [
  ['toolName', 'Action'],
  ['toolTarget', 'Target'],
  ['actor', 'Acting as'],
  ['environment', 'Environment'],
] as const satisfies ReadonlyArray<readonly [keyof DecisionContent, string]>

/** One of {@link BOUND_TEXT_FIELDS}. */
export type BoundTextField = (typeof BOUND_TEXT_FIELDS)[number][0]

type Bound = Pick<DecisionContent, BoundTextField | 'parameters'>

/**
 * The bound fields (wire names; a parameter as `parameters.<key>`) whose
 * text a card cannot draw exactly, so the person who answered never saw
 * them. Empty for every decision the service accepts today.
 *
 * @example
 * unshownBoundFields({ ...decision, toolTarget: 'o-1\uFE0F' }) // ['toolTarget']
 */
export function unshownBoundFields(decision: Bound): string[] {
  const unshown: string[] = []
  for (const [field] of BOUND_TEXT_FIELDS) {
    const value = decision[field]
    if (value !== null && !isDisplayedTextExact(value)) unshown.push(field)
  }
  for (const [key, value] of Object.entries(decision.parameters ?? {})) {
    if (!isDisplayedTextExact(key) || (typeof value === 'string' && !isDisplayedTextExact(value))) {
      unshown.push(`parameters.${key}`)
    }
  }
  return unshown
}
