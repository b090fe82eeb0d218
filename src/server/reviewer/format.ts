/**
 * Turns raw decision parameters into the text a reviewer reads. Everything
 * here is pure and locale-pinned (`en-US`, UTC) so the page renders the same
 * on every host and tests can assert exact strings.
 */

/** A scalar decision parameter, as the service stores it. */
export type ParameterValue = string | number | boolean

/** How a presentation `change` asks its parameter to be shown. */
export type ChangeFormat =
  | { readonly kind: 'text' }
  | { readonly kind: 'currency'; readonly currency: string }
  | { readonly kind: 'quantity'; readonly unit?: string | undefined }
  | { readonly kind: 'timestamp' }
  | { readonly kind: 'boolean' }

const LOCALE = 'en-US'

// Strict decimal forms. Anything looser ("0b111110100", "5e2", " 500\n",
// "0500") is something a parser somewhere reads differently, so the page
// shows it exactly as sent instead of a tidy amount that may not be what the
// protected action receives.
const STRICT_INTEGER = /^(0|-?[1-9][0-9]*)$/
const STRICT_DECIMAL = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?$/
const ISO_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,3})?)?(Z|[+-](\d{2}):(\d{2}))$/

function currencyFormatter(currency: string): Intl.NumberFormat | null {
  try {
    return new Intl.NumberFormat(LOCALE, { style: 'currency', currency: currency.toUpperCase() })
  } catch {
    // An unknown ISO code throws RangeError; the caller falls back to plain text.
    return null
  }
}

/**
 * The value as a strict decimal string, or null when it is not one: numbers
 * must be finite and print without an exponent; strings must already be in
 * strict form (no whitespace, sign only on non-zero, no leading zeros).
 */
function strictDecimal(value: ParameterValue, pattern: RegExp): string | null {
  if (typeof value === 'boolean') return null
  if (typeof value === 'number' && !Number.isFinite(value)) return null
  const text = String(value)
  return pattern.test(text) ? text : null
}

/**
 * Shifts an integer amount of minor units into a decimal string without going
 * through floating point, so 2^53-sized amounts keep every digit.
 */
function minorToDecimal(minor: string, digits: number): string {
  const negative = minor.startsWith('-')
  const unsigned = (negative ? minor.slice(1) : minor).padStart(digits + 1, '0')
  const whole = unsigned.slice(0, unsigned.length - digits)
  const fraction = unsigned.slice(unsigned.length - digits)
  return `${negative ? '-' : ''}${whole}${digits > 0 ? `.${fraction}` : ''}`
}

/**
 * Renders an amount given in integer minor units as money, respecting the
 * currency's own number of minor digits (EUR 2, JPY 0, KWD 3). Anything that
 * is not a strict integer (a fraction of a minor unit, `"5e2"`, `" 500"`) is
 * shown as sent, followed by the currency code.
 *
 * @example
 * formatMoney(4800, 'EUR') // '€48.00'
 * formatMoney('0b111110100', 'EUR') // '0b111110100 EUR'
 */
export function formatMoney(minor: ParameterValue, currency: string): string {
  const formatter = currencyFormatter(currency)
  const integer =
    typeof minor === 'number' && !Number.isSafeInteger(minor) ? null : strictDecimal(minor, STRICT_INTEGER)
  if (formatter === null || integer === null) return `${String(minor)} ${currency}`
  const digits = formatter.resolvedOptions().maximumFractionDigits ?? 2
  // Intl formats decimal strings exactly (NumberFormat v3, Node >= 20).
  return formatter.format(minorToDecimal(integer, digits) as unknown as number)
}

/**
 * Renders a strict decimal quantity with thousands separators and every
 * fraction digit it has, and an optional unit; anything else as sent.
 *
 * @example
 * formatQuantity(1200, 'seats') // '1,200 seats'
 */
export function formatQuantity(value: ParameterValue, unit?: string): string {
  const decimal = strictDecimal(value, STRICT_DECIMAL)
  const fractionDigits = decimal === null ? 0 : (decimal.split('.')[1]?.length ?? 0)
  const shown =
    decimal === null || fractionDigits > 100
      ? String(value)
      : new Intl.NumberFormat(LOCALE, { maximumFractionDigits: fractionDigits }).format(
          decimal as unknown as number,
        )
  return unit ? `${shown} ${unit}` : shown
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate()
}

/**
 * Parses a timestamp parameter: an ISO-8601 date-time with a zone
 * (`2030-01-02T03:04:00Z`, `…+02:00`) whose every field is in range, or a
 * safe-integer number of milliseconds since the epoch (values below 1e11 are
 * taken as seconds, since no real millisecond timestamp is that small after
 * 1973). Digit strings such as `"20300102"` and dates that would roll over
 * (`2030-02-31`) are not timestamps: null, so the page shows them as sent.
 *
 * @example
 * parseTimestamp('2030-01-02T03:04:00Z')?.getTime() === parseTimestamp(1_893_553_440)?.getTime() // true
 */
export function parseTimestamp(value: ParameterValue): Date | null {
  if (typeof value === 'boolean') return null
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) return null
    const date = new Date(Math.abs(value) < 1e11 ? value * 1000 : value)
    return Number.isNaN(date.getTime()) ? null : date
  }
  const match = ISO_DATE_TIME.exec(value)
  if (match === null) return null
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map((part) => Number(part ?? 0)) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ]
  const offsetHours = Number(match[8] ?? 0)
  const offsetMinutes = Number(match[9] ?? 0)
  if (
    month < 1 ||
    month > 12 ||
    day < 1 ||
    day > daysInMonth(year, month) ||
    hour > 23 ||
    minute > 59 ||
    second > 59 ||
    offsetHours > 23 ||
    offsetMinutes > 59
  ) {
    return null
  }
  const date = new Date(value)
  return Number.isNaN(date.getTime()) ? null : date
}

const DATE_TIME = new Intl.DateTimeFormat(LOCALE, {
  dateStyle: 'medium',
  timeStyle: 'short',
  timeZone: 'UTC',
})

/**
 * Renders a date in UTC, e.g. for expiry times and timestamp parameters.
 *
 * @example
 * formatDateTime(new Date('2030-01-02T03:04:00Z')) // 'Jan 2, 2030, 3:04 AM UTC'
 */
export function formatDateTime(date: Date): string {
  return `${DATE_TIME.format(date)} UTC`
}

/**
 * Renders a boolean-ish parameter as Yes/No; anything else is shown verbatim.
 *
 * @example
 * formatBoolean(true) // 'Yes'
 */
export function formatBoolean(value: ParameterValue): string {
  // Only the exact words: "TRUE" or "1" is shown as sent.
  if (value === true || value === 'true') return 'Yes'
  if (value === false || value === 'false') return 'No'
  return String(value)
}

/**
 * Renders one parameter as the presentation `format` asks. A value the format
 * cannot render is shown verbatim rather than hidden: the reviewer must see
 * what they approve.
 *
 * @example
 * formatParameter(4800, { kind: 'currency', currency: 'EUR' }) // '€48.00'
 */
export function formatParameter(value: ParameterValue, format: ChangeFormat): string {
  switch (format.kind) {
    case 'text':
      return String(value)
    case 'currency':
      return formatMoney(value, format.currency)
    case 'quantity':
      return formatQuantity(value, format.unit)
    case 'timestamp': {
      const date = parseTimestamp(value)
      return date === null ? String(value) : formatDateTime(date)
    }
    case 'boolean':
      return formatBoolean(value)
    default: {
      const unknown: never = format
      void unknown
      return String(value)
    }
  }
}
