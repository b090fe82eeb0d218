/**
 * Reading TEXT exactly. The SQLite driver returns TEXT cut at the first NUL,
 * so a value written with one (by an older version, before the shared schemas
 * refused it) would read back as a shorter, different value. Selecting the
 * column as a BLOB returns every stored byte.
 */
import type { Row } from '@libsql/client'

const strictUtf8 = new TextDecoder('utf-8', { fatal: true })

/**
 * Select-list entry reading a TEXT column as its stored bytes. The driver
 * returns TEXT cut at the first NUL; a BLOB comes back whole, so a value
 * written by an older version with a NUL in it can never pass for a shorter one.
 *
 * @example
 * await db.execute(`SELECT ${exactColumn('external_id')} FROM devices`)
 */
export function exactColumn(column: string): string {
  return `CAST(${column} AS BLOB) AS ${column}`
}

/**
 * Reads a column selected with {@link exactColumn} (or a plain TEXT column)
 * as a string, byte for byte; null for SQL NULL.
 *
 * @example
 * const externalId = exactText(result.rows[0], 'external_id')
 */
export function exactText(row: Row, column: string): string | null {
  const value = row[column]
  if (typeof value === 'string') return value
  if (value instanceof ArrayBuffer) return strictUtf8.decode(value)
  if (ArrayBuffer.isView(value)) return strictUtf8.decode(value)
  return null
}
