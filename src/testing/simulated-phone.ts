/**
 * A phone for tests: linked to one customer by tapping the enrollment link,
 * then answering on the reviewer page as a person does (read the card, tap
 * Approve or Deny, pick an option, type a text). Every step is an HTTP
 * request to the local decision service's page, with the device cookie the
 * tap set and the CSRF token the card carries: no API key and no admin
 * route, so what the test proves is what a reviewer can do.
 */
import type { PusharyClient } from '@pushary/mastra'
import {
  type CardForm,
  type ReadCard,
  readDecisionCard,
  readListIds,
  type SimulatedPhoneQuestion,
} from './phone-page.js'
import { PusharyTestingError } from './testing-error.js'

/**
 * What one tap came to. `answered` carries the value the service recorded;
 * `closed` means the card showed no answer controls (already answered,
 * expired or cancelled: `message` is the outcome line it showed); the other
 * statuses are the page's refusals of the tap itself.
 *
 * @example
 * const tap = await phone.approve(decisionId)
 * if (tap.status !== 'answered') throw new Error(tap.message)
 */
export type SimulatedPhoneAnswer =
  | {
      readonly status: 'answered'
      readonly decisionId: string
      readonly value: string
      readonly message: string
    }
  | {
      readonly status:
        | 'closed'
        | 'already_answered'
        | 'expired'
        | 'cancelled'
        | 'invalid_answer'
        | 'not_found'
        | 'forbidden'
        | 'bad_request'
      readonly decisionId: string
      readonly message: string
    }

/**
 * Options of {@link SimulatedPhone.nextQuestion}.
 *
 * @example
 * const question = await phone.nextQuestion({ timeoutMs: 5_000, where: (q) => q.question.includes('Refund') })
 */
export interface NextQuestionOptions {
  /** How long to wait for a matching card, default 10 000 ms. */
  timeoutMs?: number
  /** Only a card for which this returns true. */
  where?: (question: SimulatedPhoneQuestion) => boolean
}

/**
 * A linked phone. Questions appear on it as the person would see them; each
 * answer is a tap on the card's own controls, so a control the card does not
 * offer throws (`no_such_control`) instead of being sent.
 *
 * @example
 * const phone = await linkSimulatedPhone(client, 'customer_1')
 * const question = await phone.nextQuestion()
 * await phone.approve(question.decisionId)
 */
export interface SimulatedPhone {
  /** The customer this phone answers for. */
  readonly externalId: string
  /** Origin of the reviewer page the phone uses. */
  readonly pageUrl: string
  /** The open questions on the phone's list, in the order the page shows them. */
  questions(): Promise<SimulatedPhoneQuestion[]>
  /** Waits until an open question (matching `where`) is on the list and returns it. */
  nextQuestion(options?: NextQuestionOptions): Promise<SimulatedPhoneQuestion>
  /** Taps Approve on a confirm card. */
  approve(decisionId: string): Promise<SimulatedPhoneAnswer>
  /** Taps Deny on a confirm card. */
  deny(decisionId: string): Promise<SimulatedPhoneAnswer>
  /** Taps one option of a select card. */
  choose(decisionId: string, option: string): Promise<SimulatedPhoneAnswer>
  /** Types `text` into an input card and sends it. */
  type(decisionId: string, text: string): Promise<SimulatedPhoneAnswer>
}

/**
 * Options of {@link linkSimulatedPhone}.
 *
 * @example
 * const options: SimulatedPhoneOptions = { fetch: globalThis.fetch }
 */
export interface SimulatedPhoneOptions {
  /** `fetch` for the page requests (default the global one). */
  fetch?: typeof fetch
}

const ANSWER_STATUSES = new Set([
  'already_answered',
  'expired',
  'cancelled',
  'invalid_answer',
  'not_found',
  'forbidden',
  'bad_request',
])

function requireText(operation: string, field: string, value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new PusharyTestingError({
      code: 'invalid_input',
      operation,
      field,
      message: `${field} must be a non-empty string`,
    })
  }
  return value
}

function deviceCookieOf(response: Response): string | null {
  for (const header of response.headers.getSetCookie()) {
    const pair = header.split(';', 1)[0] ?? ''
    if (/^(__Host-)?pushary_device=/.test(pair)) return pair
  }
  return null
}

/**
 * Links a simulated phone to `externalId`: asks the service for an
 * enrollment link (`client.enroll`, as the application does when it shows
 * the QR code) and taps "Link this phone" on it. Works against the local
 * decision service (`createPusharyDevServer`, `pushary-mastra dev`); a
 * hosted link needs a real phone.
 *
 * @example
 * const phone = await linkSimulatedPhone(client, 'customer_1')
 * expect((await client.reachability('customer_1')).reachable).toBe(true)
 */
export async function linkSimulatedPhone(
  client: PusharyClient,
  externalId: string,
  options: SimulatedPhoneOptions = {},
): Promise<SimulatedPhone> {
  const operation = 'linkSimulatedPhone'
  requireText(operation, 'externalId', externalId)
  const fetchPage = options.fetch ?? globalThis.fetch
  const { universalLink } = await client.enroll(externalId)
  const tapped = await fetchPage(universalLink, { method: 'POST', redirect: 'manual' })
  await tapped.body?.cancel()
  const cookie = tapped.status === 303 ? deviceCookieOf(tapped) : null
  if (cookie === null) {
    throw new PusharyTestingError({
      code: 'phone_not_linked',
      operation,
      field: 'externalId',
      message: `tapping the enrollment link ${universalLink} answered HTTP ${tapped.status} without a device cookie (the simulated phone needs the local decision service)`,
    })
  }
  return createPhone({ externalId, pageUrl: new URL(universalLink).origin, cookie, fetchPage })
}

