/**
 * Reading API requests and answering their input problems: a JSON object
 * body, and a 400 that names the offending field. Shared by the decision
 * routes and the platform routes.
 */
import type { Context } from 'hono'
import type { z } from 'zod/v4'
import { findReservedKey, RESERVED_KEY_MESSAGE } from '../pushary/reserved-keys.js'
import { apiError } from './api-errors.js'

/**
 * Issues listed in a 400 body; the rest are counted. A small body with
 * thousands of wrong items would otherwise be answered with megabytes.
 */
export const MAX_LISTED_ISSUES = 10

function fieldOf(path: readonly PropertyKey[]): string {
  return path.map(String).join('.')
}

/**
 * A 400 naming the field, with the zod issues when there are some.
 *
 * @example
 * return invalid(c, 'callbackUrl', 'loopback addresses are refused')
 */
export function invalid(c: Context, field: string, message: string, issues?: readonly z.core.$ZodIssue[]) {
  const sentence = field === '' ? `Invalid request: ${message}` : `Invalid ${field}: ${message}`
  return apiError(c, 400, 'invalid_request', sentence, {
    field,
    ...(issues
      ? {
          issues: issues
            .slice(0, MAX_LISTED_ISSUES)
            .map((i) => ({ code: i.code, path: i.path.map(String), message: i.message })),
          ...(issues.length > MAX_LISTED_ISSUES ? { moreIssues: issues.length - MAX_LISTED_ISSUES } : {}),
        }
      : {}),
  })
}

/**
 * A 400 naming the first failing field of a zod error (after `prefix`).
 *
 * @example
 * if (!parsed.success) return invalidFromZod(c, parsed.error)
 */
export function invalidFromZod(c: Context, error: z.ZodError, prefix = '') {
  const first = error.issues[0]
  const field = [prefix, fieldOf(first?.path ?? [])].filter((p) => p !== '').join('.')
  return invalid(c, field, first?.message ?? 'invalid value', error.issues)
}

/** A request body read as one JSON object, or the 400 to answer. */
export type JsonBody = { ok: true; value: Record<string, unknown> } | { ok: false; response: Response }

/**
 * Reads the body as one JSON object (an empty body reads as `{}`), refusing
 * a key JavaScript treats specially (`reserved-keys.ts`) anywhere in it.
 *
 * @example
 * const body = await readJsonObject(c)
 * if (!body.ok) return body.response
 */
export async function readJsonObject(c: Context): Promise<JsonBody> {
  const raw = await c.req.text()
  if (raw.trim() === '') return { ok: true, value: {} }
  let value: unknown
  try {
    value = JSON.parse(raw)
  } catch {
    return {
      ok: false,
      response: apiError(c, 400, 'invalid_json', 'The request body is not valid JSON.'),
    }
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, response: invalid(c, '', 'the body must be a JSON object') }
  }
  // Before any schema: a schema would drop `__proto__` without a word.
  const reserved = findReservedKey(value)
  if (reserved !== null) {
    const message = `"${String(reserved.at(-1))}" ${RESERVED_KEY_MESSAGE}`
    return { ok: false, response: invalid(c, fieldOf(reserved), message) }
  }
  return { ok: true, value: value as Record<string, unknown> }
}
