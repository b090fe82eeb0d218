/**
 * What a permit spent from this answer will cover, on the card: the action
 * name, target, actor and environment, each under its label and exactly as
 * sent (the parameters follow in the input list and the presentation). The
 * list, the batch items, the decision page and the approval-link page all
 * draw a decision through `renderDecisionCard`, so each shows this section.
 */
import { visibleText } from '../../pushary/display-text.js'
import { BOUND_TEXT_FIELDS } from '../bound-fields.js'
import type { StoredDecision } from '../service-types.js'
import { html, type SafeHtml } from './html.js'

/**
 * The bound fields of one decision as a labelled list, or nothing when the
 * decision names no action.
 *
 * @example
 * renderBinding(decision) // <section class="binding">…<dt>Target</dt><dd>order o-1</dd>…</section>
 */
export function renderBinding(decision: StoredDecision): SafeHtml | '' {
  const rows = BOUND_TEXT_FIELDS.flatMap(([field, label]) => {
    const value = decision[field]
    return value === null ? [] : [{ field, label, value }]
  })
  if (rows.length === 0) return ''
  return html`<section class="input binding" aria-label="What you authorize"><p class="input-title">What you authorize</p><dl>${rows.map(
    (row) =>
      html`<div class="row" data-bound="${row.field}"><dt>${row.label}</dt><dd>${visibleText(row.value)}</dd></div>`,
  )}</dl></section>`
}
