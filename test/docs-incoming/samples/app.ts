/**
 * The application behind the helper samples (docs/_incoming/helpers.md): what
 * the samples name but leave to the application, backed by real parts. The
 * local decision service's URL and key arrive in PUSHARY_BASE_URL /
 * PUSHARY_API_KEY and the scratch directory in HELPERS_SAMPLES_DIR, set by
 * the test before this module loads. What the samples did is recorded in `seen`.
 */
import { join } from 'node:path'

const dir = process.env.HELPERS_SAMPLES_DIR!

/** Files your deployment owns: Mastra's storage and the review store. */
export const mastraUrl = `file:${join(dir, 'helpers-mastra.db')}`
export const reviewsUrl = `file:${join(dir, 'helpers-reviews.db')}`

export const seen = {
  told: [] as string[],
  refunds: [] as { orderId: string; amountMinor: number; permitId: string }[],
}

/** Your notification channel (chat, e-mail, a ticket). */
export async function notifyOps(message: string): Promise<void> {
  seen.told.push(message)
}

/** Your payment provider; the permit ID doubles as its idempotency key. */
export const payments = {
  async refund(orderId: string, amountMinor: number, idempotencyKey: string): Promise<string> {
    seen.refunds.push({ orderId, amountMinor, permitId: idempotencyKey })
    return `refund_${orderId}`
  },
}
