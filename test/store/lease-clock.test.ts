/**
 * Leases run on one clock, the store's (finding 5 of issue 37). A live
 * holder keeps its claim alive in one OS process; a recoverer in another
 * judges it. Only one process's clock is moved (a `Date` preload), never the
 * database's: a recoverer 120 s ahead, or a holder 120 s behind, must still
 * see a live claim as live and be refused (`busy`).
 */

import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { createPostgresReviewStore } from '../../src/store/postgres-store.js'
import type { PusharyReviewStore } from '../../src/store/review-store.js'
import { createSqliteReviewStore } from '../../src/store/sqlite-store.js'
import { nodeScript } from '../helpers/node-script.js'
import type { LeaseProcessConfig, RecovererReport } from './fixtures/lease-process.js'
import { childLines } from './support/child-lines.js'
import { dropSchema, ensurePostgres, uniqueSchema } from './support/postgres.js'
import { agentReview } from './support/reviews.js'

const LEASE_MS = 10_000
const SKEW_MS = 120_000
const LEASE_PROCESS = fileURLToPath(new URL('./fixtures/lease-process.ts', import.meta.url))
const CLOCK_OFFSET = fileURLToPath(new URL('./fixtures/clock-offset.mjs', import.meta.url))

function startLeaseProcess(config: LeaseProcessConfig, clockOffsetMs: number) {
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', CLOCK_OFFSET, ...nodeScript(LEASE_PROCESS), JSON.stringify(config)],
    {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, PUSHARY_TEST_CLOCK_OFFSET_MS: String(clockOffsetMs) },
    },
  )
  const lines = childLines(child, config.role)
  return {
    child,
    async line(): Promise<Record<string, unknown>> {
      return JSON.parse(await lines.next()) as Record<string, unknown>
    },
  }
}

interface Target {
  readonly store: PusharyReviewStore
  readonly config: LeaseProcessConfig['store']
}

/** Waits until the holder's keep-alive moved the claim's time at least once. */
async function beaten(store: PusharyReviewStore, decisionId: string): Promise<void> {
  const first = (await store.claimState(decisionId))?.since
  for (;;) {
    const claim = await store.claimState(decisionId)
    if (claim?.state !== 'resuming') throw new Error(`the claim ended early: ${claim?.state}`)
    if (claim.since !== first) return
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

async function judgeLiveClaim(target: Target, skew: { holder: number; recoverer: number }) {
  const review = agentReview()
  await target.store.save(review)
  const common = {
    store: target.config,
    decisionId: review.decisionId,
    runId: review.runId,
    leaseMs: LEASE_MS,
  }
  const holder = startLeaseProcess({ ...common, role: 'holder' }, skew.holder)
  try {
    expect(await holder.line()).toEqual({ claimed: true })
    await beaten(target.store, review.decisionId)

    const recoverer = startLeaseProcess({ ...common, role: 'recoverer' }, skew.recoverer)
    const report = (await recoverer.line()) as unknown as RecovererReport
    // The recoverer's clock was moved, and only its own.
    const read = report.clock - Date.now()
    expect(Math.abs(read - skew.recoverer)).toBeLessThan(SKEW_MS / 4)

    expect(report.elsewhere.status).toBe('busy')
    expect(report.takeover).toMatchObject({ status: 'busy', reason: expect.stringContaining('alive') })
  } finally {
    holder.child.stdin?.end('release\n')
  }
  expect(await holder.line()).toEqual({ finished: true })
  expect((await target.store.get(review.decisionId))?.state).toBe('completed')
  const events = (await target.store.history(review.decisionId)).map((entry) => entry.event)
  expect(events).toEqual([null, 'CLAIM', 'RESUMED'])
}

const targets: [string, () => Promise<Target & { close(): Promise<void> }>][] = [
  [
    'one SQLite file (one host, whose clock SQLite reads; only the process clock is moved)',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'pushary-lease-clock-'))
      const url = `file:${join(dir, 'reviews.db')}`
      const store = createSqliteReviewStore({ url })
      return {
        store,
        config: { kind: 'sqlite', url },
        async close() {
          await store.close()
          rmSync(dir, { recursive: true, force: true })
        },
      }
    },
  ],
  [
    'PostgreSQL (the server clock times every lease)',
    async () => {
      const server = await ensurePostgres()
      const { connectionString } = server
      const schema = uniqueSchema('leaseclock')
      const store = createPostgresReviewStore({ connectionString, schema })
      return {
        store,
        config: { kind: 'postgres', connectionString, schema },
        async close() {
          await store.close()
          await dropSchema(connectionString, schema)
          await server.stop()
        },
      }
    },
  ],
]

describe.each(targets)('claim leases on %s', (_name, open) => {
  const opened: (() => Promise<void>)[] = []
  afterAll(async () => {
    for (const close of opened) await close()
  })
  async function target(): Promise<Target> {
    const made = await open()
    opened.push(() => made.close())
    return made
  }

  it('refuses a recoverer whose clock runs 120 s ahead the live claim of a holder that keeps it alive', async () => {
    await judgeLiveClaim(await target(), { holder: 0, recoverer: SKEW_MS })
  }, 60_000)

  it('refuses a recoverer the live claim of a holder whose clock runs 120 s behind', async () => {
    await judgeLiveClaim(await target(), { holder: -SKEW_MS, recoverer: 0 })
  }, 60_000)
})
