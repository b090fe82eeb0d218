/**
 * Issue 37: every ending is true. A review is `completed` only when the
 * approved action ran; the evidence (the permit's receipt, the run's output)
 * is read before the run's status, and the normal path and `recover` agree.
 * Separate OS processes (`fixtures/permit-host.ts`), SIGKILL, an operator's
 * `run.restart()`, and the local decision service over loopback HTTP.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestEnv, listEffects, runFixture, type TestEnv } from '../helpers/mastra.js'

const SCRIPT = 'test/reliability/fixtures/permit-host.ts'

interface Started {
  runId: string
  status: string
  decisionId: string
}

function host(phase: string, dir: string, arg: unknown, env: Record<string, string> = {}) {
  return runFixture<Record<string, unknown>>([phase, dir, JSON.stringify(arg)], { script: SCRIPT, env })
}

function killedHost(phase: string, dir: string, arg: unknown, env: Record<string, string>) {
  return new Promise<string | null>((resolve) => {
    const child: ChildProcess = spawn(
      process.execPath,
      ['--import', 'tsx', SCRIPT, phase, dir, JSON.stringify(arg)],
      { cwd: process.cwd(), stdio: 'ignore', env: { ...process.env, ...env } },
    )
    child.on('close', (_code, signal) => resolve(signal))
  })
}

function input(orderId: string) {
  return {
    operationId: `refund:${orderId}:v1`,
    question: `Refund order ${orderId}?`,
    externalId: 'customer_1',
    subject: { toolName: 'refund.create', toolTarget: `order ${orderId}`, parameters: { amountMinor: 4800 } },
  }
}

let env: TestEnv

beforeAll(async () => {
  env = await createTestEnv('true-endings')
}, 60_000)

afterAll(async () => {
  await env?.close()
})

async function approved(orderId: string): Promise<Started> {
  const started = (await host('start', env.dir, input(orderId))) as unknown as Started
  expect(started.status).toBe('suspended')
  await env.client.decisions.answer(started.decisionId, 'yes')
  return started
}

const effectsOf = async (runId: string) => (await listEffects(env.dir)).filter((e) => e.key === runId)

describe('a re-driven permit run is never recorded completed after 0 executions (finding 1)', () => {
  for (const crash of ['after-grant', 'in-action'] as const) {
    it(`recover ends it uncertain, action unknown, when the resumer died ${crash === 'after-grant' ? 'right after the permit was granted' : 'after recordPermit, inside the action'} and an operator re-drove the run`, async () => {
      const started = await approved(`o-redrive-${crash}`)
      expect(await killedHost('dispatch', env.dir, started, { PUSHARY_TEST_CRASH: crash })).toBe('SIGKILL')
      const restarted = await host('restart', env.dir, started)
      // The re-driven permit step met its own spent permit and ran nothing.
      expect(restarted).toMatchObject({
        status: 'success',
        result: { outcome: 'refused', refusal: 'already_consumed' },
      })
      const recovered = await host('recover', env.dir, started)
      expect(recovered).toMatchObject({ status: 'uncertain', actionOutcome: 'unknown' })
      expect(String(recovered.reason)).toMatch(/may have started/)
      const stored = await host('state', env.dir, started)
      expect(stored).toMatchObject({ state: 'uncertain', action: { outcome: 'unknown' } })
      expect(await effectsOf(started.runId)).toHaveLength(0)
    }, 180_000)
  }
})

describe('a permit refused for a mismatched action is never resumed or completed (finding 3)', () => {
  it('dispatch ends the review stale with the action refused, and recover and reconcile agree', async () => {
    const started = await approved('o-mismatch')
    const dispatched = await host('dispatch', env.dir, started, { PUSHARY_TEST_ACTION_TARGET: 'order other' })
    expect(dispatched).toMatchObject({
      status: 'stale',
      run: 'success',
      result: { outcome: 'refused', refusal: 'action_mismatch' },
    })
    expect(await host('state', env.dir, started)).toMatchObject({
      state: 'stale',
      action: { outcome: 'refused' },
    })
    expect(await host('recover', env.dir, started)).toMatchObject({ status: 'stale' })
    expect(await effectsOf(started.runId)).toHaveLength(0)
  }, 180_000)

  it('reconcile reports the refused permit stale, not resumed', async () => {
    const started = await approved('o-mismatch-reconcile')
    const report = (await host('reconcile', env.dir, {}, { PUSHARY_TEST_ACTION_TARGET: 'order other' })) as {
      results: { decisionId: string; status: string; actionOutcome?: string; reasonCode?: string }[]
    }
    expect(report.results.find((r) => r.decisionId === started.decisionId)).toMatchObject({
      status: 'stale',
      actionOutcome: 'refused',
      reasonCode: 'permit_refused',
    })
    expect(await host('state', env.dir, started)).toMatchObject({ state: 'stale' })
    expect(await effectsOf(started.runId)).toHaveLength(0)
  }, 180_000)
})

describe('a failed receipt never becomes completed (finding 4)', () => {
  it('dispatch and recover both leave the review uncertain with the action failed', async () => {
    const started = await approved('o-fails')
    const dispatched = await host('dispatch', env.dir, started, { PUSHARY_TEST_ACTION_FAILS: '1' })
    expect(dispatched).toMatchObject({ status: 'uncertain', run: 'failed' })
    // The same evidence read again by recover: still the failed action, never completed.
    const recovered = await host('recover', env.dir, started)
    expect(recovered).toMatchObject({
      status: 'uncertain',
      actionOutcome: 'failed',
      reasonCode: 'permit_receipt_failed',
    })
    expect(await host('state', env.dir, started)).toMatchObject({
      state: 'uncertain',
      action: { outcome: 'failed' },
    })
    expect(await effectsOf(started.runId)).toHaveLength(0)
  }, 180_000)
})
