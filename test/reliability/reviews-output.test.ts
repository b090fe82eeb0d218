/**
 * Issue 19, item 6: what `pushary-mastra reviews` prints is safe for a
 * terminal (stored text chosen by a model or a caller cannot rewrite the
 * screen, set the clipboard or forge a row), and the command never adds
 * review tables to a database that is not a review store.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createClient } from '@libsql/client'
import { beforeAll, describe, expect, it } from 'vitest'
import { createPusharyDevServer } from '../../src/server/dev-server.js'
import { createSqliteReviewStore } from '../../src/store/sqlite-store.js'
import { workflowReview } from '../store/support/reviews.js'
import { runCli } from './support/cli.js'

const ESC = '\u001b'
// Clears the screen, writes the clipboard (OSC 52), and a CR + newline that would forge a row.
const HOSTILE = `${ESC}[2J${ESC}]52;c;cm0gLXJmIH4=\u0007\r\ndec_forged  completed  workflow-step \u202Eevil\u009b31m`
// biome-ignore lint/suspicious/noControlCharactersInRegex: the test looks for exactly these characters
const UNSAFE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e]/

let dir: string
let db: string
let decisionId: string

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pushary-reviews-output-'))
  db = join(dir, 'reviews.db')
  const store = createSqliteReviewStore({ url: `file:${db}` })
  const review = workflowReview({ operationId: `op-${HOSTILE}` })
  decisionId = review.decisionId
  await store.save(review)
  await store.recordReceipt({ decisionId, receivedAt: new Date().toISOString(), body: `{"x":"${HOSTILE}"}` })
  await store.claim(decisionId, review.runId)
  await store.finish(decisionId, 'uncertain', `timed out ${HOSTILE}`)
  await store.close()
})

describe('reviews output is safe for a terminal', () => {
  it('escapes control and bidi characters in list and show, as text and as JSON', async () => {
    for (const args of [
      ['reviews', 'list', '--state', 'uncertain', '--db', db],
      ['reviews', 'list', '--state', 'uncertain', '--db', db, '--json'],
      ['reviews', 'show', decisionId, '--db', db],
      ['reviews', 'show', decisionId, '--db', db, '--json'],
    ]) {
      const { code, stdout } = await runCli(args)
      expect(code, args.join(' ')).toBe(0)
      expect(UNSAFE.test(stdout), args.join(' ')).toBe(false)
      expect(stdout, args.join(' ')).toContain('\\u001b[2J')
    }
    const listed = await runCli(['reviews', 'list', '--state', 'uncertain', '--db', db])
    // One review, one row: the stored newline cannot forge a second one.
    expect(listed.stdout.trim().split('\n')).toHaveLength(1)
  }, 120_000)

  it('refuses to list a database that is not a review store, and creates no tables in it', async () => {
    const serviceDb = join(dir, 'service.db')
    const server = await createPusharyDevServer({ dbPath: serviceDb, port: 0, onError: () => {} })
    await server.close()
    const tables = async () => {
      const client = createClient({ url: `file:${serviceDb}` })
      try {
        const result = await client.execute(
          "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name",
        )
        return result.rows.map((row) => String(row.name))
      } finally {
        client.close()
      }
    }
    const before = await tables()
    const { code, stderr } = await runCli(['reviews', 'list', '--db', serviceDb])
    expect(code).toBe(1)
    expect(stderr).toMatch(/not a review store/)
    expect(await tables()).toEqual(before)
    expect(before.some((name) => name.startsWith('pushary_review'))).toBe(false)
  }, 120_000)
})
