/**
 * What the reviewer sees must be what the action receives. Bidirectional
 * controls reorder what is drawn (`ACME-\u202E9876-1234` shows as
 * `ACME-4321-6789`) and zero-width characters vanish (`1\u200B000` shows as
 * `1000` while `parseInt` reads 1), so a string holding either can show a
 * reviewer one thing and hand the action another. Every field the reviewer
 * sees refuses them: one rule for the client, the approval step and the
 * service, beside the storage rule of `text-rules.ts`.
 */
import type { z } from 'zod/v4'

/** Message of the shared refinement; schemas report it at the offending field. */
export const DISPLAYED_TEXT_MESSAGE =
  'must not contain bidirectional controls (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C) or invisible characters (zero-width U+200B–U+200D, U+2060–U+2064, U+FEFF, U+180E, soft hyphen U+00AD)'

// Written as code points, not a regex of literal invisible characters, so the
// rule itself can be read.
function isHidden(unit: number): boolean {
  return (
    unit === 0x00ad ||
    unit === 0x061c ||
    unit === 0x180e ||
    (unit >= 0x200b && unit <= 0x200f) ||
    (unit >= 0x202a && unit <= 0x202e) ||
    (unit >= 0x2060 && unit <= 0x2064) ||
    (unit >= 0x2066 && unit <= 0x2069) ||
    unit === 0xfeff
  )
}

/**
 * True when `value` is drawn exactly as its characters read: no bidi control
 * and no invisible character.
 *
 * @example
 * isDisplayedTextExact('ACME-\u202E9876-1234') // false
 */
export function isDisplayedTextExact(value: string): boolean {
  for (let index = 0; index < value.length; index += 1) {
    if (isHidden(value.charCodeAt(index))) return false
  }
  return true
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
