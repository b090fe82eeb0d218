/**
 * Upgrading a version-3 service file to version 4 (who asked, who received
 * each approval link), on a real SQLite file reopened by a new service: a
 * decision created before keeps replaying for the site key, and an approval
 * link issued before (its holder unknown) is refused rather than trusted.
 */
import { pathToFileURL } from 'node:url'
import { createClient } from '@libsql/client'
import { describe, expect, it } from 'vitest'
import { SERVICE_SCHEMA_VERSION } from '../../src/server/migrations.js'
import { startHarness } from './service-harness.js'

describe('schema version 4', () => {
  it('upgrades a version-3 file: old decisions still replay, old approval links no longer answer', async () => {
    const first = await startHarness('schema-v4-upgrade')
    const body = { question: 'Refund EUR 48?', externalId: 'customer_a', idempotencyKey: 'refund-48' }
    const created = await first.client.decisions.create({ ...body, approvalUrl: true })
    const linkPath = new URL(created.approvalUrl ?? '').pathname
    await first.close()

    // Make the file what version 3 wrote: no asked_by, no issued_to.
    const db = createClient({ url: pathToFileURL(first.dbPath).href })
    await db.execute('ALTER TABLE decisions DROP COLUMN asked_by')
    await db.execute('ALTER TABLE approval_links DROP COLUMN issued_to')
    await db.execute('PRAGMA user_version = 3')
    db.close()

    const h = await startHarness('schema-v4-upgrade', { dbPath: first.dbPath })
    try {
      const replayed = await h.client.decisions.create(body)
      expect(replayed).toMatchObject({ decisionId: created.decisionId, idempotent: true })
      const tapped = await fetch(`${h.server.url}${linkPath}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ answer: 'yes' }).toString(),
      })
      expect(tapped.status).toBe(403)
      expect(await h.client.decisions.get(created.decisionId)).toMatchObject({ status: 'pending' })
      const check = createClient({ url: pathToFileURL(first.dbPath).href })
      const version = await check.execute('PRAGMA user_version')
      check.close()
      expect(Number(version.rows[0]?.user_version)).toBe(SERVICE_SCHEMA_VERSION)
      expect(SERVICE_SCHEMA_VERSION).toBe(4)
    } finally {
      await h.close()
    }
  })
})
