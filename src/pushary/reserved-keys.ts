/**
 * Key names JavaScript treats specially. `JSON.parse` keeps `"__proto__"` as
 * an own key, but copying it into a fresh object (as a schema does) sets the
 * prototype instead, so the key silently vanishes: a parameter the reviewer
 * never sees and a permit never compares. `constructor` and `prototype` shadow
 * what code reads off every object. They are refused, by name, wherever a
 * request body is read (the client before sending, the service on arrival),
 * never dropped.
 */

/** The refused key names. */
export const RESERVED_KEY_NAMES: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype'])

/** Message of the refusal; the error names the field beside it. */
export const RESERVED_KEY_MESSAGE =
  'is a reserved key name (__proto__, constructor and prototype have special meaning in JavaScript and would be dropped or misread); rename it'

/**
 * The path of the first reserved key anywhere in a JSON-like value (own
 * enumerable keys of objects, array items), else null. Walks with an explicit
 * stack, so a deeply nested body cannot overflow the call stack.
 *
 * @example
 * findReservedKey(JSON.parse('{"parameters":{"__proto__":1}}')) // ['parameters', '__proto__']
 */
export function findReservedKey(value: unknown): PropertyKey[] | null {
  // Each entry links to its parent, so a path is built only for the key found
  // (copying paths as it goes would be quadratic in the nesting depth).
  type Entry = { value: unknown; key: PropertyKey; parent: Entry | null }
  const pathOf = (entry: Entry | null, last: PropertyKey): PropertyKey[] => {
    const path = [last]
    for (let at = entry; at !== null && at.parent !== null; at = at.parent) path.push(at.key)
    return path.reverse()
  }
  const stack: Entry[] = [{ value, key: '', parent: null }]
  for (let entry = stack.pop(); entry !== undefined; entry = stack.pop()) {
    const current = entry.value
    if (current === null || typeof current !== 'object') continue
    if (Array.isArray(current)) {
      for (let index = current.length - 1; index >= 0; index -= 1) {
        stack.push({ value: current[index], key: index, parent: entry })
      }
      continue
    }
    const keys = Object.keys(current)
    const reserved = keys.find((key) => RESERVED_KEY_NAMES.has(key))
    if (reserved !== undefined) return pathOf(entry, reserved)
    for (let index = keys.length - 1; index >= 0; index -= 1) {
      const key = keys[index] as string
      stack.push({ value: (current as Record<string, unknown>)[key], key, parent: entry })
    }
  }
  return null
}
