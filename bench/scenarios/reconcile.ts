/**
 * A reconcile round while approvals wait for their person: the same
 * `dispatcher.reconcile({ limit })` on two bench envs, one holding `small`
 * single approvals still waiting, the other `waiting` of them, sampled in
 * turning order. Each round visits `limit` pending reviews in both (a GET
 * each, nothing answered), so any difference is work that grows with the
 * backlog: reconcile's batch fallback used to list and parse every
 * suspended run of every workflow each round.
 */
import { randomUUID } from 'node:crypto'
import { type BenchEnv, createBenchEnv } from '../lib/env.js'
import type { Row } from '../lib/report.js'
import { inTurningOrder, summarize, timed } from '../lib/stats.js'

const GROUP = '7. Reconcile'

async function waitingApprovals(env: BenchEnv, count: number): Promise<void> {
  const workflow = env.mastra.getWorkflow('item')
  for (let index = 0; index < count; index++) {
    const run = await workflow.createRun()
    const started = await run.start({
      inputData: { operationId: `waiting-${randomUUID()}`, question: 'Refund order 1?', type: 'confirm' },
    })
    if (started.status !== 'suspended') throw new Error(`a waiting approval ended ${started.status}`)
  }
}

async function round(env: BenchEnv, limit: number): Promise<number> {
  const { ms, value } = await timed(() => env.dispatcher.reconcile({ limit }))
  const visited = value.results.filter((result) => result.status === 'pending').length
  if (visited !== limit) throw new Error(`a reconcile round visited ${visited} pending reviews, not ${limit}`)
  return ms
}

export async function benchReconcile(options: {
  small: number
  waiting: number
  limit: number
  warmups: number
  samples: number
}): Promise<Row[]> {
  const few = await createBenchEnv('reconcile-few')
  const many = await createBenchEnv('reconcile-many')
  try {
    await waitingApprovals(few, options.small)
    await waitingApprovals(many, options.waiting)
    const taken = await inTurningOrder(options, {
      few: () => round(few, options.limit),
      many: () => round(many, options.limit),
    })
    const ours = summarize(taken.many)
    const alone = summarize(taken.few).median
    return [
      {
        group: GROUP,
        scenario: `reconcile round (limit ${options.limit}), ${options.waiting} single approvals waiting`,
        params: `${options.samples} rounds after ${options.warmups} warm-ups; nothing answered, so each round visits ${options.limit} pending reviews (one GET each); one batch workflow registered`,
        unit: 'ms',
        median: ours.median,
        p95: ours.p95,
        p99: ours.p99,
        baseline: { label: `the same with ${options.small} waiting`, value: alone },
        target: 'flat (≤ 1.25×)',
        met: ours.median <= 1.25 * alone,
      },
    ]
  } finally {
    await few.close()
    await many.close()
  }
}
