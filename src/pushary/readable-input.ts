/**
 * A tool's input as decision `parameters`: every scalar leaf of a nested
 * value under its path (`invoice.lines[0].sku`), so a reviewer reads a
 * labelled list instead of raw JSON. All or nothing: when the leaves do not
 * fit the API's parameter limits (32 keys, key 64, string 200) nothing is
 * derived and the caller shows the input another way, never a part of it.
 */
import { decisionParametersSchema } from './decision-schemas.js'

type Scalar = string | number | boolean

const PLAIN_KEY = /^[A-Za-z_$][A-Za-z0-9_$-]*$/

function childPath(path: string, key: string): string {
  if (PLAIN_KEY.test(key) && !key.includes('.')) return path === '' ? key : `${path}.${key}`
  return `${path}[${JSON.stringify(key)}]`
}

function collect(value: unknown, path: string, out: Array<[string, Scalar]>, depth: number): boolean {
  if (depth > 16 || out.length > 32) return false
  if (value === null) {
    out.push([path || 'input', 'null'])
    return true
  }
  if (typeof value === 'string' || typeof value === 'boolean') {
    out.push([path || 'input', value])
    return true
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return false
    out.push([path || 'input', value])
    return true
  }
  if (Array.isArray(value)) {
    if (value.length === 0) {
      out.push([path || 'input', '[]'])
      return true
    }
    return value.every((item, index) => collect(item, `${path}[${index}]`, out, depth + 1))
  }
  if (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, item]) => item !== undefined)
    if (entries.length === 0) {
      out.push([path || 'input', '{}'])
      return true
    }
    return entries.every(([key, item]) => collect(item, childPath(path, key), out, depth + 1))
  }
  return false
}

/**
 * The scalar leaves of `input` keyed by path, or `undefined` when the input
 * is empty or its leaves do not fit the API's `parameters` limits.
 *
 * @example
 * readableParameters({ invoice: { id: 'inv_1', lines: [{ qty: 2 }] } })
 * // { 'invoice.id': 'inv_1', 'invoice.lines[0].qty': 2 }
 */
export function readableParameters(input: unknown): Record<string, Scalar> | undefined {
  if (input === undefined) return undefined
  const leaves: Array<[string, Scalar]> = []
  if (!collect(input, '', leaves, 0)) return undefined
  // Two paths can only collide through odd keys; refuse rather than drop one.
  if (new Set(leaves.map(([key]) => key)).size !== leaves.length) return undefined
  const parsed = decisionParametersSchema.safeParse(Object.fromEntries(leaves))
  return parsed.success && leaves.length > 0 ? parsed.data : undefined
}

function words(segment: string): string {
  const spaced = segment
    .replace(/[_-]+/g, ' ')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .trim()
    .toLowerCase()
  return spaced === '' ? segment : spaced.charAt(0).toUpperCase() + spaced.slice(1)
}

/**
 * A parameter key in words for a label: path segments become words joined by
 * `›`, list positions count from 1 (`lines[0].unitPrice` → `Lines › 1 › Unit price`).
 * A key that is not a path is only split into words.
 *
 * @example
 * parameterLabel('invoice.lines[0].unitPrice') // 'Invoice › Lines › 1 › Unit price'
 */
export function parameterLabel(key: string): string {
  const segments: string[] = []
  const pattern = /\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]|([^.[\]]+)/g
  for (const match of key.matchAll(pattern)) {
    if (match[1] !== undefined) segments.push(String(Number(match[1]) + 1))
    else if (match[2] !== undefined) {
      try {
        segments.push(String(JSON.parse(match[2])))
      } catch {
        segments.push(match[2])
      }
    } else if (match[3] !== undefined) segments.push(words(match[3]))
  }
  return segments.length === 0 ? key : segments.join(' › ')
}
