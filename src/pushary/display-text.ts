/**
 * What the reviewer sees must be what the action receives. Bidirectional
 * controls reorder what is drawn (`ACME-\u202E9876-1234` shows as
 * `ACME-4321-6789`) and invisible characters vanish (`1\u200B000` shows as
 * `1000` while `parseInt` reads 1), so a string holding either can show a
 * reviewer one thing and hand the action another. Every field the reviewer
 * sees refuses them: one rule for the client, the approval step and the
 * service, beside the storage rule of `text-rules.ts`.
 *
 * The rule is written as Unicode properties, not as a list of code points:
 * a list missed ten that draw nothing (U+034F, U+17B4, U+180B, U+206A,
 * U+FE0F, the tags U+E0000–U+E007F, U+1D173, U+FFF9…). Refused is every
 * `Default_Ignorable_Code_Point` (which holds the variation selectors, the
 * tags, the Hangul fillers and the code points Unicode keeps unassigned for
 * future invisible use) and every format character (`Cf`, which holds the
 * bidi controls and the interlinear annotation marks). Also refused is
 * U+FFFC OBJECT REPLACEMENT CHARACTER, a symbol Chromium draws as nothing
 * (a scan of every code point outside those two properties and the
 * combining marks found it alone). The zero-width joiner is in both
 * properties and stays refused, as before, so emoji written as ZWJ or
 * variation-selector sequences are refused too; the plain emoji is accepted.
 * Controls (Cc) are left to the storage and option rules: browsers draw
 * them as visible boxes.
 */
import type { z } from 'zod/v4'

/** Message of the shared refinement; schemas report it at the offending field. */
export const DISPLAYED_TEXT_MESSAGE =
  'must not contain characters that are drawn invisibly or reorder text (Unicode Default_Ignorable_Code_Point such as U+200B, U+FE0F and the tags U+E0000–U+E0FFF, format characters Cf such as the bidi controls U+202A–U+202E and U+FFF9, or U+FFFC)'

// Unicode property escapes: the data comes from the runtime's ICU, the same
// tables Node 20 and 22 use for every other regex.
const HIDDEN = /[\p{Default_Ignorable_Code_Point}\p{Cf}\uFFFC]/u

/**
 * True when `value` is drawn exactly as its characters read: no character
 * that is default-ignorable, a format character or drawn as nothing.
 *
 * @example
 * isDisplayedTextExact('ACME-\u202E9876-1234') // false
 * isDisplayedTextExact('1\u034F000') // false
 */
export function isDisplayedTextExact(value: string): boolean {
  return !HIDDEN.test(value)
}

const HIDDEN_ALL = new RegExp(HIDDEN.source, 'gu')

/**
 * `value` with every character {@link isDisplayedTextExact} refuses written
 * as a visible `⟦U+XXXX⟧`, for text stored before the rule refused it: the
 * reviewer sees that something is there instead of nothing.
 *
 * @example
 * visibleText('o-1\uFE0F') // 'o-1⟦U+FE0F⟧'
 */
export function visibleText(value: string): string {
  return value.replace(
    HIDDEN_ALL,
    (char) => `⟦U+${(char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}⟧`,
  )
}

/**
 * The first `count` user-perceived characters of `value` (grapheme
 * clusters, `Intl.Segmenter`), so a cut never splits a surrogate pair, a
 * flag or a letter from its accent; `total` is the number of clusters.
 *
 * @example
 * graphemePrefix('ab\u{1F600}c', 3) // { text: 'ab\u{1F600}', total: 4 }
 */
export function graphemePrefix(value: string, count: number): { text: string; total: number } {
  let text = ''
  let total = 0
  for (const { segment } of new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(value)) {
    if (total < count) text += segment
    total += 1
  }
  return { text, total }
}

type Parameters = Record<string, string | number | boolean>
interface Displayed {
  question?: string | undefined
  options?: readonly string[] | undefined
  placeholder?: string | undefined
  context?: string | undefined
  agentName?: string | undefined
  toolName?: string | undefined
  toolTarget?: string | undefined
  actor?: string | undefined
  environment?: string | undefined
  parameters?: Parameters | undefined
  presentation?:
    | {
        label: string
        effect: string
        risk?: string | undefined
        changes?: ReadonlyArray<{ parameter: string; label: string; format: { kind: string; unit?: string } }>
      }
    | undefined
}

/**
 * Every reviewer-visible string of a create body with its path.
 *
 * @example
 * for (const [path, text] of displayedStrings(input)) check(path, text)
 */
export function displayedStrings(value: Displayed): Array<[PropertyKey[], string]> {
  const found: Array<[PropertyKey[], string]> = []
  const add = (path: PropertyKey[], text: unknown) => {
    if (typeof text === 'string') found.push([path, text])
  }
  for (const field of [
    'question',
    'placeholder',
    'context',
    'agentName',
    'toolName',
    'toolTarget',
    'actor',
    'environment',
  ] as const) {
    add([field], value[field])
  }
  value.options?.forEach((option, index) => {
    add(['options', index], option)
  })
  for (const [key, entry] of Object.entries(value.parameters ?? {})) {
    add(['parameters', key], key)
    add(['parameters', key], entry)
  }
  const presentation = value.presentation
  if (presentation) {
    add(['presentation', 'label'], presentation.label)
    add(['presentation', 'effect'], presentation.effect)
    add(['presentation', 'risk'], presentation.risk)
    presentation.changes?.forEach((change, index) => {
      add(['presentation', 'changes', index, 'parameter'], change.parameter)
      add(['presentation', 'changes', index, 'label'], change.label)
      add(['presentation', 'changes', index, 'format', 'unit'], change.format.unit)
    })
  }
  return found
}

/**
 * Shared refinement of a create body: one issue per reviewer-visible string
 * that breaks {@link isDisplayedTextExact}, at its path (after `prefix`).
 *
 * @example
 * schema.superRefine((value, context) => refineDisplayedText(value, context))
 */
export function refineDisplayedText(
  value: Displayed,
  context: z.RefinementCtx,
  prefix: readonly PropertyKey[] = [],
): void {
  for (const [path, text] of displayedStrings(value)) {
    if (!isDisplayedTextExact(text)) {
      context.addIssue({ code: 'custom', path: [...prefix, ...path], message: DISPLAYED_TEXT_MESSAGE })
    }
  }
}
