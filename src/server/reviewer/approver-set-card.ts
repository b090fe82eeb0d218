/**
 * What a member of an approvers' set sees beyond its own question: how the
 * set stands ("1 of 2 approvals so far · 3 asked · 1 answered"), counted by
 * the service from every decision sharing the member's set key, and, once
 * the member's own question was withdrawn because the set settled, why.
 * An approval is the package's one rule (`isApproved`: an answered confirm
 * with an affirmative value), so the count agrees with how the set settles.
 */
import { isApproved } from '../../pushary/question.js'
import { approverSetOf } from '../approver-sets.js'
import type { ApproverSetMember, ReviewerDeps, StoredDecision } from '../service-types.js'
import { renderValue } from './card-input.js'
import { html, type SafeHtml } from './html.js'

/**
 * The card parameters the package adds to every member's decision (its
 * steps room, which the service does not import, names them the same). The
 * card draws them in the approvers' section instead of the action's input:
 * they describe the set, not the action.
 */
export const APPROVER_CARD_PARAMETERS: readonly string[] = ['Approvals needed', 'Also asked']

/** How one set stands, from its members' decisions. */
export interface ApproverSetProgress {
  /** Approvals the set needs. */
  readonly required: number
  /** Decisions in the set (escalated ones included). */
  readonly asked: number
  /** Members who answered, either way. */
  readonly answered: number
  readonly approved: number
  /** Answered, but not an approval. */
  readonly denied: number
  readonly pending: number
  readonly expired: number
  /** Whether one denial declines the set; undefined when its members' contexts do not say. */
  readonly veto?: boolean | undefined
}

/**
 * Counts a set's members.
 *
 * @example
 * approverSetProgress(2, members) // { required: 2, asked: 3, answered: 1, approved: 1, … }
 */
export function approverSetProgress(
  required: number,
  members: readonly ApproverSetMember[],
  veto?: boolean,
): ApproverSetProgress {
  const count = (status: ApproverSetMember['status']) =>
    members.filter((member) => member.status === status).length
  const approved = members.filter(isApproved).length
  const answered = count('answered')
  return {
    required,
    asked: members.length,
    answered,
    approved,
    denied: answered - approved,
    pending: count('pending'),
    expired: count('expired'),
    ...(veto === undefined ? {} : { veto }),
  }
}

/**
 * The set of each decision that is a member of one, by decision ID. A member
 * whose set cannot be read is drawn without the line rather than not at all.
 *
 * @example
 * const sets = await loadApproverSets(deps, decisions)
 */
export async function loadApproverSets(
  deps: Pick<ReviewerDeps, 'listApproverSet'>,
  decisions: readonly StoredDecision[],
): Promise<ReadonlyMap<string, ApproverSetProgress>> {
  const sets = new Map<string, ApproverSetProgress>()
  await Promise.all(
    decisions.map(async (decision) => {
      const ref = approverSetOf(decision.context)
      if (ref === null) return
      const members = await deps.listApproverSet(ref.key, decision.decisionId).catch(() => null)
      // Never a count that leaves out the member it is drawn on.
      if (members === null || !members.some((member) => member.decisionId === decision.decisionId)) return
      sets.set(decision.decisionId, approverSetProgress(ref.required, members, ref.veto))
    }),
  )
  return sets
}

function plural(count: number, one: string, many: string): string {
  return count === 1 ? one : many
}

/**
 * The set's standing in one line, e.g. `1 of 2 approvals so far · 3 asked · 1 answered`.
 *
 * @example
 * approverSetSummary(progress) // '2 of 2 approvals · 3 asked · 2 answered'
 */
export function approverSetSummary(progress: ApproverSetProgress): string {
  const parts = [
    `${progress.approved} of ${progress.required} ${plural(progress.required, 'approval', 'approvals')}${progress.pending > 0 ? ' so far' : ''}`,
    `${progress.asked} asked`,
    `${progress.answered} answered`,
  ]
  if (progress.denied > 0) parts.push(`${progress.denied} denied`)
  return parts.join(' · ')
}

/**
 * The approvers' section of a member's card: the set's card parameters
 * (how many are needed, who else is asked) and the line saying how the set
 * stands. `data-live` (unique per card, so a batch card holding several
 * members keeps each line apart) lets the page script replace the line's
 * content when another member answers, without touching the rest of the card.
 *
 * @example
 * renderApproverSection(decision, progress) // <section class="input approver-set" …>…</section>
 */
export function renderApproverSection(decision: StoredDecision, progress: ApproverSetProgress): SafeHtml {
  const rows = APPROVER_CARD_PARAMETERS.flatMap((key) => {
    const value = decision.parameters?.[key]
    return value === undefined
      ? []
      : [html`<div class="row"><dt>${key}</dt><dd>${renderValue(value)}</dd></div>`]
  })
  // Each part is kept whole on a narrow screen; the line breaks between parts only.
  const parts = approverSetSummary(progress)
    .split(' · ')
    .map((part, index) => html`${index > 0 ? ' · ' : ''}<span>${part}</span>`)
  return html`<section class="input approver-set" aria-label="Approvers"><p class="input-title">Approvers</p>${rows.length > 0 ? html`<dl>${rows}</dl>` : ''}<p class="approvers" data-live="approvers:${decision.decisionId}" aria-live="polite">${parts}</p></section>`
}

/**
 * Why a member's question was withdrawn, when the set's answers settled it:
 * approved by enough approvals, declined by a denial (veto), declined
 * because too few approvals were still possible (no veto), or because too
 * few members can still answer. Null when the answers settle nothing
 * (the application withdrew the question for a reason of its own).
 *
 * @example
 * withdrawnBecause(progress) // "Withdrawn: the approvers' set was settled (2 of 2 approvals)"
 */
export function withdrawnBecause(progress: ApproverSetProgress): string | null {
  const prefix = "Withdrawn: the approvers' set was settled"
  if (progress.approved >= progress.required) {
    return `${prefix} (${progress.approved} of ${progress.required} ${plural(progress.required, 'approval', 'approvals')})`
  }
  if (progress.denied > 0 && progress.veto === false) {
    // Without veto a denial settles nothing by itself: the set declined only
    // once the approvals so far and the questions still open then (withdrawn
    // now) could not reach the count; else the withdrawal was not the set's.
    const open = progress.asked - progress.answered - progress.expired
    if (progress.approved + open < progress.required) {
      return `${prefix} (declined: too few approvals possible, ${progress.denied} denied)`
    }
  } else if (progress.denied > 0) {
    return `${prefix} (declined by ${progress.denied === 1 ? 'a denial' : `${progress.denied} denials`})`
  }
  if (progress.expired > 0 && progress.asked - progress.expired < progress.required) {
    return `${prefix} (declined: too few approvers left to answer)`
  }
  return null
}
