/**
 * The action's input as a labelled list: every parameter the presentation
 * does not already show, under its key in words. Long values are folded
 * behind a disclosure whose body holds the whole value: nothing is cut, what
 * the reviewer can open is exactly what was sent.
 */
import { graphemePrefix, visibleText } from '../../pushary/display-text.js'
import { parameterLabel } from '../../pushary/readable-input.js'
import type { StoredDecision } from '../service-types.js'
import { html, type SafeHtml } from './html.js'

/** Values longer than this (in user-perceived characters) are folded; the summary shows their start. */
const FOLD_AFTER = 80
const SUMMARY_CHARS = 48

// The summary is cut on grapheme boundaries: a cut by UTF-16 unit could
// leave half a surrogate pair, which the page's UTF-8 encoding turns into
// U+FFFD, and a cut by code point could split a flag or an accent.
/**
 * One parameter value as the card shows it: visible text, folded when long.
 *
 * @example
 * renderValue('bob, carol') // 'bob, carol'
 */
export function renderValue(value: string | number | boolean): SafeHtml | string {
  const text = visibleText(typeof value === 'string' ? value : String(value))
  const summary = graphemePrefix(text, SUMMARY_CHARS)
  if (summary.total <= FOLD_AFTER) return text
  return html`<details class="fold"><summary>${summary.text}… <span class="muted">(${summary.total} characters, tap to read all)</span></summary><p class="full">${text}</p></details>`
}

/**
 * The input list of one decision, or nothing when it has no other parameters.
 * `shownElsewhere` names parameters another section of the card draws.
 *
 * @example
 * renderInputList(decision) // <dl class="input">…</dl>
 */
export function renderInputList(
  decision: StoredDecision,
  shownElsewhere: readonly string[] = [],
): SafeHtml | '' {
  const parameters = decision.parameters
  if (parameters === null) return ''
  const shown = new Set([
    ...(decision.presentation?.changes ?? []).map((change) => change.parameter),
    ...shownElsewhere,
  ])
  const rows = Object.entries(parameters).filter(([key]) => !shown.has(key))
  if (rows.length === 0) return ''
  const heading = decision.toolName ? `Input of ${decision.toolName}` : 'Input'
  return html`<section class="input" aria-label="${heading}"><p class="input-title">${heading}</p><dl>${rows.map(
    ([key, value]) =>
      html`<div class="row"><dt>${visibleText(parameterLabel(key))}</dt><dd>${renderValue(value)}</dd></div>`,
  )}</dl></section>`
}