function createPhone(input: {
  externalId: string
  pageUrl: string
  cookie: string
  fetchPage: typeof fetch
}): SimulatedPhone {
  const { externalId, pageUrl, cookie, fetchPage } = input

  const get = async (operation: string, path: string): Promise<{ status: number; body: string }> => {
    const response = await fetchPage(`${pageUrl}${path}`, { headers: { cookie, accept: 'text/html' } })
    const body = await response.text()
    if (response.status === 401) {
      throw new PusharyTestingError({
        code: 'phone_not_linked',
        operation,
        field: 'externalId',
        message: `the reviewer page no longer knows this phone of "${externalId}" (HTTP 401: revoked or expired)`,
      })
    }
    return { status: response.status, body }
  }

  const readCard = async (
    operation: string,
    decisionId: string,
  ): Promise<ReadCard | SimulatedPhoneAnswer> => {
    const page = await get(operation, `/review/${encodeURIComponent(decisionId)}`)
    if (page.status === 404 || page.status === 403) {
      return {
        status: page.status === 404 ? 'not_found' : 'forbidden',
        decisionId,
        message:
          page.status === 404
            ? `there is no decision ${decisionId}`
            : `decision ${decisionId} is not addressed to "${externalId}"`,
      }
    }
    const card = page.status === 200 ? readDecisionCard(page.body, decisionId) : null
    if (card === null) {
      throw new PusharyTestingError({
        code: 'unexpected_page',
        operation,
        field: 'decisionId',
        message: `the page of decision ${decisionId} (HTTP ${page.status}) shows no card for it`,
      })
    }
    return card
  }

  const post = async (decisionId: string, form: CardForm, answer: string): Promise<SimulatedPhoneAnswer> => {
    const response = await fetchPage(new URL(form.action, pageUrl), {
      method: 'POST',
      headers: {
        cookie,
        accept: 'application/json',
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ csrf: form.csrf, answer }).toString(),
    })
    const body = (await response.json().catch(() => null)) as Record<string, unknown> | null
    const status = typeof body?.status === 'string' ? body.status : ''
    const message = typeof body?.message === 'string' ? body.message : `HTTP ${response.status}`
    if (status === 'answered') {
      return { status, decisionId, value: typeof body?.value === 'string' ? body.value : answer, message }
    }
    if (ANSWER_STATUSES.has(status)) {
      return {
        status: status as Exclude<SimulatedPhoneAnswer['status'], 'answered' | 'closed'>,
        decisionId,
        message,
      }
    }
    throw new PusharyTestingError({
      code: response.status === 401 ? 'phone_not_linked' : 'unexpected_page',
      operation: 'answer',
      field: 'decisionId',
      message: `the answer to ${decisionId} came back HTTP ${response.status} (${message})`,
    })
  }

  /** Reads the card, checks it offers `control`, then taps it. */
  const tap = async (
    operation: string,
    decisionId: string,
    control: (question: SimulatedPhoneQuestion) => { answer: string } | { missing: string; field: string },
  ): Promise<SimulatedPhoneAnswer> => {
    requireText(operation, 'decisionId', decisionId)
    const card = await readCard(operation, decisionId)
    if (!('open' in card)) return card
    if (!card.open) return { status: 'closed', decisionId, message: card.outcome }
    const chosen = control(card.question)
    if ('missing' in chosen) {
      throw new PusharyTestingError({
        code: 'no_such_control',
        operation,
        field: chosen.field,
        message: `the card of ${decisionId} ("${card.question.question}", ${describeControls(card.question)}) has no ${chosen.missing}`,
      })
    }
    return post(decisionId, card.form, chosen.answer)
  }

  const questions = async (): Promise<SimulatedPhoneQuestion[]> => {
    const list = await get('questions', '/review/list')
    const open: SimulatedPhoneQuestion[] = []
    for (const decisionId of readListIds(list.body)) {
      const card = await readCard('questions', decisionId)
      if ('open' in card && card.open) open.push(card.question)
    }
    return open
  }

  return {
    externalId,
    pageUrl,
    questions,
    async nextQuestion(options = {}) {
      const timeoutMs = options.timeoutMs ?? 10_000
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const found = (await questions()).find((question) => options.where?.(question) ?? true)
        if (found) return found
        if (Date.now() >= deadline) {
          throw new PusharyTestingError({
            code: 'no_question',
            operation: 'nextQuestion',
            field: 'timeoutMs',
            message: `no open question reached the phone of "${externalId}" within ${timeoutMs} ms`,
          })
        }
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    },
    approve: (decisionId) =>
      tap('approve', decisionId, (q) =>
        q.type === 'confirm' ? { answer: 'yes' } : { missing: 'Approve button', field: 'decisionId' },
      ),
    deny: (decisionId) =>
      tap('deny', decisionId, (q) =>
        q.type === 'confirm' ? { answer: 'no' } : { missing: 'Deny button', field: 'decisionId' },
      ),
    choose: (decisionId, option) => {
      requireText('choose', 'option', option)
      return tap('choose', decisionId, (q) =>
        q.type === 'select' && q.options.includes(option)
          ? { answer: option }
          : { missing: `option "${option}"`, field: q.type === 'select' ? 'option' : 'decisionId' },
      )
    },
    type: (decisionId, text) => {
      requireText('type', 'text', text)
      return tap('type', decisionId, (q) =>
        q.type === 'input' ? { answer: text } : { missing: 'text field', field: 'decisionId' },
      )
    },
  }
}

function describeControls(question: SimulatedPhoneQuestion): string {
  switch (question.type) {
    case 'confirm':
      return 'Approve and Deny'
    case 'select':
      return `options ${JSON.stringify(question.options)}`
    case 'input':
      return 'a text field'
    default: {
      const unknown: never = question.type
      return String(unknown)
    }
  }
}
