/**
 * The board's pages, server-rendered. Pure functions of their inputs: the
 * routes decide who may see what. Every stored string goes through the
 * escaping template and `visibleText` (a character drawn as nothing, stored
 * before the displayed-text rule refused it, is shown as `⟦U+XXXX⟧`).
 */
import { REVIEW_STATES } from '../machines/review-lifecycle.js'
import { visibleText } from '../pushary/display-text.js'
import { html, type SafeHtml, unsafeRaw } from '../server/reviewer/html.js'
import type { PusharyReview, ReviewAction, ReviewTransition } from '../store/review-schema.js'
import type { PusharyReviewStats } from '../store/review-stats-shape.js'
import type { ReviewRecoveryOutcome } from '../store/review-store.js'
import { ageText, type BoardFilters, type BoardSection } from './board-query.js'
import { BOARD_CSS } from './board-style.js'
import { renderLifecycleDiagram } from './lifecycle-diagram.js'

/** What every page needs: the board's base path, the CSP nonce, and the form token once logged in. */
export interface PageContext {
  readonly base: string
  readonly nonce: string
  readonly csrf: string | null
}

/** The three endings an operator can confirm, in words. */
export const OUTCOME_TEXT: Readonly<Record<ReviewRecoveryOutcome, string>> = {
  completed: 'completed: the action ran',
  stale: 'stale: the action did not run and never will',
  pending: 'pending (reopen): nothing ran and the run still waits for the answer',
}

