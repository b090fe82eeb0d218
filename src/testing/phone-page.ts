/**
 * Reads the reviewer page the way a phone's browser shows it: the cards on
 * the list, and one card's answer form (its CSRF field and its controls).
 * The page is the service's own server-rendered HTML, escaped by one rule,
 * so a few anchored patterns read it; nothing here trusts more than a person
 * looking at the screen would.
 */

/**
 * The kind of answer a card asks for, read from its controls: Approve/Deny
 * buttons (`confirm`), one button per option (`select`), or a text field
 * (`input`).
 *
 * @example
 * const kind: SimulatedPhoneQuestionType = 'select'
 */
export type SimulatedPhoneQuestionType = 'confirm' | 'select' | 'input'

/**
 * One question as the phone shows it.
 *
 * @example
 * const question = await phone.nextQuestion()
 * if (question.type === 'select') await phone.choose(question.decisionId, question.options[0]!)
 */
export interface SimulatedPhoneQuestion {
  readonly decisionId: string
  /** The card's heading: the question text as the person reads it. */
  readonly question: string
  readonly type: SimulatedPhoneQuestionType
  /** The option buttons of a `select` card, in order; empty otherwise. */
  readonly options: readonly string[]
  /** The card's whole visible text (agent, risk, tool, parameters, question), whitespace collapsed. */
  readonly text: string
}

/** A card's answer form: where it posts and with which CSRF token. */
export interface CardForm {
  readonly action: string
  readonly csrf: string
}

/** A card read from the decision page: the question while it is open, the outcome line once it is not. */
export type ReadCard =
  | { readonly open: true; readonly question: SimulatedPhoneQuestion; readonly form: CardForm }
  | { readonly open: false; readonly outcome: string }

const ENTITIES: Readonly<Record<string, string>> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  '#39': "'",
  '#96': '`',
}

/** Undoes the page's escaping (the five characters and the backtick it escapes). */
export function unescapeHtml(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#39|#96);/g, (_, name: string) => ENTITIES[name] ?? '')
}

function visibleText(markup: string): string {
  return unescapeHtml(markup.replace(/<[^>]*>/g, ' '))
    .replace(/\s+/g, ' ')
    .trim()
}

/** Decision ids of the single cards and batch items on the list, in page order (batch headers skipped). */
export function readListIds(markup: string): string[] {
  return [...markup.matchAll(/<article class="decision[^"]*" data-decision-id="([^"]+)"/g)]
    .map((match) => unescapeHtml(match[1] ?? ''))
    .filter((id) => id !== '' && !id.startsWith('batch:'))
}

/**
 * Reads the one card of a decision page (`GET /review/:id`). Returns null
 * when the page holds no card for `decisionId`.
 */
export function readDecisionCard(markup: string, decisionId: string): ReadCard | null {
  const start = markup.indexOf('<article class="decision"')
  const end = markup.indexOf('</article>', start)
  if (start === -1 || end === -1) return null
  const card = markup.slice(start, end)
  const id = /data-decision-id="([^"]*)"/.exec(card)?.[1]
  if (id === undefined || unescapeHtml(id) !== decisionId) return null
  const formStart = card.indexOf('<form method="post"')
  if (formStart === -1) {
    const outcome = /<p class="outcome"[^>]*>([\s\S]*?)<\/p>/.exec(card)?.[1]
    return { open: false, outcome: visibleText(outcome ?? '') }
  }
  const formMarkup = card.slice(formStart)
  const action = /<form method="post" action="([^"]+)"/.exec(formMarkup)?.[1]
  const csrf = /<input type="hidden" name="csrf" value="([^"]*)">/.exec(formMarkup)?.[1]
  const heading = /<h2 id="[^"]*">([\s\S]*?)<\/h2>/.exec(card)?.[1]
  if (action === undefined || csrf === undefined || heading === undefined) return null
  const buttons = [
    ...formMarkup.matchAll(/<button type="submit" name="answer" value="([^"]*)"( class="(\w+)")?>/g),
  ]
  const hasTextField = /<input [^>]*type="text" name="answer"/.test(formMarkup)
  const isConfirm = buttons.some((button) => button[3] === 'approve') && buttons.some((b) => b[3] === 'deny')
  const type: SimulatedPhoneQuestionType = isConfirm ? 'confirm' : hasTextField ? 'input' : 'select'
  return {
    open: true,
    form: { action: unescapeHtml(action), csrf: unescapeHtml(csrf) },
    question: {
      decisionId,
      question: visibleText(heading),
      type,
      options: type === 'select' ? buttons.map((button) => unescapeHtml(button[1] ?? '')) : [],
      text: visibleText(card.slice(0, formStart)),
    },
  }
}
