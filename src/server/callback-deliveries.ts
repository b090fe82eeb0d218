/**
 * The recorded deliveries of one decision, as `GET /decisions/:id` and
 * `deliveries list` report them: each callback row with its attempt history,
 * URLs redacted.
 */
import type { Client } from '@libsql/client'
import { numberOf, redactUrl, textOf } from './callback-attempt.js'

/**
 * One delivery as `GET /decisions/:id` reports it.
 *
 * @example
 * const failed = deliveries.filter((delivery: CallbackDelivery) => delivery.state === 'failed')
 */
export interface CallbackDelivery {
  deliveryId: number
  event: string
  url: string
  state: 'pending' | 'delivered' | 'failed'
  attempts: number
  nextAttemptAt: string | null
  lastAttemptAt: string | null
  lastStatusCode: number | null
  lastError: string | null
  deliveredAt: string | null
  history: Array<{
    attempt: number
    at: string
    statusCode: number | null
    error: string | null
    ok: boolean
  }>
}

/**
 * Reads every delivery of `decisionId`, oldest first.
 *
 * @example
 * const deliveries = await readDeliveries(db, 'dec_1')
 */
export async function readDeliveries(db: Client, decisionId: string): Promise<CallbackDelivery[]> {
  const rows = await db.execute({
    sql: 'SELECT * FROM callback_deliveries WHERE decision_id = ? ORDER BY delivery_id ASC',
    args: [decisionId],
  })
  const deliveries: CallbackDelivery[] = []
  for (const row of rows.rows) {
    const deliveryId = numberOf(row, 'delivery_id') ?? 0
    const attempts = await db.execute({
      sql: 'SELECT * FROM callback_attempts WHERE delivery_id = ? ORDER BY attempt ASC',
      args: [deliveryId],
    })
    const state = textOf(row, 'state') as CallbackDelivery['state']
    deliveries.push({
      deliveryId,
      event: textOf(row, 'event') ?? '',
      url: redactUrl(textOf(row, 'url') ?? ''),
      state,
      attempts: numberOf(row, 'attempts') ?? 0,
      nextAttemptAt:
        state === 'pending' ? new Date(numberOf(row, 'next_attempt_ms') ?? 0).toISOString() : null,
      lastAttemptAt: textOf(row, 'last_attempt_at'),
      lastStatusCode: numberOf(row, 'last_status_code'),
      lastError: textOf(row, 'last_error'),
      deliveredAt: textOf(row, 'delivered_at'),
      history: attempts.rows.map((a) => ({
        attempt: numberOf(a, 'attempt') ?? 0,
        at: textOf(a, 'at') ?? '',
        statusCode: numberOf(a, 'status_code'),
        error: textOf(a, 'error'),
        ok: numberOf(a, 'ok') === 1,
      })),
    })
  }
  return deliveries
}
