/**
 * Server-rendered pages and fragments of the reviewer page. Pure functions of
 * their inputs: routes decide who may see what, this module only draws it.
 */
import { visibleText } from '../../pushary/display-text.js'
import { isApproved } from '../../pushary/question.js'
import type { StoredDecision } from '../service-types.js'
import {
  APPROVER_CARD_PARAMETERS,
  type ApproverSetProgress,
  renderApproverSection,
  withdrawnBecause,
} from './approver-set-card.js'
import { REVIEWER_CSS, REVIEWER_SCRIPT } from './assets.js'
import { groupDecisions, renderBatchCard } from './batch-card.js'
import { renderBinding } from './card-binding.js'
import { renderInputList } from './card-input.js'
import { cardSource, sourceLabel } from './card-source.js'
import { formatDateTime, formatParameter } from './format.js'
import { html, type SafeHtml, unsafeRaw } from './html.js'

type Presentation = NonNullable<StoredDecision['presentation']>

/** Options for a full page. `nonce` must match the response's CSP header. */
export interface PageOptions {
  readonly title: string
  readonly nonce: string
  readonly script?: boolean
}

/**
 * Wraps a body in the document shell (viewport meta, inline CSS, optional script).
 *
 * @example
 * renderPage(html`<p>Hello</p>`, { title: 'Approvals', nonce: 'abc' }).value
 */
