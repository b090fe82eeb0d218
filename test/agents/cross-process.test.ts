import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  countEffects,
  createTestEnv,
  runFixture,
  type TestEnv,
  waitFor,
  writeEnvFile,
} from '../helpers/mastra.js'

const SCRIPT = 'test/agents/fixtures/agent-run.ts'
let env: TestEnv

beforeAll(async () => {
  env = await createTestEnv('agents-xproc')
})
afterAll(async () => {
  await env?.close()
})

function scenarioDir(name: string): string {
  const dir = join(env.dir, name)
  mkdirSync(dir, { recursive: true })
  writeEnvFile({ dir, baseUrl: env.baseUrl, apiKey: env.apiKey, webhookSecret: env.webhookSecret })
  return dir
}

const run = <T>(phase: string, dir: string, arg: unknown = {}) =>
  runFixture<T>([phase, dir, JSON.stringify(arg)], { script: SCRIPT })

describe('agent reviews across processes', () => {
  it('runs the approved refund once when five processes race to resume it (resumePusharyAgentReview, resumeDecision, handleCallback, reconcile), and a later resume is duplicate', async () => {
    const dir = scenarioDir('approve')
    const started = await run<{ finishReason: string; decisionId: string }>('start', dir)
    expect(started.finishReason).toBe('suspended')
    expect(await countEffects(dir, 'refund')).toBe(0)
    await env.client.decisions.answer(started.decisionId, 'yes')
    const phases = ['resume', 'dispatch', 'callback', 'reconcile', 'callback']
    const results = await Promise.all(
      phases.map((phase) => run<{ status: string }>(phase, dir, { decisionId: started.decisionId })),
    )
    const statuses = results.map((result) => result.status)
    expect(statuses.filter((status) => status === 'resumed')).toHaveLength(1)
    // Losers see the claim (busy), the finished review (duplicate), or, for a
    // reconcile that listed pending reviews after the winner finished, nothing.
    expect(statuses.filter((status) => !['resumed', 'busy', 'duplicate', 'absent'].includes(status))).toEqual(
      [],
    )
    expect(await countEffects(dir, 'refund')).toBe(1)
    expect((await run<{ status: string }>('resume', dir, { decisionId: started.decisionId })).status).toBe(
      'duplicate',
    )
    expect(await countEffects(dir, 'refund')).toBe(1)
  }, 240_000) // six OS processes on a shared 2-core machine

  it.each([['deny'], ['cancel']])(
    'never runs the refund after %s, resumed in a fresh process',
    async (how) => {
      const dir = scenarioDir(how)
      const started = await run<{ decisionId: string }>('start', dir)
      if (how === 'cancel') await env.client.decisions.cancel(started.decisionId)
      else await env.client.decisions.answer(started.decisionId, 'no')
      expect((await run<{ status: string }>('resume', dir, { decisionId: started.decisionId })).status).toBe(
        'resumed',
      )
      expect(await countEffects(dir, 'refund')).toBe(0)
    },
  )

  it('never runs the refund when the review expires unanswered, resumed in a fresh process', async () => {
    const dir = scenarioDir('expire')
    const started = await run<{ decisionId: string }>('start', dir, { expiresInSeconds: 1 })
    // The service's sweeper expires it; nobody answered.
    await waitFor(async () =>
      (await env.client.decisions.get(started.decisionId)).status === 'expired' ? true : undefined,
    )
    expect((await run<{ status: string }>('resume', dir, { decisionId: started.decisionId })).status).toBe(
      'resumed',
    )
    expect(await countEffects(dir, 'refund')).toBe(0)
    expect((await run<{ status: string }>('resume', dir, { decisionId: started.decisionId })).status).toBe(
      'duplicate',
    )
    expect(await countEffects(dir, 'refund')).toBe(0)
  })

  it('reopening in another process reuses the review and its decision while pending', async () => {
    const dir = scenarioDir('pending')
    const first = await run<{ decisionId: string }>('start', dir)
    expect((await run<{ status: string }>('resume', dir, { decisionId: first.decisionId })).status).toBe(
      'pending',
    )
    expect(await countEffects(dir, 'refund')).toBe(0)
  })
})
