// docs/operations.md "Review numbers", as written. Added before the sample: the
// imports, the app's review store and a metrics client it names (here one that
// keeps the last value of each gauge); after it, the exports.
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import { createSqliteReviewStore, readPusharyReviewStats } from '@pushary/mastra'

const store = createSqliteReviewStore({
  url: `file:${join(process.env.README_SAMPLES_DIR!, `stats-${randomUUID()}-reviews.db`)}`,
})
const gauges = new Map<string, number>()
const metrics = { gauge: (name: string, value: number) => void gauges.set(name, value) }

// --- sample ---
const stats = await readPusharyReviewStats(store, { since: new Date(Date.now() - 3_600_000) })
metrics.gauge('pushary_pending', stats.pending.count)
metrics.gauge('pushary_oldest_pending_ms', stats.pending.oldestAgeMs ?? 0)
metrics.gauge('pushary_uncertain', stats.uncertain)
// --- end of sample ---

export { gauges, store }
