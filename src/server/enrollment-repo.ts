/**
 * Enrolment links and bound devices. A link is single-use and short-lived; a
 * device is a browser holding a random cookie token. Only SHA-256 digests of
 * link tokens and device tokens are stored, so a copy of the database can
 * neither enrol a new device nor impersonate a reviewer.
 *
 * Customer IDs are read back as their stored bytes and must still be
 * storable text: a value that would come back different from what was
 * written (a NUL written by an older version) never names a device.
 */
import { createHash, randomBytes } from 'node:crypto'
import type { Client, Row } from '@libsql/client'
import { isStorableText } from '../pushary/text-rules.js'
import { exactColumn, exactText } from './exact-text.js'

/** How long an enrolment link stays usable. */
export const ENROLLMENT_TTL_SECONDS = 900

/** A device unused for this long stops working (the cookie's own lifetime). */
export const DEVICE_IDLE_TTL_SECONDS = 180 * 24 * 60 * 60

/** A bound device as `pushary-mastra devices list` shows it. */
export interface DeviceInfo {
  /** Public handle: a prefix of the token's digest, never the token. */
  deviceId: string
  externalId: string
  createdAt: string
  lastSeenAt: string
}

/** Enrolment and device storage. */
export interface EnrollmentRepo {
  createEnrollment(externalId: string, nowMs: number): Promise<{ token: string; expiresInSeconds: number }>
  /** Marks the token consumed; null when unknown, already consumed or expired. */
  consumeEnrollment(token: string, nowMs: number): Promise<{ externalId: string } | null>
  /** Read-only: the customer of an unconsumed, unexpired token, else null. Never consumes. */
  peekEnrollment(token: string, nowMs: number): Promise<{ externalId: string } | null>
  registerDevice(externalId: string, nowMs: number): Promise<{ deviceToken: string }>
  /** The device's customer; null when unknown, revoked or idle longer than {@link DEVICE_IDLE_TTL_SECONDS}. */
  deviceFromToken(
    deviceToken: string,
    nowMs: number,
  ): Promise<{ externalId: string; deviceId: string } | null>
  deviceCount(externalId: string, nowMs: number): Promise<number>
  listDevices(filter?: { externalId?: string }): Promise<DeviceInfo[]>
  /** Removes the one device whose id starts with `deviceIdPrefix` (at least 8 hex characters). */
  revokeDevice(deviceIdPrefix: string): Promise<'revoked' | 'not_found' | 'ambiguous'>
  /** Removes every device of one customer; returns how many. */
  revokeDevicesOf(externalId: string): Promise<number>
}

/**
 * SHA-256 (hex) of a link or device token: what the database keeps.
 *
 * @example
 * const stored = hashToken(deviceToken)
 */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex')
}

const DEVICE_ID_LENGTH = 16
const CUSTOMER = exactColumn('external_id')

function storedCustomer(row: Row | undefined): string | null {
  if (row === undefined) return null
  let text: string | null
  try {
    text = exactText(row, 'external_id')
  } catch {
    return null
  }
  return text !== null && text.trim() !== '' && isStorableText(text) ? text : null
}

/**
 * Creates the enrolment repository over an open service database.
 *
 * @example
 * const enrollments = createEnrollmentRepo(db)
 * const { token } = await enrollments.createEnrollment('customer-42', Date.now())
 */
