/**
 * Enrolment links and bound devices. A link is single-use and short-lived; a
 * device is a browser holding a random cookie token, of which only the SHA-256
 * is stored, so a copy of the database cannot impersonate a reviewer.
 */
import { createHash, randomBytes } from 'node:crypto'
import type { Client } from '@libsql/client'

/** How long an enrolment link stays usable. */
export const ENROLLMENT_TTL_SECONDS = 900

/** Enrolment and device storage. */
export interface EnrollmentRepo {
  createEnrollment(externalId: string, nowMs: number): Promise<{ token: string; expiresInSeconds: number }>
  /** Marks the token consumed; null when unknown, already consumed or expired. */
  consumeEnrollment(token: string, nowMs: number): Promise<{ externalId: string } | null>
  /** Read-only: the customer of an unconsumed, unexpired token, else null. Never consumes. */
  peekEnrollment(token: string, nowMs: number): Promise<{ externalId: string } | null>
  registerDevice(externalId: string, nowMs: number): Promise<{ deviceToken: string }>
  deviceFromToken(deviceToken: string, nowMs: number): Promise<{ externalId: string } | null>
  deviceCount(externalId: string): Promise<number>
}

function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex')
}

/**
 * Creates the enrolment repository over an open service database.
 *
 * @example
 * const enrollments = createEnrollmentRepo(db)
 * const { token } = await enrollments.createEnrollment('customer-42', Date.now())
 */
export function createEnrollmentRepo(db: Client): EnrollmentRepo {
  return {
    async createEnrollment(externalId, nowMs) {
      const token = randomBytes(24).toString('base64url')
      await db.execute({
        sql: 'INSERT INTO enrollments (token, external_id, created_at, expires_at) VALUES (?, ?, ?, ?)',
        args: [
          token,
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
              WHERE token = ? AND consumed_at IS NULL AND expires_at > ?
              RETURNING external_id`,
        args: [now, token, now],
      })
      const externalId = result.rows[0]?.external_id
      return typeof externalId === 'string' ? { externalId } : null
    },

    async peekEnrollment(token, nowMs) {
      // A link preview (chat app, mail scanner) GETs the link before the person
      // does; only this read runs on GET, so the preview cannot burn the token.
      const result = await db.execute({
        sql: `SELECT external_id FROM enrollments
              WHERE token = ? AND consumed_at IS NULL AND expires_at > ?`,
        args: [token, new Date(nowMs).toISOString()],
      })
      const externalId = result.rows[0]?.external_id
      return typeof externalId === 'string' ? { externalId } : null
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
      const result = await db.execute({
        sql: 'UPDATE devices SET last_seen_at = ? WHERE token_hash = ? RETURNING external_id',
        args: [new Date(nowMs).toISOString(), hashToken(deviceToken)],
      })
      const externalId = result.rows[0]?.external_id
      return typeof externalId === 'string' ? { externalId } : null
    },

    async deviceCount(externalId) {
      const result = await db.execute({
        sql: 'SELECT count(*) AS n FROM devices WHERE external_id = ?',
        args: [externalId],
      })
      const n = result.rows[0]?.n
      return typeof n === 'number' ? n : typeof n === 'bigint' ? Number(n) : 0
    },
  }
}
