/**
 * A tiny escaping template for the reviewer page. Every interpolated value is
 * escaped unless it is already a `SafeHtml` produced by this module, so a
 * question or option text written by an agent can never inject markup.
 */

/** Markup that has already been escaped (or is trusted static text). */
export class SafeHtml {
  readonly value: string

  constructor(value: string) {
    this.value = value
  }

  toString(): string {
    return this.value
  }
}

/** Values the `html` template accepts: nested fragments, arrays of them, or plain text. */
export type HtmlValue = SafeHtml | string | number | boolean | null | undefined | readonly HtmlValue[]

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
}

/**
 * Escapes text for use in element content and in quoted attribute values.
 *
 * @example
 * escapeHtml('<b>"hi"</b>') // '&lt;b&gt;&quot;hi&quot;&lt;/b&gt;'
 */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (char) => ESCAPES[char] ?? char)
}

function render(value: HtmlValue): string {
  if (value instanceof SafeHtml) return value.value
  if (Array.isArray(value)) return value.map((item: HtmlValue) => render(item)).join('')
  // `false`, `null` and `undefined` render nothing so `${cond && html`...`}` reads naturally.
  if (value === null || value === undefined || value === false) return ''
  return escapeHtml(String(value))
}

/**
 * Tagged template that escapes every interpolated value.
 *
 * @example
 * const question = '<script>alert(1)</script>'
 * html`<h2>${question}</h2>`.value // '<h2>&lt;script&gt;alert(1)&lt;/script&gt;</h2>'
 */
export function html(strings: TemplateStringsArray, ...values: readonly HtmlValue[]): SafeHtml {
  let out = strings[0] ?? ''
  for (let index = 0; index < values.length; index += 1) {
    out += render(values[index]) + (strings[index + 1] ?? '')
  }
  return new SafeHtml(out)
}

/**
 * Marks trusted static markup (inline CSS, the page script) as safe. Never pass user data.
 *
 * @example
 * html`<style>${unsafeRaw('body{margin:0}')}</style>`
 */
export function unsafeRaw(markup: string): SafeHtml {
  return new SafeHtml(markup)
}
