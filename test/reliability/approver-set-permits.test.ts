/**
 * Issue 41: the permit after several approvers, across hosts. Separate OS
 * processes (`fixtures/permit-host.ts`) against the local decision service: a
 * 2-of-3 set is settled by two hosts racing the second approval, one through
 * the shared review store and the dispatcher, the other bypassing the store
 * on its own copy of the Mastra file. Each host's approval step re-reads the
 * set from the service and settles it on the same decisive approval, so both
 * present the same permit: the payment runs once and the other host is
 * refused (`already_consumed`), naming the decision and the set.
 */
import { copyFileSync, existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PusharyWorkflowReview } from '../../src/store/review-schema.js'
import { createSqliteReviewStore } from '../../src/store/sqlite-store.js'
import { createTestEnv, listEffects, type TestEnv, waitFor } from '../helpers/mastra.js'
import { permitHost, type StartedPermitRun } from './support/permit-hosts.js'

describe('the permit of a 2-of-3 set across hosts (SQLite review store)', () => {
  let env: TestEnv

  beforeAll(async () => {
    env = await createTestEnv('approver-set-permit-race')
  }, 60_000)

  afterAll(async () => {
    await env?.close()
  })

  it('runs the refund once when a second host settles the same set: the permit refuses it (already_consumed)', async () => {
    const started = (await permitHost('start', env.dir, {
      operationId: 'refund:o-set:v1',
      question: 'Refund order o-set?',
      approvers: { externalIds: ['alice_h', 'bob_h', 'carol_h'], required: 2 },
      subject: { toolName: 'refund.create', toolTarget: 'order o-set', parameters: { amountMinor: 4800 } },
    })) as unknown as StartedPermitRun
    expect(started.status).toBe('suspended')
    const store = createSqliteReviewStore({ url: `file:${join(env.dir, 'reviews.db')}` })
    try {
      const members = (await store.listByState('pending', { limit: 100 })).filter(
        (review): review is PusharyWorkflowReview => review.runId === started.runId,
      )
      const id = (externalId: string) =>
        members.find((member) => member.externalId === externalId)?.decisionId as string
      expect(members).toHaveLength(3)

      // Alice's approval is applied by the shared host; the run waits on bob and carol.
      await env.client.decisions.answer(id('alice_h'), 'yes')
      const first = await permitHost('dispatch', env.dir, { decisionId: id('alice_h'), runId: started.runId })
      expect(first).toMatchObject({ status: 'resumed', run: 'suspended' })
      // The bypassing host's replica of the Mastra file, taken while the run waits.
      for (const suffix of ['', '-wal']) {
        const from = join(env.dir, `mastra.db${suffix}`)
        if (existsSync(from)) copyFileSync(from, join(env.dir, `mastra-b.db${suffix}`))
      }

      await env.client.decisions.answer(id('bob_h'), 'yes')
      const go = join(env.dir, 'go')
      const racing = Promise.all([
        permitHost(
          'dispatch',
          env.dir,
          { decisionId: id('bob_h'), runId: started.runId },
          { PUSHARY_TEST_GO: go, PUSHARY_TEST_HOST: 'shared' },
        ),
        // Resumed under carol's label: its step still reads the whole set.
        permitHost(
          'bypass',
          env.dir,
          { decisionId: id('carol_h'), runId: started.runId },
          { PUSHARY_TEST_GO: go, PUSHARY_TEST_HOST: 'bypass', PUSHARY_TEST_MASTRA_FILE: 'mastra-b.db' },
        ),
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
      const settledBy = [id('alice_h'), id('bob_h')]
      expect(loser.result).toMatchObject({
        outcome: 'refused',
        refusal: 'already_consumed',
        decisionId: id('bob_h'),
        settledBy,
      })
      // The shared host keeps the permit, with the set, on bob's review only when it won.
      const permit = await store.permitOf(id('bob_h'))
      if (winner === shared) {
        expect(permit).toMatchObject({ action: { externalId: 'bob_h' }, settledBy })
      } else expect(permit).toBeNull()
      expect(await store.permitOf(id('alice_h'))).toBeNull()
      expect(await store.permitOf(id('carol_h'))).toBeNull()
    } finally {
      await store.close()
    }
  }, 180_000)
})
