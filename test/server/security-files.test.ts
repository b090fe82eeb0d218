/**
 * Issue 9, items 5 and 9 (--db): the service's database is private to its
 * owner, link and device tokens are stored only as digests (also after
 * upgrading a database an older version wrote), and odd file names open the
 * file they name.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { createClient } from '@libsql/client'
import { describe, expect, it } from 'vitest'
import { createPusharyDevServer } from '../../src/server/dev-server.js'
import { isPusharyDevServerError } from '../../src/server/dev-server-error.js'
import { rejection } from '../helpers/errors.js'
import { startHarness, tempDir } from './service-harness.js'
import { enrollDevice, reviewGet, tapEnrollmentLink } from './support/devices.js'

const mode = (path: string) => statSync(path).mode & 0o777

/** Every byte of the database and its WAL, as text, to search for secrets. */
function fileBytes(dbPath: string): string {
  return ['', '-wal', '-shm']
    .filter((suffix) => existsSync(dbPath + suffix))
    .map((suffix) => readFileSync(dbPath + suffix).toString('latin1'))
    .join('\n')
}

describe('database files (item 5)', () => {
  it('creates the directory 0700 and the database, -wal and -shm 0600', async () => {
    const dir = join(tempDir('modes'), 'state', 'nested')
    const dbPath = join(dir, 'service.db')
    await (await createPusharyDevServer({ dbPath, port: 0 })).close()
    expect(mode(dir)).toBe(0o700)
    expect(mode(join(dir, '..'))).toBe(0o700)
    const h = await startHarness('modes-live', { dbPath })
    try {
      await h.client.decisions.create({ question: 'Write something so the WAL exists?' })
      const files = readdirSync(dir).filter((name) => name.startsWith('service.db'))
      expect(files.sort()).toEqual(['service.db', 'service.db-shm', 'service.db-wal'])
      for (const name of files) expect([name, mode(join(dir, name))]).toEqual([name, 0o600])
    } finally {
      await h.close()
    }
  })

  it('stores enrolment link tokens and device tokens only as digests', async () => {
    const h = await startHarness('hashed')
    try {
      const link = await h.client.enroll('customer_hashed')
      const unused = await h.client.enroll('customer_hashed')
      const device = await tapEnrollmentLink(link.universalLink)
      await h.client.decisions.create({ question: 'Checkpoint me?' })
      const bytes = fileBytes(h.dbPath)
      expect(bytes).not.toContain(link.token)
      expect(bytes).not.toContain(unused.token)
      expect(bytes).not.toContain(device.token)
      // The unused link still works: the lookup hashes what is presented.
      expect((await fetch(unused.universalLink)).status).toBe(200)
    } finally {
      await h.close()
    }
  })

  it('upgrades a database written by the previous version: tokens hashed, links still valid, files made private', async () => {
    const dir = tempDir('legacy')
    const dbPath = join(dir, 'legacy.db')
    // The previous version's schema: enrolment tokens in plain text, mode 0644.
    const legacy = createClient({ url: `file:${dbPath}` })
    const token = 'plainPlainPlainPlainPlain0123'
    await legacy.execute('PRAGMA journal_mode = WAL')
    await legacy.execute(`CREATE TABLE enrollments (
      token TEXT PRIMARY KEY, external_id TEXT NOT NULL, created_at TEXT NOT NULL,
      expires_at TEXT NOT NULL, consumed_at TEXT)`)
    await legacy.execute({
      sql: 'INSERT INTO enrollments (token, external_id, created_at, expires_at) VALUES (?, ?, ?, ?)',
      args: [
        token,
        'customer_legacy',
        new Date().toISOString(),
        new Date(Date.now() + 600_000).toISOString(),
      ],
    })
    legacy.close()
    expect(mode(dbPath)).toBe(0o644)

    const h = await startHarness('legacy-open', { dbPath })
    try {
      expect(mode(dbPath)).toBe(0o600)
      expect(fileBytes(dbPath)).not.toContain(token)
      const device = await tapEnrollmentLink(`${h.server.url}/e/${token}`)
      expect((await reviewGet(`${h.server.url}/review`, device.cookie)).text).toContain('customer_legacy')
    } finally {
      await h.close()
    }
    // And a restart on the upgraded file keeps the device and the key.
    const again = await startHarness('legacy-restart', { dbPath })
    try {
      expect((await again.client.reachability('customer_legacy')).deviceCount).toBe(1)
    } finally {
      await again.close()
    }
  })

  it('refuses a database written by a newer version instead of guessing', async () => {
    const dbPath = join(tempDir('newer'), 'newer.db')
    const db = createClient({ url: `file:${dbPath}` })
    await db.execute('PRAGMA user_version = 99')
    db.close()
    const error = await rejection(createPusharyDevServer({ dbPath, port: 0 }))
    expect(isPusharyDevServerError(error) && [error.code, error.field]).toEqual([
      'invalid_database',
      'dbPath',
    ])
  })
})

describe('--db file names (item 9)', () => {
  it.each(['d%41e.db', 'a#b.db', 'sp ace?.db'])('opens exactly the file named %s', async (name) => {
    const dir = tempDir('names')
    const h = await startHarness('names', { dbPath: join(dir, name) })
    try {
      await enrollDevice(h.client, 'customer_names')
      expect(readdirSync(dir).filter((file) => !file.endsWith('-wal') && !file.endsWith('-shm'))).toEqual([
        name,
      ])
    } finally {
      await h.close()
    }
  })
})
