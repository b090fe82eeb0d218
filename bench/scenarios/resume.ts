/**
 * Answer → resumed run: an answered decision resumed through
 * `dispatcher.resumeDecision` and through a signed callback into
 * `handleCallback`, beside bare Mastra `run.resume({ label })` of the same
 * workflow shape (suspending step, gate, protected step) and beside the
 * floor of a verified resume (bare resume + one GET of the answered decision
 * through the client + two durable single-statement commits on the same
 * disk), interleaved in the same process so load hits all four alike. Every
 * sample checks the protected step ran.
 */
import { join } from 'node:path'
import { type Client, createClient } from '@libsql/client'
import type { BenchEnv } from '../lib/env.js'
import { type Row, timedRow } from '../lib/report.js'
import { inTurningOrder, median, summarize, timed } from '../lib/stats.js'

const GROUP = '1. Answer → resumed run'

interface RunLike {
  runId: string
  start(params: { inputData: unknown }): Promise<{
    status: string
    steps?: Record<string, { suspendPayload?: { decisionId?: string } }>
  }>
  resume(params: { label: string; resumeData: unknown }): Promise<{ status: string }>
}
interface WorkflowLike {
  createRun(options?: { runId?: string }): Promise<RunLike>
}

function workflow(env: BenchEnv, key: 'approved' | 'viaCallback' | 'bare'): WorkflowLike {
  return env.mastra.getWorkflow(key) as unknown as WorkflowLike
}

const input = (operationId: string) => ({ operationId, question: `Approve ${operationId}?`, type: 'confirm' })

/** Starts one of our runs and returns its answered decision. */
async function answeredRun(env: BenchEnv, key: 'approved' | 'viaCallback', operationId: string) {
  const run = await workflow(env, key).createRun()
  const result = await run.start({ inputData: input(operationId) })
  const decisionId = result.steps?.['pushary-approval']?.suspendPayload?.decisionId
  if (result.status !== 'suspended' || !decisionId) throw new Error(`start ended ${result.status}`)
  const answeredAt = performance.now()
  await env.client.decisions.answer(decisionId, 'yes')
  return { runId: run.runId, decisionId, answeredAt }
}

/** Runs the timed part of a resume; the profile wraps it to count or sample only that part. */
export type Around = <T>(body: () => Promise<T>) => Promise<T>
const plain: Around = (body) => body()

export async function resumeViaDispatcher(
  env: BenchEnv,
  operationId: string,
  around = plain,
): Promise<number> {
  const { decisionId } = await answeredRun(env, 'approved', operationId)
  const before = env.effects.protected
  const { ms, value } = await around(() => timed(() => env.dispatcher.resumeDecision(decisionId)))
  if (value.status !== 'resumed' || value.runStatus !== 'success' || env.effects.protected !== before + 1) {
    throw new Error(`resumeDecision ended ${value.status}/${'runStatus' in value ? value.runStatus : ''}`)
  }
  return ms
}

/**
 * Waits until the in-process service has recorded the callback's delivery:
 * that bookkeeping (one write transaction after the receiver's 200) happens
 * on the hosted service's machine, not in the receiver's resume, so it must
 * not share the timed part's CPU and disk here.
 */
export async function deliveryRecorded(env: BenchEnv, decisionId: string): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const response = await fetch(`${env.service.baseUrl}/decisions/${decisionId}/deliveries`, {
      headers: { authorization: `Bearer ${env.service.apiKey}` },
    })
    const body = (await response.json()) as { deliveries?: { state?: string }[] }
    if (body.deliveries?.some((delivery) => delivery.state === 'delivered')) return
    await new Promise((resolve) => setTimeout(resolve, 2))
  }
  throw new Error(`the service never recorded the callback delivery of ${decisionId}`)
}

export async function resumeViaCallback(env: BenchEnv, operationId: string, around = plain): Promise<number> {
  const { decisionId } = await answeredRun(env, 'viaCallback', operationId)
  const callback = await env.receiver.next(decisionId)
  await deliveryRecorded(env, decisionId)
  const before = env.effects.protected
  const request = () =>
    new Request('http://127.0.0.1/pushary/callback', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-pushary-signature': callback.signature },
      body: callback.body,
    })
  const { ms, value } = await around(() =>
    timed(async () => {
      const response = await env.dispatcher.handleCallback(request())
      return { status: response.status, body: (await response.json()) as { status?: string } }
    }),
  )
  if (value.status !== 200 || value.body.status !== 'resumed' || env.effects.protected !== before + 1) {
    throw new Error(`handleCallback answered ${value.status} ${JSON.stringify(value.body)}`)
  }
  return ms
}

