/**
 * A statement that met a file locked by another process must not spoil the
 * SQLite store's connection. libsql leaves such a statement running inside
 * SQLite until it is garbage-collected, and every later write on that
 * connection then reports its rows without committing them, holding the
 * file's write lock until the connection is freed (findings 7 and 8 of
 * issue 37). Here another OS process holds the write lock while a burst of
 * claims arrives and lets go in the middle of it.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { createClient } from '@libsql/client'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { PusharyReviewStore } from '../../src/store/review-store.js'
import { createSqliteReviewStore } from '../../src/store/sqlite-store.js'
import { agentReview } from './support/reviews.js'

const CLAIMS = 200

// Takes the file's write lock, says so, and commits a moment after it is told to.
const LOCK_HOLDER = `
const Database = require('libsql')
const db = new Database(process.argv[1], { timeout: 5000 })
db.exec('BEGIN IMMEDIATE')
process.stdout.write('locked\\n')
process.stdin.once('data', () =>
  setTimeout(() => {
    db.exec('COMMIT')
    db.close()
    process.stdout.write('released\\n')
    process.exit(0)
  }, 100),
)
`

let dir: string
let path: string
let store: PusharyReviewStore

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'pushary-busy-connection-'))
  path = join(dir, 'reviews.db')
  store = createSqliteReviewStore({ url: `file:${path}` })
})

afterEach(async () => {
  await store.close()
  rmSync(dir, { recursive: true, force: true })
})

function holdWriteLock(): { child: ChildProcess; said(word: string): Promise<void> } {
  const child = spawn(process.execPath, ['-e', LOCK_HOLDER, path], {
    cwd: process.cwd(),
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  const heard = new Set<string>()
  const waiting = new Map<string, () => void>()
  createInterface({ input: child.stdout! }).on('line', (line) => {
    heard.add(line)
    waiting.get(line)?.()
  })
  return {
    child,
    said: (word) =>
      new Promise<void>((resolve, reject) => {
        if (heard.has(word)) resolve()
        else waiting.set(word, resolve)
        child.once('exit', () =>
          heard.has(word) ? resolve() : reject(new Error(`lock holder exited before "${word}"`)),
        )
      }),
  }
}

describe('a SQLite store whose claims met a locked file', () => {
  it('completes every claim within its busy budget, answers claimed exactly for the claims the file kept, and leaves the file unlocked', async () => {
    const reviews = Array.from({ length: CLAIMS }, () => agentReview())
    for (const review of reviews) await store.save(review)

    const holder = holdWriteLock()
    await holder.said('locked')
    // The holder lets go while the burst is still being worked through: the
    // claims ahead met the lock, the ones behind them find the file free.
    holder.child.stdin?.write('go\n')
    const answers = reviews.map((review) => store.claim(review.decisionId, review.runId))
    const results = await Promise.all(answers)
    await holder.said('released')

    const reader = createSqliteReviewStore({ url: `file:${path}` })
    try {
      const kept: string[] = []
      for (const review of reviews) {
        const history = await reader.history(review.decisionId)
        if (history.some((entry) => entry.event === 'CLAIM')) kept.push(review.decisionId)
      }
      const claimed = reviews.filter((_, index) => results[index] === 'claimed').map((r) => r.decisionId)
      expect({ claimed: claimed.length, kept: kept.length }).toEqual({ claimed: CLAIMS, kept: CLAIMS })
      expect(claimed).toEqual(kept)
    } finally {
      await reader.close()
    }

    // Nothing of the store holds the write lock now: a writer that does not wait gets it at once.
    const other = createClient({ url: `file:${path}`, timeout: 0 })
    try {
      const tx = await other.transaction('write')
      await tx.commit()
    } finally {
      other.close()
    }
  }, 60_000)
})
