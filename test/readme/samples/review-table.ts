/**
 * An application's own agent-review store, as the README's "Durable store
 * and recovery contract" describes it: four operations over one SQLite table
 * of its own, nothing from the package but the record schema. Claims are
 * conditional updates inside one write transaction, so several processes
 * sharing the file get exactly one winner.
 */
import { createClient } from '@libsql/client'
import { type PusharyAgentReview, pusharyAgentReviewSchema } from '@pushary/mastra'

type State = PusharyAgentReview['state']

export function createReviewTable(url: string) {
  const db = createClient({ url })
  const ready = (async () => {
    await db.execute('PRAGMA busy_timeout = 10000')
    await db.execute(
      `CREATE TABLE IF NOT EXISTS app_agent_reviews (
         decision_id TEXT PRIMARY KEY,
         run_id TEXT NOT NULL,
         binding TEXT NOT NULL,
         state TEXT NOT NULL,
         reason TEXT
       )`,
    )
  })()

  /** The immutable part of a record, compared on a repeated save. */
  function bindingOf(review: PusharyAgentReview): string {
    const { state: _state, ...binding } = review
    return JSON.stringify(binding)
  }

  return {
    /** The rows the test inspects: state and reason. */
    async row(decisionId: string): Promise<{ state: State; reason: string | null } | null> {
      await ready
      const { rows } = await db.execute({
        sql: 'SELECT state, reason FROM app_agent_reviews WHERE decision_id = ?',
        args: [decisionId],
      })
      const row = rows[0]
      return row
        ? { state: String(row.state) as State, reason: row.reason === null ? null : String(row.reason) }
        : null
    },

    async save(review: PusharyAgentReview): Promise<void> {
      await ready
      const record = pusharyAgentReviewSchema.parse(review)
      const binding = bindingOf(record)
      await db.execute({
        sql: `INSERT INTO app_agent_reviews (decision_id, run_id, binding, state) VALUES (?, ?, ?, 'pending')
              ON CONFLICT (decision_id) DO NOTHING`,
        args: [record.decisionId, record.runId, binding],
      })
      const { rows } = await db.execute({
        sql: 'SELECT binding FROM app_agent_reviews WHERE decision_id = ?',
        args: [record.decisionId],
      })
      if (String(rows[0]?.binding) !== binding)
        throw new Error('conflicting review identity for this decision')
    },

    async get(decisionId: string): Promise<PusharyAgentReview | null> {
      await ready
      const { rows } = await db.execute({
        sql: 'SELECT binding, state FROM app_agent_reviews WHERE decision_id = ?',
        args: [decisionId],
      })
      const row = rows[0]
      if (!row) return null
      return pusharyAgentReviewSchema.parse({ ...JSON.parse(String(row.binding)), state: String(row.state) })
    },

    async claim(decisionId: string, runId: string): Promise<'claimed' | 'busy' | 'settled'> {
      await ready
      const tx = await db.transaction('write')
      try {
        const busy = await tx.execute({
          sql: `SELECT 1 FROM app_agent_reviews WHERE run_id = ? AND state IN ('resuming', 'uncertain') LIMIT 1`,
          args: [runId],
        })
        if (busy.rows.length > 0) {
          await tx.rollback()
          return 'busy'
        }
        const claimed = await tx.execute({
          sql: `UPDATE app_agent_reviews SET state = 'resuming' WHERE decision_id = ? AND state = 'pending'`,
          args: [decisionId],
        })
        await tx.commit()
        return claimed.rowsAffected === 1 ? 'claimed' : 'settled'
      } catch (error) {
        await tx.rollback().catch(() => {})
        throw error
      } finally {
        tx.close()
      }
    },

    async finish(
      decisionId: string,
      state: 'pending' | 'completed' | 'stale' | 'uncertain',
      reason?: string,
    ) {
      await ready
      const done = await db.execute({
        sql: `UPDATE app_agent_reviews SET state = ?, reason = ? WHERE decision_id = ? AND state = 'resuming'`,
        args: [state, reason ?? null, decisionId],
      })
      if (done.rowsAffected !== 1) throw new Error(`review ${decisionId} is not claimed`)
    },

    close(): void {
      db.close()
    },
  }
}
