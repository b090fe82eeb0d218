/**
 * Issue 41: the permit evidence when a set's review is recovered through a
 * member that is not the decisive one. Separate OS processes
 * (`fixtures/permit-host.ts`) against the local decision service, a 2-of-3
 * set in front of `withPusharyPermit(refund)`. Alice and bob both approve
 * before anyone resumes; alice's resume reads both answers and settles the
 * set, so the permit is spent on bob's decision (the approval that reached
 * the quorum) while alice's review is the one that ends the run's resume.
 * Whatever alice's review ends with is read from bob's permit: its receipt,
 * not the run's status.
 */
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PusharyWorkflowReview } from '../../src/store/review-schema.js'
import type { PusharyReviewStore } from '../../src/store/review-store.js'
import { createSqliteReviewStore } from '../../src/store/sqlite-store.js'
import { createTestEnv, listEffects, type TestEnv } from '../helpers/mastra.js'
import { killedPermitHost, permitHost, type StartedPermitRun } from './support/permit-hosts.js'

let env: TestEnv
let store: PusharyReviewStore

beforeAll(async () => {
  env = await createTestEnv('approver-set-permit-recovery')
  store = createSqliteReviewStore({ url: `file:${join(env.dir, 'reviews.db')}` })
}, 60_000)

afterAll(async () => {
  await store?.close()
  await env?.close()
})

/** Starts a 2-of-3 refund; alice, then bob, approve. Returns the run and each member's decision. */
async function bothApproved(order: string) {
  const names = ['alice', 'bob', 'carol'].map((name) => `${name}_${order}`)
  const started = (await permitHost('start', env.dir, {
    operationId: `refund:${order}:v1`,
    question: `Refund order ${order}?`,
    approvers: { externalIds: names, required: 2 },
    subject: { toolName: 'refund.create', toolTarget: `order ${order}`, parameters: { amountMinor: 4800 } },
  })) as unknown as StartedPermitRun
  expect(started.status).toBe('suspended')
  const members = (await store.listByState('pending', { limit: 1000 })).filter(
    (review): review is PusharyWorkflowReview => review.runId === started.runId,
  )
  expect(members).toHaveLength(3)
  const [alice, bob, carol] = names.map(
    (name) => members.find((member) => member.externalId === name)?.decisionId as string,
  ) as [string, string, string]
  await env.client.decisions.answer(alice, 'yes')
  await env.client.decisions.answer(bob, 'yes')
  return { runId: started.runId, alice, bob, carol }
}

/** The refunds this run made (the action writes its run ID). */
async function refundsOf(runId: string) {
  return (await listEffects(env.dir)).filter((effect) => effect.key === runId)
}

async function actionsOf(ids: string[]) {
  return Promise.all(ids.map(async (id) => (await store.actionOf(id))?.outcome ?? null))
}

describe("a set's permit read through a member that is not the decisive one", () => {
  it('a crash inside the protected step, recovered through alice: the ending reads the receipt of the permit spent on bob', async () => {
    const { runId, alice, bob, carol } = await bothApproved('o-rec')
    // Alice's resume settles the set (bob's approval reached the quorum), spends
    // bob's permit, runs the refund, records the receipt, and is killed there.
    expect(
      await killedPermitHost(
        'dispatch',
        env.dir,
        { decisionId: alice, runId },
        { PUSHARY_TEST_CRASH: 'after-receipt' },
      ),
    ).toBe('SIGKILL')
    expect(await refundsOf(runId)).toHaveLength(1)
    expect(await store.permitOf(bob)).toMatchObject({ settledBy: [alice, bob] })
    expect(await store.permitOf(alice)).toBeNull()
    expect((await store.get(alice))?.state).toBe('resuming')

    const recovered = await permitHost('recover', env.dir, { decisionId: alice })
    expect(recovered).toMatchObject({
      status: 'duplicate',
      actionOutcome: 'ran',
      reasonCode: 'permit_receipt',
    })
    expect(String(recovered.reason)).toContain(
      `the permit of decision ${bob}, the approval that settled the set`,
    )
    expect((await store.get(alice))?.state).toBe('completed')

    // The other members end with the set; the refund ran once, one review records it.
    await permitHost('reconcile', env.dir, {})
    expect((await store.get(bob))?.state).toBe('completed')
    expect((await store.get(carol))?.state).toBe('stale')
    expect(await actionsOf([alice, bob, carol])).toEqual(['ran', null, null])
    expect(await refundsOf(runId)).toHaveLength(1)
  }, 120_000)

  it("a failed action: alice's review ends uncertain with bob's failed receipt, and recover reads it again", async () => {
    const { runId, alice, bob } = await bothApproved('o-fail')
    const resumed = await permitHost(
      'dispatch',
      env.dir,
      { decisionId: alice, runId },
      { PUSHARY_TEST_ACTION_FAILS: '1' },
    )
    expect(resumed).toMatchObject({ status: 'uncertain', reasonCode: 'permit_receipt_failed', run: 'failed' })
    expect(String(resumed.reason)).toContain(`the permit of decision ${bob}`)
    expect(await store.actionOf(alice)).toMatchObject({ outcome: 'failed' })

    const recovered = await permitHost('recover', env.dir, { decisionId: alice })
    expect(recovered).toMatchObject({
      status: 'uncertain',
      reasonCode: 'permit_receipt_failed',
      actionOutcome: 'failed',
    })
    expect(await store.permitOf(alice)).toBeNull()
    expect(await refundsOf(runId)).toHaveLength(0)
  }, 120_000)
})
