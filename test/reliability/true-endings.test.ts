/**
 * Issue 37: every ending is true. A review is `completed` only when the
 * approved action ran; the evidence (the permit's receipt, the run's output)
 * is read before the run's status, and the normal path and `recover` agree.
 * Separate OS processes (`fixtures/permit-host.ts`), SIGKILL, an operator's
 * `run.restart()`, and the local decision service over loopback HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestEnv, listEffects, type TestEnv } from '../helpers/mastra.js'
import { killedPermitHost, permitHost, refundInput, type StartedPermitRun } from './support/permit-hosts.js'

let env: TestEnv

beforeAll(async () => {
  env = await createTestEnv('true-endings')
}, 60_000)

afterAll(async () => {
  await env?.close()
})

async function approved(orderId: string): Promise<StartedPermitRun> {
  const started = (await permitHost('start', env.dir, refundInput(orderId))) as unknown as StartedPermitRun
  expect(started.status).toBe('suspended')
  await env.client.decisions.answer(started.decisionId, 'yes')
  return started
}

const effectsOf = async (runId: string) => (await listEffects(env.dir)).filter((e) => e.key === runId)

describe('a re-driven permit run is never recorded completed after 0 executions (finding 1)', () => {
  for (const crash of ['after-grant', 'in-action'] as const) {
    it(`recover ends it uncertain, action unknown, when the resumer died ${crash === 'after-grant' ? 'right after the permit was granted' : 'after recordPermit, inside the action'} and an operator re-drove the run`, async () => {
      const started = await approved(`o-redrive-${crash}`)
      expect(await killedPermitHost('dispatch', env.dir, started, { PUSHARY_TEST_CRASH: crash })).toBe(
        'SIGKILL',
      )
      const restarted = await permitHost('restart', env.dir, started)
      // The re-driven permit step met its own spent permit and ran nothing.
      expect(restarted).toMatchObject({
        status: 'success',
        result: { outcome: 'refused', refusal: 'already_consumed' },
      })
      const recovered = await permitHost('recover', env.dir, started)
      expect(recovered).toMatchObject({ status: 'uncertain', actionOutcome: 'unknown' })
      expect(String(recovered.reason)).toMatch(/may have started/)
      const stored = await permitHost('state', env.dir, started)
      expect(stored).toMatchObject({ state: 'uncertain', action: { outcome: 'unknown' } })
      expect(await effectsOf(started.runId)).toHaveLength(0)
    }, 180_000)
  }
})

describe('a permit refused for a mismatched action is never resumed or completed (finding 3)', () => {
  it('dispatch ends the review stale with the action refused, and recover and reconcile agree', async () => {
    const started = await approved('o-mismatch')
    const dispatched = await permitHost('dispatch', env.dir, started, {
      PUSHARY_TEST_ACTION_TARGET: 'order other',
    })
    expect(dispatched).toMatchObject({
      status: 'stale',
      run: 'success',
      result: { outcome: 'refused', refusal: 'action_mismatch' },
    })
    expect(await permitHost('state', env.dir, started)).toMatchObject({
      state: 'stale',
      action: { outcome: 'refused' },
    })
    expect(await permitHost('recover', env.dir, started)).toMatchObject({ status: 'stale' })
    expect(await effectsOf(started.runId)).toHaveLength(0)
  }, 180_000)

  it('reconcile reports the refused permit stale, not resumed', async () => {
    const started = await approved('o-mismatch-reconcile')
    const report = (await permitHost(
      'reconcile',
      env.dir,
      {},
      { PUSHARY_TEST_ACTION_TARGET: 'order other' },
    )) as {
      results: { decisionId: string; status: string; actionOutcome?: string; reasonCode?: string }[]
    }
    expect(report.results.find((r) => r.decisionId === started.decisionId)).toMatchObject({
      status: 'stale',
      actionOutcome: 'refused',
      reasonCode: 'permit_refused',
    })
    expect(await permitHost('state', env.dir, started)).toMatchObject({ state: 'stale' })
    expect(await effectsOf(started.runId)).toHaveLength(0)
  }, 180_000)
})

describe('a failed receipt never becomes completed (finding 4)', () => {
  it('dispatch and recover both leave the review uncertain with the action failed', async () => {
    const started = await approved('o-fails')
    const dispatched = await permitHost('dispatch', env.dir, started, { PUSHARY_TEST_ACTION_FAILS: '1' })
    expect(dispatched).toMatchObject({ status: 'uncertain', run: 'failed' })
    // The same evidence read again by recover: still the failed action, never completed.
    const recovered = await permitHost('recover', env.dir, started)
    expect(recovered).toMatchObject({
      status: 'uncertain',
      actionOutcome: 'failed',
      reasonCode: 'permit_receipt_failed',
    })
    expect(await permitHost('state', env.dir, started)).toMatchObject({
      state: 'uncertain',
      action: { outcome: 'failed' },
    })
    expect(await effectsOf(started.runId)).toHaveLength(0)
  }, 180_000)
})
