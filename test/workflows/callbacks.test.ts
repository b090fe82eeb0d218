import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { pusharyCallbackRoute } from '../../src/resume/callback-route.js'
import {
  countEffects,
  createTestEnv,
  startFetchServer,
  type TestEnv,
  waitFor,
  writeEnvFile,
} from '../helpers/mastra.js'
import { buildApp, type TestApp } from './fixtures/app.js'

let env: TestEnv
let app: TestApp
let callbacks: Awaited<ReturnType<typeof startFetchServer>>
let lostApp: TestApp

type RunView = { status: string; result?: unknown }

beforeAll(async () => {
  env = await createTestEnv('callbacks', { sandbox: true })
  // The callback endpoint is the Mastra route helper's handler, served over real HTTP.
  let route: ReturnType<typeof pusharyCallbackRoute> | undefined
  callbacks = await startFetchServer(async (request) => {
    const handler = (route as { handler?: unknown } | undefined)?.handler as
      | ((context: { req: { raw: Request } }) => Promise<Response>)
      | undefined
    if (!handler) return new Response(null, { status: 503 })
    return handler({ req: { raw: request } })
  })
  env.callbackUrl = `${callbacks.url}/pushary/callback`
  writeEnvFile(env)
  app = buildApp(env)
  route = pusharyCallbackRoute(app.dispatcher)
  // Same files, but the service is told to call a port nobody listens on.
  lostApp = buildApp({ ...env, callbackUrl: 'http://127.0.0.1:9/pushary/callback' })
})

afterAll(async () => {
  await callbacks?.close()
  await app?.close()
  await lostApp?.close()
  await env?.close()
})

function workflow(target: TestApp, id: string) {
  return target.mastra.getWorkflowById(id as never) as unknown as {
    createRun(): Promise<{ runId: string; start(p: { inputData: unknown }): Promise<{ status: string }> }>
    getWorkflowRunById(id: string): Promise<RunView | null>
  }
}

async function start(target: TestApp, workflowId: string, operationId: string) {
  const run = await workflow(target, workflowId).createRun()
  const started = await run.start({ inputData: { operationId, question: `Refund ${operationId}?` } })
  const review = (await target.store.listByState('pending', { limit: 1000 })).find(
    (r) => r.runId === run.runId,
  )
  return { runId: run.runId, status: started.status, decisionId: review?.decisionId }
}

async function settled(target: TestApp, workflowId: string, runId: string): Promise<RunView> {
  return waitFor(async () => {
    const state = await workflow(target, workflowId).getWorkflowRunById(runId)
    return state && state.status !== 'suspended' && state.status !== 'running' ? state : undefined
  })
}

describe('signed callbacks from the decision service', () => {
  it('resumes the run from the service callback alone and runs the refund once', async () => {
    const before = await countEffects(env.dir, 'refund')
    const { runId, decisionId } = await start(app, 'refund-single', 'cb-approve')
    await env.client.decisions.answer(decisionId!, 'yes')
    const state = await settled(app, 'refund-single', runId)
    expect(state.result).toEqual({ refunded: true, operationId: 'cb-approve' })
    expect((await app.store.get(decisionId!))?.state).toBe('completed')
    expect((await app.store.listReceipts(decisionId!)).length).toBeGreaterThanOrEqual(1)
    expect(await countEffects(env.dir, 'refund')).toBe(before + 1)
  })

  it("resumes a decision answered 25 ms after creation, racing the step's own suspend", async () => {
    // The sandbox answers 25 ms after creation: its callback races the step's own suspend.
    const before = await countEffects(env.dir, 'refund')
    const { runId, decisionId } = await start(app, 'refund-sandbox', 'cb-early')
    const state = await settled(app, 'refund-sandbox', runId)
    expect(state.result).toEqual({ refunded: true, operationId: 'cb-early' })
    expect((await app.store.get(decisionId!))?.state).toBe('completed')
    expect(await countEffects(env.dir, 'refund')).toBe(before + 1)
  })

  it('declines an expired approval, learnt by reconcile (no callback for expiry), instead of running the refund', async () => {
    const before = await countEffects(env.dir, 'refund')
    const { runId, decisionId } = await start(app, 'refund-expiring', 'cb-expire')
    // The hosted API calls back answers only: an expiry is found by reconciling.
    expect((await env.client.decisions.get(decisionId!, { wait: 10 })).status).toBe('expired')
    const report = await app.dispatcher.reconcile({ limit: 1000 })
    expect(report.results.find((result) => result.decisionId === decisionId)?.status).toBe('resumed')
    const state = await settled(app, 'refund-expiring', runId)
    expect(state.status).toBe('success')
    expect(state.result).toMatchObject({
      outcome: 'declined',
      reason: 'expired',
      answer: { status: 'expired', value: null, approved: false },
    })
    expect((await app.store.get(decisionId!))?.state).toBe('completed')
    expect(await countEffects(env.dir, 'refund')).toBe(before)
  })

  it('recovers a lost callback with reconcile', async () => {
    const before = await countEffects(env.dir, 'refund')
    const { runId, decisionId } = await start(lostApp, 'refund-single', 'cb-lost')
    await env.client.decisions.answer(decisionId!, 'yes')
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect((await workflow(lostApp, 'refund-single').getWorkflowRunById(runId))?.status).toBe('suspended')
    const report = await lostApp.dispatcher.reconcile({ limit: 1000 })
    expect(report.results.find((result) => result.decisionId === decisionId)?.status).toBe('resumed')
    expect((await settled(lostApp, 'refund-single', runId)).result).toEqual({
      refunded: true,
      operationId: 'cb-lost',
    })
    expect(await countEffects(env.dir, 'refund')).toBe(before + 1)
  })

  it('reaches a newer answered review behind more than `limit` older unanswered ones', async () => {
    const before = await countEffects(env.dir, 'refund')
    // Whatever earlier tests left pending counts as "older unanswered" too.
    for (const name of ['old-1', 'old-2', 'old-3']) await start(lostApp, 'refund-single', `cb-starve-${name}`)
    const { runId, decisionId } = await start(lostApp, 'refund-single', 'cb-starve-new')
    await env.client.decisions.answer(decisionId!, 'yes')
    const pendingCount = (await lostApp.store.listByState('pending', { limit: 1000 })).length
    let resumed = false
    // Rounds of 2 must get round to the newest review within one pass over the backlog.
    for (let round = 0; round <= Math.ceil(pendingCount / 2) && !resumed; round++) {
      const report = await lostApp.dispatcher.reconcile({ limit: 2 })
      resumed = report.results.some(
        (result) => result.decisionId === decisionId && result.status === 'resumed',
      )
    }
    expect(resumed).toBe(true)
    expect((await settled(lostApp, 'refund-single', runId)).result).toEqual({
      refunded: true,
      operationId: 'cb-starve-new',
    })
    expect(await countEffects(env.dir, 'refund')).toBe(before + 1)
  })
})
