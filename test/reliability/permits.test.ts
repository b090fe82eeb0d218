/**
 * Permits as the service-side guarantee of one execution, with separate OS
 * processes (`fixtures/permit-host.ts`) against the local decision service:
 * - two hosts race one approved decision, one of them bypassing the shared
 *   PostgreSQL review store: the action runs once, the other host is refused
 *   by the permit (`already_consumed`);
 * - a host killed inside the protected step: `recover` settles the review from
 *   the permit's receipt without asking anyone, or, without a receipt, leaves
 *   it `uncertain` saying the action may have started.
 */
import { copyFileSync, existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPostgresReviewStore } from '../../src/store/postgres-store.js'
import { createSqliteReviewStore } from '../../src/store/sqlite-store.js'
import { createTestEnv, listEffects, type TestEnv, waitFor } from '../helpers/mastra.js'
import { dropSchema, ensurePostgres, type TestPostgres, uniqueSchema } from '../store/support/postgres.js'
import { killedPermitHost, permitHost, refundInput, type StartedPermitRun } from './support/permit-hosts.js'

describe('permits across hosts (PostgreSQL review store)', () => {
  let postgres: TestPostgres
  let schema: string
  let env: TestEnv
  let pgEnv: Record<string, string>

  beforeAll(async () => {
    postgres = await ensurePostgres()
    schema = uniqueSchema('permits')
    env = await createTestEnv('permit-race')
    pgEnv = { PUSHARY_TEST_PG_URL: postgres.connectionString, PUSHARY_TEST_PG_SCHEMA: schema }
  }, 120_000)

  afterAll(async () => {
    await env?.close()
    await dropSchema(postgres.connectionString, schema).catch(() => undefined)
    await postgres?.stop()
  })

  it('runs the approved refund once when a second host bypasses the store: the permit refuses it (already_consumed)', async () => {
    const started = (await permitHost(
      'start',
      env.dir,
      refundInput('o-race'),
      pgEnv,
    )) as unknown as StartedPermitRun
    expect(started.status).toBe('suspended')
    await env.client.decisions.answer(started.decisionId, 'yes')
    // The bypassing host has its own copy of the Mastra file (a replica taken
    // while the run was suspended) and no review store: nothing but the
    // service stands between it and a second refund.
    for (const suffix of ['', '-wal']) {
      const from = join(env.dir, `mastra.db${suffix}`)
      if (existsSync(from)) copyFileSync(from, join(env.dir, `mastra-b.db${suffix}`))
    }
    const go = join(env.dir, 'go')
    const ids = { decisionId: started.decisionId, runId: started.runId }
    const racing = Promise.all([
      permitHost('dispatch', env.dir, ids, { ...pgEnv, PUSHARY_TEST_GO: go, PUSHARY_TEST_HOST: 'shared' }),
      permitHost('bypass', env.dir, ids, {
        PUSHARY_TEST_GO: go,
        PUSHARY_TEST_HOST: 'bypass',
        PUSHARY_TEST_MASTRA_FILE: 'mastra-b.db',
      }),
    ])
    await waitFor(
      async () => (existsSync(`${go}.shared.ready`) && existsSync(`${go}.bypass.ready`) ? true : undefined),
      60_000,
    )
    writeFileSync(go, '')
    const [shared, bypass] = await racing

    const effects = await listEffects(env.dir)
    expect(effects).toHaveLength(1)
    const winner = effects[0]?.kind === 'refund:shared' ? shared : bypass
    const loser = winner === shared ? bypass : shared
    expect(winner.result).toMatchObject({ refunded: true })
    expect(loser.result).toMatchObject({
      outcome: 'refused',
      refusal: 'already_consumed',
      decisionId: started.decisionId,
    })
    // The shared host ends from the permit's evidence. When it lost, the
    // bypass may still have been running the refund when it asked: the permit
    // was spent without a receipt yet, which is `uncertain` (the operator
    // confirms it), never `completed` on a guess.
    const store = createPostgresReviewStore({ connectionString: postgres.connectionString, schema })
    try {
      const review = await store.get(started.decisionId)
      const action = await store.actionOf(started.decisionId)
      if (winner === shared || shared.status === 'resumed') {
        expect(shared.status).toBe('resumed')
        expect(review?.state).toBe('completed')
        expect(action?.outcome).toBe('ran')
      } else {
        expect(shared).toMatchObject({ status: 'uncertain', reasonCode: 'permit_without_receipt' })
        expect(review?.state).toBe('uncertain')
        expect(action?.outcome).toBe('unknown')
      }
      // The shared host keeps its permit on the review only when it won.
      const permit = await store.permitOf(started.decisionId)
      if (winner === shared)
        expect(permit?.action).toMatchObject({ toolName: 'refund.create', externalId: 'customer_1' })
      else expect(permit).toBeNull()
    } finally {
      await store.close()
    }
  }, 180_000)
})