async function resumeBare(env: BenchEnv, operationId: string): Promise<number> {
  const started = await workflow(env, 'bare').createRun()
  const first = await started.start({ inputData: input(operationId) })
  if (first.status !== 'suspended') throw new Error(`bare start ended ${first.status}`)
  const before = env.effects.bare
  const { ms, value } = await timed(async () => {
    // A resumer holds only the run ID, like the dispatcher: it builds the run object first.
    const run = await workflow(env, 'bare').createRun({ runId: started.runId })
    return run.resume({ label: operationId, resumeData: { answer: 'yes' } })
  })
  if (value.status !== 'success' || env.effects.bare !== before + 1) {
    throw new Error(`bare resume ended ${value.status}`)
  }
  return ms
}

/**
 * The floor: what a verified resume cannot avoid. The answer must come from
 * the service (one GET), the claim must be durable before the step runs and
 * the outcome after (two commits), and Mastra must resume the run.
 */
async function resumeFloor(env: BenchEnv, db: Client, operationId: string): Promise<number> {
  const started = await workflow(env, 'bare').createRun()
  const first = await started.start({ inputData: input(operationId) })
  if (first.status !== 'suspended') throw new Error(`floor start ended ${first.status}`)
  const asked = await env.client.decisions.create({
    externalId: 'bench-floor',
    question: `Approve ${operationId}?`,
    type: 'confirm',
  })
  await env.client.decisions.answer(asked.decisionId, 'yes')
  const before = env.effects.bare
  const { ms, value } = await timed(async () => {
    const decision = await env.client.decisions.get(asked.decisionId)
    const resumed = await betweenTwoCommits(db, operationId, async () => {
      const run = await workflow(env, 'bare').createRun({ runId: started.runId })
      return run.resume({ label: operationId, resumeData: { answer: 'yes' } })
    })
    return { decision, resumed }
  })
  if (
    value.decision.status !== 'answered' ||
    value.resumed.status !== 'success' ||
    env.effects.bare !== before + 1
  ) {
    throw new Error(`floor resume ended ${value.decision.status}/${value.resumed.status}`)
  }
  return ms
}

/**
 * The floor's two durable single-statement commits around `body`: one before
 * (as a claim must be on disk before the step runs), one after (the outcome).
 */
export async function betweenTwoCommits<T>(db: Client, id: string, body: () => Promise<T>): Promise<T> {
  await db.execute({ sql: 'INSERT INTO floor (id, state) VALUES (?, ?)', args: [id, 'resuming'] })
  const value = await body()
  await db.execute({ sql: 'UPDATE floor SET state = ? WHERE id = ?', args: ['completed', id] })
  return value
}

/** A WAL database next to the review store's, as the store opens its own. */
export async function floorDatabase(env: BenchEnv, name = 'floor'): Promise<Client> {
  const db = createClient({ url: `file:${join(env.dir, `${name}.db`)}` })
  await db.execute('PRAGMA journal_mode = WAL')
  await db.execute('CREATE TABLE IF NOT EXISTS floor (id TEXT PRIMARY KEY, state TEXT NOT NULL)')
  return db
}

export async function benchResume(
  env: BenchEnv,
  options: { warmups: number; samples: number },
): Promise<Row[]> {
  const db = await floorDatabase(env)
  let taken: { dispatcher: number[]; callback: number[]; bare: number[]; floor: number[] }
  try {
    taken = await inTurningOrder(options, {
      dispatcher: (round) => resumeViaDispatcher(env, `dispatch-${round}`),
      callback: (round) => resumeViaCallback(env, `callback-${round}`),
      bare: (round) => resumeBare(env, `bare-${round}`),
      floor: (round) => resumeFloor(env, db, `floor-${round}`),
    })
  } finally {
    db.close()
  }
  const { dispatcher, callback, bare, floor } = taken
  const bareSummary = summarize(bare)
  const floorSummary = summarize(floor)
  const params = `${options.samples} resumes after ${options.warmups} warm-ups, one process, loopback`
  const row = (scenario: string, samples: number[], ratio: number): Row => {
    const ours = median(samples)
    return timedRow({ group: GROUP, scenario, params }, samples, {
      baseline: { label: 'floor: bare resume + one GET + two durable commits', value: floorSummary.median },
      target: `≤ ${ratio}× floor${ratio === 1.2 ? ', p50 < 5 ms' : ''}`,
      met: ours <= ratio * floorSummary.median && (ratio !== 1.2 || ours < 5),
    })
  }
  return [
    row('answered decision → `dispatcher.resumeDecision` → protected step done', dispatcher, 1.2),
    row('signed callback → `dispatcher.handleCallback` → protected step done', callback, 1.3),
    {
      group: GROUP,
      scenario: 'floor: bare resume + GET of the answered decision + two single-statement commits',
      params,
      unit: 'ms',
      median: floorSummary.median,
      p95: floorSummary.p95,
      p99: floorSummary.p99,
      baseline: { label: 'bare Mastra `run.resume({ label })`', value: bareSummary.median },
    },
    {
      group: GROUP,
      scenario: 'bare Mastra: `createRun({ runId })` + `run.resume({ label })`, same shape',
      params,
      unit: 'ms',
      median: bareSummary.median,
      p95: bareSummary.p95,
      p99: bareSummary.p99,
    },
  ]
}
