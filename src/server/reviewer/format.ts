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
const INTEGER = /^-?\d+$/

function currencyFormatter(currency: string): Intl.NumberFormat | null {
  try {
    return new Intl.NumberFormat(LOCALE, { style: 'currency', currency: currency.toUpperCase() })
  } catch {
    // An unknown ISO code throws RangeError; the caller falls back to plain text.
    return null
  }
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
 * Renders an amount given in minor units as money, respecting the currency's
 * own number of minor digits (EUR 2, JPY 0, KWD 3).
 *
 * @example
 * formatMoney(4800, 'EUR') // '€48.00'
 * formatMoney(4800, 'JPY') // '¥4,800'
 */
export function formatMoney(minor: ParameterValue, currency: string): string {
  const formatter = currencyFormatter(currency)
  const text = String(minor).trim()
  if (formatter === null || typeof minor === 'boolean') return `${text} ${currency}`
  const digits = formatter.resolvedOptions().maximumFractionDigits ?? 2
  if (INTEGER.test(text)) {
    // Intl formats decimal strings exactly (NumberFormat v3, Node >= 20).
    return formatter.format(minorToDecimal(text, digits) as unknown as number)
  }
  const numeric = Number(text)
  if (text === '' || !Number.isFinite(numeric)) return `${text} ${currency}`
  return formatter.format(numeric / 10 ** digits)
}

/**
 * Renders a quantity with thousands separators and an optional unit.
 *
 * @example
 * formatQuantity(1200, 'seats') // '1,200 seats'
 */
export function formatQuantity(value: ParameterValue, unit?: string): string {
  const numeric = typeof value === 'number' ? value : Number(String(value).trim())
  const shown =
    typeof value !== 'boolean' && String(value).trim() !== '' && Number.isFinite(numeric)
      ? new Intl.NumberFormat(LOCALE, { maximumFractionDigits: 6 }).format(numeric)
      : String(value)
  return unit ? `${shown} ${unit}` : shown
}

/**
 * Parses a timestamp parameter: an ISO-8601 string, or a number of
 * milliseconds since the epoch (values below 1e11 are taken as seconds,
 * since no real millisecond timestamp is that small after 1973).
 *
 * @example
 * parseTimestamp('2030-01-02T03:04:00Z')?.getTime() === parseTimestamp(1_893_553_440)?.getTime() // true
 */
export function parseTimestamp(value: ParameterValue): Date | null {
  if (typeof value === 'boolean') return null
  let date: Date
  if (typeof value === 'number' || INTEGER.test(value.trim())) {
    const numeric = Number(value)
    date = new Date(Math.abs(numeric) < 1e11 ? numeric * 1000 : numeric)
  } else {
    date = new Date(value)
  }
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