describe('recover with permit evidence after SIGKILL inside the protected step (SQLite review store)', () => {
  let env: TestEnv

  beforeAll(async () => {
    env = await createTestEnv('permit-crash')
  }, 60_000)

  afterAll(async () => {
    await env?.close()
  })

  async function crashAfterApproval(orderId: string, crash: string) {
    const started = (await permitHost('start', env.dir, refundInput(orderId))) as unknown as StartedPermitRun
    expect(started.status).toBe('suspended')
    await env.client.decisions.answer(started.decisionId, 'yes')
    const signal = await killedPermitHost('dispatch', env.dir, started, { PUSHARY_TEST_CRASH: crash })
    expect(signal).toBe('SIGKILL')
    return started
  }

  it('settles the review from the recorded receipt, without asking anyone, after a kill right after the receipt', async () => {
    const started = await crashAfterApproval('o-receipt', 'after-receipt')
    const store = createSqliteReviewStore({ url: `file:${join(env.dir, 'reviews.db')}` })
    try {
      expect((await store.get(started.decisionId))?.state).toBe('resuming')
      const recovered = await permitHost('recover', env.dir, started)
      expect(recovered).toMatchObject({ status: 'duplicate', reasonCode: 'permit_receipt' })
      expect(String(recovered.reason)).toMatch(/receipt.*succeeded/)
      expect((await store.get(started.decisionId))?.state).toBe('completed')
      const last = (await store.history(started.decisionId)).at(-1)
      expect(last).toMatchObject({ to: 'completed', event: 'RESUMED' })
      // Nobody was asked again: the only decision is the one the run asked.
      const { decisions } = await env.client.decisions.list({ externalId: 'customer_1' })
      expect(decisions.filter((d) => d.question === 'Refund order o-receipt?')).toHaveLength(1)
    } finally {
      await store.close()
    }
    expect((await listEffects(env.dir)).filter((e) => e.key === started.runId)).toHaveLength(1)
  }, 180_000)

  it('leaves the review uncertain, saying the action may have started, after a kill inside the action (no receipt)', async () => {
    const started = await crashAfterApproval('o-no-receipt', 'in-action')
    const recovered = await permitHost('recover', env.dir, started)
    expect(recovered).toMatchObject({ status: 'uncertain', reasonCode: 'permit_without_receipt' })
    expect(String(recovered.reason)).toMatch(/no receipt was recorded: the action may have started/)
    const store = createSqliteReviewStore({ url: `file:${join(env.dir, 'reviews.db')}` })
    try {
      expect((await store.get(started.decisionId))?.state).toBe('uncertain')
      // A second recover reads the same evidence and still does not guess.
      const again = await permitHost('recover', env.dir, started)
      expect(again).toMatchObject({ status: 'uncertain', reasonCode: 'permit_without_receipt' })
      expect((await store.get(started.decisionId))?.state).toBe('uncertain')
    } finally {
      await store.close()
    }
    expect((await listEffects(env.dir)).filter((e) => e.key === started.runId)).toHaveLength(0)
  }, 180_000)
})
