/**
 * Where a decision comes from, read from what it carries on the wire: the
 * package's binding `context` (JSON it writes for every decision it asks)
 * names a workflow step, an agent review or an item of a multi-item batch.
 * Any other context is the application's own free text and says nothing.
 * Read leniently: a context that is not this shape is simply not ours.
 */
import type { StoredDecision } from '../service-types.js'

/** The page's label for who asks. */
export type CardSource =
  | { readonly kind: 'agent' | 'workflow' | 'application' }
  | { readonly kind: 'batch'; readonly group: string; readonly item: number | null }

// The workflow every agent review runs through (the package's agent room);
// the service imports nothing from there, so the ID is repeated here.
const AGENT_REVIEW_WORKFLOW_ID = 'pushary-agent-review'
const GROUP_KEY = /^b_[0-9a-f]{40}$/

function parseContext(context: string | null): Record<string, unknown> | null {
  if (context === null || !context.startsWith('{')) return null
  try {
    const parsed: unknown = JSON.parse(context)
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : null
  } catch {
    return null
  }
}

/**
 * The decision's source for its card label, and its batch group if any.
 *
 * @example
 * cardSource(decision).kind // 'batch'
 */
export function cardSource(decision: Pick<StoredDecision, 'context' | 'agentName'>): CardSource {
  const context = parseContext(decision.context)
  if (context?.pushary === 'workflow-step') {
    if (typeof context.batch === 'string' && GROUP_KEY.test(context.batch)) {
      const item = context.batchItem
      return {
        kind: 'batch',
        group: context.batch,
        item: typeof item === 'number' && Number.isSafeInteger(item) && item >= 0 ? item : null,
      }
    }
    return { kind: context.workflowId === AGENT_REVIEW_WORKFLOW_ID ? 'agent' : 'workflow' }
  }
  if (context?.pushary === 'agent-review') return { kind: 'agent' }
  return { kind: decision.agentName ? 'agent' : 'application' }
}

/**
 * The label shown on the card for a source.
 *
 * @example
 * sourceLabel({ kind: 'workflow' }) // 'Workflow'
 */
export function sourceLabel(source: CardSource): string {
  switch (source.kind) {
    case 'agent':
      return 'Agent'
    case 'workflow':
      return 'Workflow'
    case 'batch':
      return source.item === null ? 'Batch' : `Batch item ${source.item + 1}`
    case 'application':
      return 'Application'
    default: {
      const unknown: never = source
      return String(unknown)
    }
  }
}
