/**
 * Agent reviews under the claim lease, across OS processes: a live agent
 * resumer keeps its claim alive (recovery refuses it), a crash-left one is
 * reported as needing recovery (never an endless `busy`) and recovery takes
 * it over and applies the answer once. Real Mastra `Agent` on LibSQL, the
 * SQLite review store, the local decision service over loopback.
 */
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { resumePusharyAgentReview } from '../../src/agents/resume-review.js'
import { countEffects, createTestEnv, runFixture, type TestEnv, waitFor } from '../helpers/mastra.js'
import {
  buildApp,
  CLAIM_LEASE_MS,
  EXTERNAL_ID,
  recoverAfterLease,
  type TestApp,
} from '../workflows/fixtures/app.js'
import { AGENT_ACTION_VERSION, openAgentRefund, REFUND_AGENT_ID } from '../workflows/fixtures/refund-agent.js'

let env: TestEnv
let app: TestApp

beforeAll(async () => {
  env = await createTestEnv('agent-lease')
  app = buildApp(env)
})

afterAll(async () => {
  await app?.close()
  await env?.close()
})

async function answeredRefund(orderId: string): Promise<string> {
  const { decisionId } = await openAgentRefund(app, EXTERNAL_ID, orderId, `lease-${orderId}`)
  await env.client.decisions.answer(decisionId, 'yes')
  return decisionId
}

function resumeDirectly(decisionId: string) {
  return resumePusharyAgentReview(
    { client: app.client },
    {
      agent: app.mastra.getAgentById(REFUND_AGENT_ID),
      agentId: REFUND_AGENT_ID,
      externalId: EXTERNAL_ID,
      decisionId,
      store: app.store,
      currentActionVersion: () => AGENT_ACTION_VERSION,
      claimLeaseMs: CLAIM_LEASE_MS,
    },
  )
}

describe('agent reviews under the claim lease', () => {
  it('never takes over a live agent resumer held inside the refund, which then finishes with one refund', async () => {
    const orderId = `hold-${Date.now()}`
    const decisionId = await answeredRefund(orderId)
    const release = join(env.dir, `release-${orderId}`)
    const resumer = runFixture<{ status: string }[]>(
      ['resume-decisions', env.dir, JSON.stringify([decisionId])],
      { env: { PUSHARY_TEST_HOLD_REFUND: release } },
    )
    await waitFor(async () => (existsSync(`${release}.held`) ? true : undefined), 60_000)
    // Longer than two leases: only a holder that keeps its claim alive still counts as alive now.
    await new Promise((resolve) => setTimeout(resolve, 2 * CLAIM_LEASE_MS + 500))
    const recovered = await app.dispatcher.recover(decisionId)
    expect(recovered).toMatchObject({ status: 'busy', reason: expect.stringMatching(/alive/) })
    expect((await app.dispatcher.resumeDecision(decisionId)).status).toBe('busy')
    const direct = await resumeDirectly(decisionId)
    expect(direct.status).toBe('busy')
    expect(direct).not.toHaveProperty('recoveryNeeded')
    expect((await app.store.get(decisionId))?.state).toBe('resuming')

    writeFileSync(release, '')
    expect((await resumer)[0]?.status).toBe('resumed')
    expect(await countEffects(env.dir, 'refund')).toBe(1)
    expect((await app.store.history(decisionId)).map((entry) => entry.event)).toEqual([
      null,
      'CLAIM',
      'RESUMED',
    ])
    expect((await app.dispatcher.recover(decisionId)).status).toBe('duplicate')
  }, 180_000)

  it('reports a crash-left agent claim as needing recovery, and recovery applies the answer once', async () => {
    const orderId = `crash-${Date.now()}`
    const decisionId = await answeredRefund(orderId)
    await expect(
      runFixture(['resume-decisions', env.dir, JSON.stringify([decisionId])], {
        env: { PUSHARY_TEST_CRASH_AFTER_CLAIM: '1' },
      }),
    ).rejects.toThrow(/SIGKILL/)
    expect((await app.store.get(decisionId))?.state).toBe('resuming')
    // Busy while the claim might still be alive; once its lease ran out the
    // dispatcher says recovery is needed, and the docs' helper (docs/agents.md) says so in `busy`.
    const settled = await waitFor(async () => {
      const result = await app.dispatcher.resumeDecision(decisionId)
      return result.status === 'busy' ? undefined : result
    })
    expect(settled).toMatchObject({ status: 'recovery_needed', reason: expect.stringMatching(/recover/) })
    const direct = await resumeDirectly(decisionId)
    expect(direct).toMatchObject({
      status: 'busy',
      recoveryNeeded: true,
      reason: expect.stringMatching(/recover/),
    })
    const before = await countEffects(env.dir, 'refund')

    const result = await recoverAfterLease(app, decisionId)
    expect(result.status).toBe('resumed')
    expect(await countEffects(env.dir, 'refund')).toBe(before + 1)
    const history = await app.store.history(decisionId)
    expect(history.map((entry) => entry.event)).toEqual([
      null,
      'CLAIM',
      'RECLAIM',
      'NOT_APPLIED',
      'CLAIM',
      'RESUMED',
    ])
    expect(history.find((entry) => entry.event === 'NOT_APPLIED')?.reason).toMatch(/nothing ran/)
    expect((await app.dispatcher.recover(decisionId)).status).toBe('duplicate')
  }, 180_000)
})