export function createEnrollmentRepo(db: Client): EnrollmentRepo {
  const idleCutoff = (nowMs: number) => new Date(nowMs - DEVICE_IDLE_TTL_SECONDS * 1000).toISOString()

  return {
    async createEnrollment(externalId, nowMs) {
      const token = randomBytes(24).toString('base64url')
      await db.execute({
        sql: 'INSERT INTO enrollments (token_hash, external_id, created_at, expires_at) VALUES (?, ?, ?, ?)',
        args: [
          hashToken(token),
          externalId,
          new Date(nowMs).toISOString(),
          new Date(nowMs + ENROLLMENT_TTL_SECONDS * 1000).toISOString(),
        ],
      })
      return { token, expiresInSeconds: ENROLLMENT_TTL_SECONDS }
    },

    async consumeEnrollment(token, nowMs) {
      const now = new Date(nowMs).toISOString()
      // One conditional UPDATE is the single-use guarantee: two devices opening
      // the same link at once cannot both bind.
      const result = await db.execute({
        sql: `UPDATE enrollments SET consumed_at = ?
              WHERE token_hash = ? AND consumed_at IS NULL AND expires_at > ?
              RETURNING ${CUSTOMER}`,
        args: [now, hashToken(token), now],
      })
      const externalId = storedCustomer(result.rows[0])
      return externalId === null ? null : { externalId }
    },

    async peekEnrollment(token, nowMs) {
      // A link preview (chat app, mail scanner) GETs the link before the person
      // does; only this read runs on GET, so the preview cannot burn the token.
      const result = await db.execute({
        sql: `SELECT ${CUSTOMER} FROM enrollments
              WHERE token_hash = ? AND consumed_at IS NULL AND expires_at > ?`,
        args: [hashToken(token), new Date(nowMs).toISOString()],
      })
      const externalId = storedCustomer(result.rows[0])
      return externalId === null ? null : { externalId }
    },

    async registerDevice(externalId, nowMs) {
      const deviceToken = randomBytes(32).toString('base64url')
      const now = new Date(nowMs).toISOString()
      await db.execute({
        sql: 'INSERT INTO devices (token_hash, external_id, created_at, last_seen_at) VALUES (?, ?, ?, ?)',
        args: [hashToken(deviceToken), externalId, now, now],
      })
      return { deviceToken }
    },

    async deviceFromToken(deviceToken, nowMs) {
      const tokenHash = hashToken(deviceToken)
      const result = await db.execute({
        sql: `UPDATE devices SET last_seen_at = ? WHERE token_hash = ? AND last_seen_at > ?
              RETURNING ${CUSTOMER}`,
        args: [new Date(nowMs).toISOString(), tokenHash, idleCutoff(nowMs)],
      })
      const externalId = storedCustomer(result.rows[0])
      return externalId === null ? null : { externalId, deviceId: tokenHash.slice(0, DEVICE_ID_LENGTH) }
    },

    async deviceCount(externalId, nowMs) {
      const result = await db.execute({
        sql: 'SELECT count(*) AS n FROM devices WHERE external_id = ? AND last_seen_at > ?',
        args: [externalId, idleCutoff(nowMs)],
      })
      const n = result.rows[0]?.n
      return typeof n === 'number' ? n : typeof n === 'bigint' ? Number(n) : 0
    },

    async listDevices(filter = {}) {
      const result = await db.execute({
        sql: `SELECT token_hash, ${CUSTOMER}, created_at, last_seen_at FROM devices
              ${filter.externalId === undefined ? '' : 'WHERE external_id = ?'}
              ORDER BY created_at ASC, token_hash ASC`,
        args: filter.externalId === undefined ? [] : [filter.externalId],
      })
      return result.rows.map((row) => {
        const value = row.external_id
        return {
          deviceId: String(row.token_hash).slice(0, DEVICE_ID_LENGTH),
          // Listing shows even a damaged customer ID (lossily) so the operator can revoke it.
          externalId:
            value instanceof ArrayBuffer ? Buffer.from(value).toString('utf8') : String(value ?? ''),
          createdAt: String(row.created_at),
          lastSeenAt: String(row.last_seen_at),
        }
      })
    },

    async revokeDevice(deviceIdPrefix) {
      if (!/^[0-9a-f]{8,64}$/.test(deviceIdPrefix)) return 'not_found'
      const matches = await db.execute({
        sql: 'SELECT token_hash FROM devices WHERE substr(token_hash, 1, ?) = ? LIMIT 2',
        args: [deviceIdPrefix.length, deviceIdPrefix],
      })
      // An ambiguous prefix revokes nothing rather than more than was meant.
      if (matches.rows.length === 0) return 'not_found'
      if (matches.rows.length > 1) return 'ambiguous'
      await db.execute({
        sql: 'DELETE FROM devices WHERE token_hash = ?',
        args: [String(matches.rows[0]?.token_hash)],
      })
      return 'revoked'
    },

    async revokeDevicesOf(externalId) {
      const result = await db.execute({
        sql: 'DELETE FROM devices WHERE external_id = ?',
        args: [externalId],
      })
      return result.rowsAffected
    },
  }
}
