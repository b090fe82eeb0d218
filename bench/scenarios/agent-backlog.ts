/**
 * Agent reviews with a backlog: the same open and resume as the agent rows,
 * on an agent whose storage also holds many other suspended runs of the same
 * memory resource (reviews still waiting for their person), beside the same
 * agent shape with nothing else waiting. Both agent sets exist side by side
 * and are sampled in turning order; each sample suspends one more run and
 * completes it, so the backlog stays the size it was built to. Mastra's
 * `listSuspendedRuns` reads every suspended run it is asked about, so this
 * row is flat only if the package asks it for one run at a time.
 */
import { mkdtempSync } from 'node:fs'
import { join } from 'node:path'
import { openPusharyAgentReview } from '../../src/agents/open-review.js'
import { resumePusharyAgentReview } from '../../src/agents/resume-review.js'
import { buildAgents } from '../../test/agents/support/agents.js'
import type { BenchEnv } from '../lib/env.js'
import type { Row } from '../lib/report.js'
import { inTurningOrder, summarize, timed } from '../lib/stats.js'

const GROUP = '2. Agent reviews'
const RESOURCE = 'backlog-customer'

/**
 * One agent set whose scripted model asks for the refund on every new thread
 * of `RESOURCE`: `suspend()` leaves one more run suspended in its storage.
 *
 * @example
 * const set = agentSet(env, 'backlog'); await set.suspend()
 */
export function agentSet(env: BenchEnv, name: string) {
  const built = buildAgents({
    dir: mkdtempSync(join(env.dir, `backlog-${name}-`)),
    client: env.client,
    externalId: RESOURCE,
    calls: [{ toolCallId: 'refund-call', toolName: 'issueRefund', input: { orderId: 'o1', amount: 20 } }],
  })
  let threads = 0
  const suspend = async () => {
    threads++
    // The scripted model asks for the refund on every new thread.
    const output = await built.refunder.generate('Refund it', {
      memory: { thread: `${name}-${threads}`, resource: RESOURCE },
    })
    if (output.finishReason !== 'suspended' || !output.runId)
      throw new Error(`generate ended ${output.finishReason}`)
    return output.runId
  }
  return { built, suspend }
}

export type AgentSet = ReturnType<typeof agentSet>
export const BACKLOG_RESOURCE = RESOURCE
export const BACKLOG_CALL = 'refund-call'

async function openAndResume(env: BenchEnv, set: AgentSet) {
  const runId = await set.suspend()
  const executed = set.built.executions.length
  const config = { client: env.client }
  const agent = { agent: set.built.refunder, agentId: 'refunder', externalId: RESOURCE, store: env.store }
  const { ms: openMs, value: review } = await timed(() =>
    openPusharyAgentReview(config, { ...agent, runId, toolCallId: 'refund-call', actionVersion: 'v1' }),
  )
  await env.client.decisions.answer(review.decisionId, 'yes')
  const { ms: resumeMs, value } = await timed(() =>
    resumePusharyAgentReview(config, {
      ...agent,
      decisionId: review.decisionId,
      currentActionVersion: () => 'v1',
    }),
  )
  if (value.status !== 'resumed' || set.built.executions.length !== executed + 1)
    throw new Error(`backlog review ended ${value.status}`)
  return { openMs, resumeMs }
}

export async function benchAgentBacklog(
  env: BenchEnv,
  options: { waiting: number; warmups: number; samples: number },
): Promise<Row[]> {
  const none = agentSet(env, 'none')
  const backlog = agentSet(env, 'backlog')
  for (let index = 0; index < options.waiting; index++) await backlog.suspend()
  const taken = await inTurningOrder(options, {
    none: () => openAndResume(env, none),
    backlog: () => openAndResume(env, backlog),
  })
  const params = `${options.samples} reviews after ${options.warmups} warm-ups; ${options.waiting} other runs of the same resource suspended in the same storage`
  const rows: Row[] = []
  for (const [what, pick] of [
    ['open an agent review', (sample: { openMs: number }) => sample.openMs],
    ['answered agent review → resumed', (sample: { resumeMs: number }) => sample.resumeMs],
  ] as const) {
    const ours = summarize(taken.backlog.map(pick))
    const alone = summarize(taken.none.map(pick)).median
    rows.push({
      group: GROUP,
      scenario: `${what}, ${options.waiting} other reviews waiting`,
      params,
      unit: 'ms',
      median: ours.median,
      p95: ours.p95,
      p99: ours.p99,
      baseline: { label: 'the same with nothing else waiting', value: alone },
      target: 'flat (≤ 1.25×)',
      met: ours.median <= 1.25 * alone,
    })
  }
  return rows
}