export function renderPage(body: SafeHtml, options: PageOptions): SafeHtml {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="color-scheme" content="light dark">
<title>${options.title}</title>
<style nonce="${options.nonce}">${unsafeRaw(REVIEWER_CSS)}</style>
</head>
<body>
${body}
${options.script ? html`<script nonce="${options.nonce}">${unsafeRaw(REVIEWER_SCRIPT)}</script>` : ''}
</body>
</html>`
}

function header(right: SafeHtml | string = ''): SafeHtml {
  return html`<header><h1>Pushary approvals</h1>${right}</header>`
}

const RISK_LEVELS: Readonly<Record<string, string>> = {
  low: 'Low risk',
  medium: 'Medium risk',
  high: 'High risk',
}

// `risk` is free text (why the action is worth stopping for); the three
// common levels get their colour, anything else is shown as written.
function renderRisk(risk: Presentation['risk']): SafeHtml | '' {
  if (risk === undefined || risk === null) return ''
  const level = Object.hasOwn(RISK_LEVELS, risk) ? risk : null
  // Text stored before the service refused invisible characters here is drawn visibly.
  if (level === null) return html`<span class="risk">${visibleText(risk)}</span>`
  return html`<span class="risk risk-${level}">${RISK_LEVELS[level] ?? risk}</span>`
}

function renderChanges(presentation: Presentation, decision: StoredDecision): SafeHtml | '' {
  const changes = presentation.changes ?? []
  if (changes.length === 0) return ''
  const rows = changes.map((change) => {
    const value = decision.parameters?.[change.parameter]
    const shown = value === undefined ? '—' : visibleText(formatParameter(value, change.format))
    return html`<tr><th scope="row">${change.label}</th><td>${shown}</td></tr>`
  })
  return html`<table><caption class="visually-hidden">Changes</caption><tbody>${rows}</tbody></table>`
}

function renderPresentation(decision: StoredDecision): SafeHtml | '' {
  const presentation = decision.presentation
  if (presentation === null) return ''
  return html`<section class="action" aria-label="Action">
<p class="label">${presentation.label}</p>
<p class="effect">${presentation.effect}</p>
${renderChanges(presentation, decision)}
</section>`
}

/**
 * Human text for a decision's outcome, e.g. after the reviewer tapped Deny.
 * A member of an approvers' set withdrawn because the set settled says so
 * (`set`: how the set stands).
 *
 * @example
 * describeOutcome({ ...decision, status: 'answered', type: 'confirm', value: 'no' }) // 'Denied.'
 */
export function describeOutcome(decision: StoredDecision, set?: ApproverSetProgress): string {
  switch (decision.status) {
    case 'pending':
      return 'Waiting for an answer.'
    case 'expired':
      return 'Expired without an answer.'
    case 'cancelled': {
      const withdrawn = set === undefined ? null : withdrawnBecause(set)
      return withdrawn === null ? 'Cancelled by the application.' : `${withdrawn}.`
    }
    case 'answered':
      // The package's rule, so an answer relayed as "approve" or "OK" reads as it counts.
      if (decision.type === 'confirm') return isApproved(decision) ? 'Approved.' : 'Denied.'
      if (decision.type === 'select') return `Chose “${decision.value ?? ''}”.`
      return `Answered: “${decision.value ?? ''}”.`
    default: {
      const unknown: never = decision.status
      return String(unknown)
    }
  }
}

function answerAction(decision: StoredDecision): string {
  return `/review/${encodeURIComponent(decision.decisionId)}/answer`
}

function renderControls(decision: StoredDecision, inputId: string): SafeHtml {
  switch (decision.type) {
    case 'confirm':
      return html`<div class="buttons">
<button type="submit" name="answer" value="yes" class="approve">Approve</button>
<button type="submit" name="answer" value="no" class="deny">Deny</button>
</div>`
    case 'select': {
      const options = decision.options ?? []
      return html`<div class="buttons options">${options.map(
        (option) => html`<button type="submit" name="answer" value="${option}">${option}</button>`,
      )}</div>`
    }
    case 'input':
      return html`<label class="visually-hidden" for="${inputId}">Your answer</label>
<div class="input-row">
<input id="${inputId}" type="text" name="answer" required autocomplete="off" placeholder="${decision.placeholder ?? ''}">
<button type="submit">Send</button>
</div>`
    default: {
      const unknown: never = decision.type
      return html`<p class="muted">Unsupported decision type ${String(unknown)}.</p>`
    }
  }
}

/** How one card is drawn: its form token, element-id seed, form action and approvers' set, if any. */
export interface CardOptions {
  readonly csrf: string
  readonly index: number
  readonly action?: string
  /** How the set stands when the decision is one member of an approvers' set. */
  readonly set?: ApproverSetProgress | undefined
}

/**
 * One decision as a card: agent, risk, question, presentation, then the
 * answer controls while it is pending or the outcome once it is not.
 *
 * @example
 * renderDecisionCard(decision, { csrf: token, index: 0 })
 */
export function renderDecisionCard(decision: StoredDecision, options: CardOptions): SafeHtml {
  const headingId = `q-${options.index}`
  const expiresAt = decision.expiresAt === null ? null : new Date(decision.expiresAt)
  const expires =
    decision.status === 'pending' && expiresAt !== null && !Number.isNaN(expiresAt.getTime())
      ? html`<p class="muted">Expires <time datetime="${expiresAt.toISOString()}">${formatDateTime(expiresAt)}</time></p>`
      : ''
  const body =
    decision.status === 'pending'
      ? html`<form method="post" action="${options.action ?? answerAction(decision)}" data-answer>
<input type="hidden" name="csrf" value="${options.csrf}">
${renderControls(decision, `a-${options.index}`)}
</form>`
      : html`<p class="outcome" role="status">${describeOutcome(decision, options.set)}</p>`
  return html`<article class="decision" data-decision-id="${decision.decisionId}" data-status="${decision.status}" aria-labelledby="${headingId}">
<p class="meta"><span class="agent">${sourceLabel(cardSource(decision))}</span>${decision.agentName ? html`<span class="agent">${decision.agentName}</span>` : ''}${renderRisk(decision.presentation?.risk)}${decision.toolName ? html`<span>${decision.toolName}</span>` : ''}</p>
<h2 id="${headingId}">${decision.question}</h2>
${renderPresentation(decision)}
${renderBinding(decision)}
${options.set === undefined ? renderInputList(decision) : renderInputList(decision, APPROVER_CARD_PARAMETERS)}
${options.set === undefined ? '' : renderApproverSection(decision, options.set)}
${expires}
${body}
</article>`
}

/**
 * The list fragment `/review/list` returns and the page script reconciles.
 * `sets` holds how each approvers' set stands, by member decision ID.
 *
 * @example
 * renderDecisionList(decisions, csrf, await loadApproverSets(deps, decisions)).value
 */
export function renderDecisionList(
  decisions: readonly StoredDecision[],
  csrf: string,
  sets: ReadonlyMap<string, ApproverSetProgress> = new Map(),
): SafeHtml {
  const card = (decision: StoredDecision) =>
    renderDecisionCard(decision, {
      csrf,
      index: indexFor(decision.decisionId),
      set: sets.get(decision.decisionId),
    })
  return html`${groupDecisions(decisions).map((entry) =>
    entry.kind === 'single' ? card(entry.decision) : renderBatchCard(entry, csrf, card),
  )}`
}

/**
 * Cards are reconciled by decision id across refreshes, so element ids
 * derived from a list position would collide; a stable numeric digest of the
 * decision id does not, and stays a valid HTML id whatever the id contains.
 */
function indexFor(decisionId: string): number {
  let hash = 2166136261
  for (let index = 0; index < decisionId.length; index += 1) {
    hash = Math.imul(hash ^ decisionId.charCodeAt(index), 16777619) >>> 0
  }
  return hash
}

/**
 * The whole list page for one enrolled device.
 *
 * @example
 * renderReviewPage({ externalId: 'cust_1', decisions, csrf, nonce }).value
 */
export function renderReviewPage(input: {
  readonly externalId: string
  readonly decisions: readonly StoredDecision[]
  readonly csrf: string
  readonly nonce: string
  readonly sets?: ReadonlyMap<string, ApproverSetProgress>
}): SafeHtml {
  const body = html`${header(html`<span class="live" id="live" aria-live="polite">Connecting…</span>`)}
<main>
<p class="muted">You answer here as <strong>${input.externalId}</strong>. Each card says what will happen if you approve.</p>
<p id="flash" role="status" aria-live="polite"></p>
<div id="decisions" aria-label="Pending decisions">${renderDecisionList(input.decisions, input.csrf, input.sets)}</div>
<p id="empty" class="notice"${input.decisions.length > 0 ? unsafeRaw(' hidden') : ''}>No pending decisions. New ones appear here automatically.</p>
</main>`
  return renderPage(body, { title: 'Pending approvals', nonce: input.nonce, script: true })
}

/**
 * One decision on its own page (the link a notification would open). A
 * member of an approvers' set stays current while open: the page script
 * re-reads this card (`/review/:id/card`) when the set changes.
 *
 * @example
 * renderDecisionPage({ decision, csrf, nonce }).value
 */
export function renderDecisionPage(input: {
  readonly decision: StoredDecision
  readonly csrf: string
  readonly nonce: string
  readonly set?: ApproverSetProgress | undefined
}): SafeHtml {
  const card = renderDecisionCardFragment(input)
  const back = html`<a href="/review">All pending</a>`
  if (input.set === undefined) {
    const body = html`${header(back)}
<main>${card}</main>`
    return renderPage(body, { title: input.decision.question, nonce: input.nonce })
  }
  const cardUrl = `/review/${encodeURIComponent(input.decision.decisionId)}/card`
  const body = html`${header(html`<span class="nav"><span class="live" id="live" aria-live="polite">Connecting…</span>${back}</span>`)}
<main data-card-url="${cardUrl}">${card}</main>`
  return renderPage(body, { title: input.decision.question, nonce: input.nonce, script: true })
}

/**
 * The card of the decision page alone, as `/review/:id/card` returns it.
 *
 * @example
 * renderDecisionCardFragment({ decision, csrf, set }).value
 */
export function renderDecisionCardFragment(input: {
  readonly decision: StoredDecision
  readonly csrf: string
  readonly set?: ApproverSetProgress | undefined
}): SafeHtml {
  return renderDecisionCard(input.decision, {
    csrf: input.csrf,
    index: indexFor(input.decision.decisionId),
    set: input.set,
  })
}

/**
 * A short explanatory page for errors (401 not enrolled, 403, 404, 409, 410).
 *
 * @example
 * renderMessagePage({ title: 'Link expired', message: 'Ask for a new link.', nonce }).value
 */
export function renderMessagePage(input: {
  readonly title: string
  readonly message: string
  readonly nonce: string
  readonly backLink?: boolean
}): SafeHtml {
  const body = html`${header()}
<main><section class="notice" aria-labelledby="message-title">
<h2 id="message-title">${input.title}</h2>
<p>${input.message}</p>
${input.backLink ? html`<p><a href="/review">Back to pending decisions</a></p>` : ''}
</section></main>`
  return renderPage(body, { title: input.title, nonce: input.nonce })
}

/**
 * The confirmation page an enrolment link opens. Binding happens only when
 * the person taps the button (a POST), so a link preview that fetches the URL
 * first sees this page and leaves the single-use token alone.
 *
 * @example
 * renderEnrollPage({ externalId: 'cust_1', token, nonce }).value
 */
export function renderEnrollPage(input: {
  readonly externalId: string
  readonly token: string
  readonly nonce: string
}): SafeHtml {
  const body = html`${header()}
<main><section class="notice" aria-labelledby="enroll-title">
<h2 id="enroll-title">Link this phone to ${input.externalId}</h2>
<p>You will then receive and answer approval requests for <strong>${input.externalId}</strong> on this phone. The link works once.</p>
<form method="post" action="/e/${encodeURIComponent(input.token)}">
<div class="buttons options"><button type="submit" class="approve">Link this phone</button></div>
</form>
</section></main>`
  return renderPage(body, { title: 'Link this phone', nonce: input.nonce })
}