function shell(page: PageContext, title: string, body: SafeHtml): SafeHtml {
  const logout =
    page.csrf === null
      ? ''
      : html`<form method="post" action="${page.base}/logout"><input type="hidden" name="csrf" value="${page.csrf}"><button class="secondary" type="submit">Sign out</button></form>`
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="color-scheme" content="light dark">
<title>${title}</title>
<style nonce="${page.nonce}">${unsafeRaw(BOARD_CSS)}</style>
</head>
<body>
<header><h1><a href="${page.base}">Pushary review board</a></h1>${logout}</header>
<main>
${body}
</main>
</body>
</html>`
}

/**
 * The login form: the operator key, posted once.
 *
 * @example
 * renderLoginPage({ base: '/board', nonce, csrf: null }, 'Wrong key.')
 */
export function renderLoginPage(page: PageContext, error: string | null = null): SafeHtml {
  return shell(
    page,
    'Sign in: Pushary review board',
    html`<div class="card"><h2>Sign in</h2>
${error === null ? '' : html`<p class="notice refused" role="alert">${error}</p>`}
<p class="muted">The board shows every review in the store and can change them: it needs the operator key.</p>
<form method="post" action="${page.base}/login"><label><span>Operator key</span><input type="password" name="key" autocomplete="current-password" required size="40"></label>
<div class="actions"><button type="submit">Sign in</button></div></form></div>`,
  )
}

/**
 * A message page (an error, a refusal, a result) with a way back.
 *
 * @example
 * renderMessagePage(page, { title: 'Not found', text: 'No such review.', back: '/board' })
 */
export function renderMessagePage(
  page: PageContext,
  message: { title: string; text: string; back: string; refused?: boolean },
): SafeHtml {
  return shell(
    page,
    `${message.title}: Pushary review board`,
    html`<h2>${message.title}</h2><p class="notice${message.refused ? ' refused' : ''}" role="${message.refused ? 'alert' : 'status'}">${visibleText(message.text)}</p><p><a href="${message.back}">Back</a></p>`,
  )
}

/** Where the review's target lives, in one line (as `reviews list` prints it). */
export function whereText(review: PusharyReview): string {
  switch (review.target) {
    case 'workflow-step':
      return `${review.workflowId}/${review.runId} step ${review.stepId}${review.forEachIndex === null ? '' : ` [${review.forEachIndex}]`}`
    case 'batch-parent':
      return `${review.workflowId}/${review.runId} batch ${review.stepId} (${review.count} items)`
    case 'agent':
      return `agent ${review.agentId} tool ${review.toolName} call ${review.toolCallId}`
    default: {
      const unreachable: never = review
      return unreachable
    }
  }
}

function questionOf(review: PusharyReview): string | null {
  return review.target === 'batch-parent' ? null : review.question.question
}

function filterForm(page: PageContext, filters: BoardFilters): SafeHtml {
  const all = filters.states.length === REVIEW_STATES.length
  const stateBoxes = REVIEW_STATES.map(
    (state) =>
      html`<label><input type="checkbox" name="state" value="${state}"${!all && filters.states.includes(state) ? html` checked` : ''}> ${state}</label>`,
  )
  const kind = (value: string, text: string) =>
    html`<option value="${value}"${(filters.kind ?? '') === value ? html` selected` : ''}>${text}</option>`
  return html`<form class="filters" method="get" action="${page.base}" aria-label="Filters">
<fieldset><legend>State (none checked: all)</legend>${stateBoxes}</fieldset>
<label><span>Kind</span><select name="kind">${kind('', 'any')}${kind('workflow', 'workflow')}${kind('agent', 'agent')}</select></label>
<label><span>Customer</span><input type="text" name="customer" value="${filters.customer ?? ''}" placeholder="exact customer ID"></label>
<label><span>Asked at least (minutes ago)</span><input type="number" name="minAge" min="0" value="${filters.minAgeMinutes ?? ''}"></label>
<button type="submit">Filter</button> <a href="${page.base}">Clear</a></form>`
}

function sectionTable(page: PageContext, section: BoardSection, nowMs: number): SafeHtml {
  if (section.rows.length === 0) return html`<p class="empty">No ${section.state} reviews match.</p>`
  const rows = section.rows.map(({ review, kind, customer, askedAt, last }) => {
    const question = questionOf(review)
    return html`<tr data-decision="${review.decisionId}"><td><a href="${page.base}/reviews/${encodeURIComponent(review.decisionId)}"><code>${visibleText(review.decisionId)}</code></a></td>
<td>${kind}</td><td>${customer === null ? html`<span class="muted">—</span>` : visibleText(customer)}</td>
<td>${question === null ? html`<span class="muted">batch parent</span>` : visibleText(question)}<div class="muted">${visibleText(whereText(review))}</div></td>
<td title="${askedAt ?? ''}">${askedAt === null ? '—' : ageText(nowMs - Date.parse(askedAt))}</td>
<td title="${last?.at ?? ''}">${last === undefined ? '—' : ageText(nowMs - Date.parse(last.at))}${last?.reason ? html`<div class="muted">${visibleText(last.reason)}</div>` : ''}</td></tr>`
  })
  return html`<table><thead><tr><th scope="col">Decision</th><th scope="col">Kind</th><th scope="col">Customer</th><th scope="col">Question / target</th><th scope="col">Asked</th><th scope="col">In state</th></tr></thead><tbody>${rows}</tbody></table>`
}

/**
 * The list: filters, a count per state, then one table per state.
 *
 * @example
 * renderListPage(page, { filters, sections, nowMs: Date.now() })
 */
export function renderListPage(
  page: PageContext,
  view: {
    filters: BoardFilters
    sections: readonly BoardSection[]
    nowMs: number
    stats?: PusharyReviewStats | null
  },
): SafeHtml {
  const counts = view.sections.map(
    (section) =>
      html`<li data-count="${section.state}"><span class="badge ${section.state}">${section.state}</span> ${section.matched}${section.truncated ? '+' : ''}</li>`,
  )
  const sections = view.sections.map(
    (
      section,
    ) => html`<section class="state" data-state="${section.state}" aria-labelledby="h-${section.state}">
<h2 id="h-${section.state}"><span class="badge ${section.state}">${section.state}</span> ${section.matched}${section.truncated ? '+' : ''} review${section.matched === 1 ? '' : 's'}</h2>
${sectionTable(page, section, view.nowMs)}
${section.matched > section.rows.length ? html`<p class="muted">${section.matched - section.rows.length} more match; narrow the filters to see them.</p>` : ''}
${section.truncated ? html`<p class="muted">Only the reviews longest in this state were read; narrow the filters or use <code>pushary-mastra reviews list</code>.</p>` : ''}</section>`,
  )
  return shell(
    page,
    'Reviews: Pushary review board',
    html`${view.stats ? numbers(view.stats) : ''}${filterForm(page, view.filters)}<ul class="counts" aria-label="Matching reviews per state">${counts}</ul>${sections}`,
  )
}

function numbers(stats: PusharyReviewStats): SafeHtml {
  const age = (ms: number | null) =>
    ms === null ? '' : html` <span class="muted">oldest ${ageText(ms)}</span>`
  const p95 = stats.answeredToResumed.p95Ms
  return html`<dl class="numbers" aria-label="Review numbers (whole store)">
<div><dt>Pending</dt><dd data-number="pending">${stats.pending.count}${age(stats.pending.oldestAgeMs)}</dd></div>
<div><dt>Answered, not resumed</dt><dd data-number="answered">${stats.pending.answered}${age(stats.pending.oldestAnsweredAgeMs)}</dd></div>
<div><dt>Uncertain</dt><dd data-number="uncertain">${stats.uncertain}</dd></div>
<div><dt>Misconfigured</dt><dd data-number="misconfigured">${stats.misconfigured.count}</dd></div>
<div><dt>Answered → resumed, p95 (24 h)</dt><dd data-number="p95">${p95 === null ? '—' : ageText(p95)}</dd></div>
</dl>`
}

/** Everything the review page shows about one review. */
export interface ReviewView {
  readonly review: PusharyReview
  readonly history: readonly ReviewTransition[]
  readonly since: string | null
  readonly action: ReviewAction | null
  readonly receipts: readonly { receivedAt: string }[]
  readonly nowMs: number
  readonly notice?: { text: string; refused: boolean } | undefined
}

function timeline(history: readonly ReviewTransition[]): SafeHtml {
  const items = history.map(
    (entry) =>
      html`<li><time datetime="${entry.at}">${entry.at}</time><strong>${entry.from ?? 'saved'} → ${entry.to}</strong>${entry.event ? html` <code>${entry.event}</code>` : ''}${entry.reason ? html`<div>${visibleText(entry.reason)}</div>` : ''}</li>`,
  )
  return html`<ol class="timeline" aria-label="History">${items}</ol>`
}

function recoverForm(page: PageContext, review: PusharyReview): SafeHtml {
  const choices = (Object.keys(OUTCOME_TEXT) as ReviewRecoveryOutcome[]).map(
    (outcome) =>
      html`<label><input type="radio" name="outcome" value="${outcome}" required> ${OUTCOME_TEXT[outcome]}</label>`,
  )
  return html`<div class="card"><h2>Recover</h2>
<p class="muted">The same rules as <code>pushary-mastra reviews recover</code>: what the lifecycle forbids, or a claim whose holder still keeps it alive, is refused. You confirm on the next page.</p>
<form method="post" action="${page.base}/reviews/${encodeURIComponent(review.decisionId)}/recover"><input type="hidden" name="csrf" value="${page.csrf ?? ''}">
<fieldset class="outcomes"><legend>What happened to the action?</legend>${choices}</fieldset>
<label><span>Reason (kept in the history)</span><textarea name="reason" required maxlength="2000"></textarea></label>
<div class="actions"><button type="submit">Review this recovery</button></div></form></div>`
}

/**
 * One review: its facts, its history as a timeline, the lifecycle with its
 * state highlighted, and the recover form.
 *
 * @example
 * renderReviewPage(page, { review, history, since, action, receipts, nowMs: Date.now() })
 */
export function renderReviewPage(page: PageContext, view: ReviewView): SafeHtml {
  const { review } = view
  const question = questionOf(review)
  const customer = review.target === 'batch-parent' ? null : review.externalId
  const facts = html`<dl class="facts">
<dt>State</dt><dd><span class="badge ${review.state}" data-current-state="${review.state}">${review.state}</span>${view.since ? html` since <time datetime="${view.since}">${view.since}</time> (${ageText(view.nowMs - Date.parse(view.since))})` : ''}</dd>
<dt>Kind</dt><dd>${review.target}</dd>
<dt>Target</dt><dd><code>${visibleText(whereText(review))}</code></dd>
<dt>Customer</dt><dd>${customer === null ? '—' : visibleText(customer)}</dd>
<dt>Question</dt><dd>${question === null ? '—' : visibleText(question)}</dd>
<dt>Action</dt><dd>${view.action ? html`<strong>${view.action.outcome}</strong> (${view.action.at}): ${visibleText(view.action.reason)}` : 'not recorded'}</dd>
<dt>Callbacks</dt><dd>${view.receipts.length} received${view.receipts.length > 0 ? html`, last at ${view.receipts.at(-1)?.receivedAt}` : ''}</dd>
</dl>`
  return shell(
    page,
    `${review.decisionId}: Pushary review board`,
    html`<p><a href="${page.base}">← All reviews</a></p>
${view.notice ? html`<p class="notice${view.notice.refused ? ' refused' : ''}" role="${view.notice.refused ? 'alert' : 'status'}">${visibleText(view.notice.text)}</p>` : ''}
<h2>Review <code>${visibleText(review.decisionId)}</code></h2>
<div class="grid"><div class="card"><h2>Binding</h2>${facts}</div><div class="card"><h2>History</h2>${timeline(view.history)}</div></div>
<div class="card"><h2>Lifecycle</h2>${renderLifecycleDiagram({ current: review.state, history: view.history })}</div>
${recoverForm(page, review)}`,
  )
}

/**
 * The confirm step: what will be written, and the button that writes it.
 *
 * @example
 * renderConfirmPage(page, review, 'stale', 'ledger shows no refund')
 */
export function renderConfirmPage(
  page: PageContext,
  review: PusharyReview,
  outcome: ReviewRecoveryOutcome,
  reason: string,
): SafeHtml {
  const path = `${page.base}/reviews/${encodeURIComponent(review.decisionId)}`
  return shell(
    page,
    `Confirm recovery of ${review.decisionId}`,
    html`<div class="card"><h2>Confirm recovery</h2>
<dl class="facts"><dt>Review</dt><dd><code>${visibleText(review.decisionId)}</code> (${visibleText(whereText(review))})</dd>
<dt>Change</dt><dd><span class="badge ${review.state}">${review.state}</span> → <strong>${OUTCOME_TEXT[outcome]}</strong></dd>
<dt>Reason</dt><dd>${visibleText(reason)}</dd></dl>
<form method="post" action="${path}/recover/confirm"><input type="hidden" name="csrf" value="${page.csrf ?? ''}">
<input type="hidden" name="outcome" value="${outcome}"><input type="hidden" name="reason" value="${reason}"><input type="hidden" name="expectedState" value="${review.state}">
<div class="actions"><button type="submit">Confirm: mark ${outcome}</button> <a href="${path}">Cancel</a></div></form></div>`,
  )
}
