/**
 * The items of one multi-item approval as one card. Decisions are grouped by
 * the batch key in their binding context (`card-source.ts`); the card lists
 * every pending item with its own controls and ends with "Approve all N" /
 * "Deny all N", a form that names exactly the decision IDs drawn here, so an
 * item that arrives after this render is never answered by it.
 */
import type { StoredDecision } from '../service-types.js'
import { cardSource } from './card-source.js'
import { html, type SafeHtml } from './html.js'

/** One entry of the list: a lone decision, or the pending items of one batch. */
export type ListEntry =
  | { readonly kind: 'single'; readonly decision: StoredDecision }
  | { readonly kind: 'batch'; readonly group: string; readonly decisions: readonly StoredDecision[] }

/** Where the bulk form posts; the route checks every listed item as a single tap. */
export const BATCH_ANSWER_PATH = '/review/batch/answer'

/**
 * Groups a pending list: a batch with two or more pending items becomes one
 * entry (at its newest item's place, items in batch order); everything else
 * stays a single card.
 *
 * @example
 * groupDecisions(await deps.listPendingFor(externalId))
 */
export function groupDecisions(decisions: readonly StoredDecision[]): ListEntry[] {
  const groups = new Map<string, Array<{ decision: StoredDecision; item: number | null }>>()
  for (const decision of decisions) {
    const source = cardSource(decision)
    if (source.kind !== 'batch') continue
    const members = groups.get(source.group) ?? []
    members.push({ decision, item: source.item })
    groups.set(source.group, members)
  }
  const entries: ListEntry[] = []
  const placed = new Set<string>()
  for (const decision of decisions) {
    const source = cardSource(decision)
    const members = source.kind === 'batch' ? groups.get(source.group) : undefined
    if (source.kind !== 'batch' || members === undefined || members.length < 2) {
      entries.push({ kind: 'single', decision })
      continue
    }
    if (placed.has(source.group)) continue
    placed.add(source.group)
    const ordered = [...members]
      .sort((a, b) => (a.item ?? 0) - (b.item ?? 0))
      .map((member) => member.decision)
    entries.push({ kind: 'batch', group: source.group, decisions: ordered })
  }
  return entries
}

/** A stable digest of the listed IDs: a card whose items change is a new card for the page script. */
function digest(ids: readonly string[]): string {
  let hash = 2166136261
  for (const char of ids.join('\n')) hash = Math.imul(hash ^ (char.codePointAt(0) ?? 0), 16777619) >>> 0
  return hash.toString(16)
}

/**
 * The grouped card. `renderItem` draws one item (question, input, own controls).
 *
 * @example
 * renderBatchCard(entry, csrf, (decision) => renderDecisionCard(decision, { csrf, index: 0 }))
 */
export function renderBatchCard(
  entry: Extract<ListEntry, { kind: 'batch' }>,
  csrf: string,
  renderItem: (decision: StoredDecision) => SafeHtml,
): SafeHtml {
  const ids = entry.decisions.map((decision) => decision.decisionId)
  const count = ids.length
  const headingId = `batch-${digest([entry.group])}`
  const tools = new Set(entry.decisions.map((decision) => decision.toolName ?? ''))
  const tool = tools.size === 1 ? [...tools][0] : ''
  const allConfirm = entry.decisions.every((decision) => decision.type === 'confirm')
  const bulk = allConfirm
    ? html`<form method="post" action="${BATCH_ANSWER_PATH}" data-answer class="bulk">
<input type="hidden" name="csrf" value="${csrf}">
<input type="hidden" name="group" value="${entry.group}">
${ids.map((id) => html`<input type="hidden" name="decisionId" value="${id}">`)}
<p class="muted">Your answer applies to the ${count} items listed above, each recorded on its own.</p>
<div class="buttons">
<button type="submit" name="answer" value="yes" class="approve">Approve all ${count}</button>
<button type="submit" name="answer" value="no" class="deny">Deny all ${count}</button>
</div>
</form>`
    : html`<p class="muted">These items ask for different kinds of answers; answer each one above.</p>`
  return html`<article class="decision batch" data-decision-id="batch:${entry.group}:${digest(ids)}" aria-labelledby="${headingId}">
<p class="meta"><span class="agent">Batch</span>${tool ? html`<span>${tool}</span>` : ''}</p>
<h2 id="${headingId}">Batch of ${count} items</h2>
<p class="muted">One workflow run asks you about ${count} items. Read them, then answer each one or all at once.</p>
<ol class="batch-items">${entry.decisions.map((decision) => html`<li>${renderItem(decision)}</li>`)}</ol>
${bulk}
</article>`
}
