/**
 * Which strings may cross into storage. SQLite's driver reads TEXT back cut
 * at the first NUL, PostgreSQL refuses NUL outright, and every UTF-8 encoder
 * turns an unpaired surrogate into U+FFFD (so `"\ud800"` and `"\udbff"` become
 * the same customer). A string with either would come back as a different
 * value than the one that was checked, so every schema that feeds a store,
 * the service or the reviewer page refuses it up front.
 */
import { z } from 'zod/v4'

/** Message of the shared refinement; schemas report it at the offending field. */
export const STORABLE_TEXT_MESSAGE = 'must not contain NUL (U+0000) or unpaired UTF-16 surrogates'

/**
 * True when `value` survives every store byte for byte: no NUL and no
 * unpaired surrogate (`String.prototype.isWellFormed` plus a NUL check,
 * written out because the TypeScript lib targets ES2023).
 *
 * @example
 * isStorableText('victim\u0000x') // false
 */
export function isStorableText(value: string): boolean {
  for (let index = 0; index < value.length; index += 1) {
    const unit = value.charCodeAt(index)
    if (unit === 0) return false
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = value.charCodeAt(index + 1)
      if (!(next >= 0xdc00 && next <= 0xdfff)) return false
      index += 1
    } else if (unit >= 0xdc00 && unit <= 0xdfff) {
      return false
    }
  }
  return true
}

// C0 and C1 controls and DEL. A button value with CR is rewritten by form
// encoding (and LF becomes CRLF), so such an option could never be chosen.
function hasControl(value: string): boolean {
  for (let index = 0; index < value.length; index += 1) {
    const unit = value.charCodeAt(index)
    if (unit <= 0x1f || (unit >= 0x7f && unit <= 0x9f)) return true
  }
  return false
}

/**
 * True when `value` can be shown as one line and submitted back unchanged
 * by a form post: storable and free of control characters.
 *
 * @example
 * isChoosableText('Refund to card') // true
 * isChoosableText('a\r\nb') // false
 */
export function isChoosableText(value: string): boolean {
  return isStorableText(value) && !hasControl(value)
}

/**
 * A `z.string()` that refuses what {@link isStorableText} refuses. Chain
 * `.trim()`, `.min()` and `.max()` after it as with any zod string.
 *
 * @example
 * const noteSchema = storableString().max(200)
 */
export function storableString() {
  return z.string().refine(isStorableText, { message: STORABLE_TEXT_MESSAGE })
}

/**
 * An `http(s)` URL the service can store, show and call as given: storable,
 * and without `user:password@` (fetch refuses such URLs, and the credentials
 * would otherwise sit in the database and in delivery errors).
 *
 * @example
 * httpUrlSchema.parse('https://app.example.com/pushary/callback')
 */
export const httpUrlSchema = storableString()
  .pipe(z.url({ protocol: /^https?$/ }))
  .refine(
    (value) => {
      try {
        const url = new URL(value)
        return url.username === '' && url.password === ''
      } catch {
        return false
      }
    },
    { message: 'must not contain credentials (user:password@)' },
  )
