import type { BenchEnv } from '../lib/env.js'
import type { Row } from '../lib/report.js'
import { shuffled, summarize, timed } from '../lib/stats.js'
import type { RunShape, Side, SuspendedRefund } from '../peer/side.js'
import { type AgentSet, agentSet, BACKLOG_CALL, BACKLOG_RESOURCE } from './agent-backlog.js'
import { benchReviewRunFloor, suspendedRefund } from './review-run-floor.js'

const GROUP = '8. Beside the peer'

type Measures = Record<string, number[]>
type Sample = (side: Side, tag: string) => Promise<Measures>
interface Rounds {
  warmups: number
  samples: number
}

export interface SideBySideSizes {
  agent: Rounds
  /** The agent rows again, on one agent whose storage holds `waiting` other suspended runs. */
  backlog: Rounds & { waiting: number }
  step: Rounds
  foreach: (Rounds & { items: number })[]
}

const agentSample =
  (env: BenchEnv): Sample =>
  async (side, tag) => {
    const agent = side.agent
    if (!agent) throw new Error(`${side.label} has no agent reviews`)
    const call = await suspendedRefund(env, tag)
    const opened = await timed(() => agent.open(call))
    await env.client.decisions.answer(opened.value, 'yes')
    const resumed = await timed(() => agent.resume(call, opened.value))
    if (call.executions.length !== 1)
      throw new Error(`${side.label}: the refund ran ${call.executions.length}×`)
    return { open: [opened.ms], resume: [resumed.ms] }
  }

const inputs = (tag: string, count: number) =>
  Array.from({ length: count }, (_, index) => ({
    operationId: `${tag}-${index}`,
    question: `Approve ${tag} item ${index}?`,
    type: 'confirm' as const,
  }))

const workflowSample =
  (env: BenchEnv, shape: RunShape): Sample =>
  async (side, tag) => {
    const workflow = side.workflow
    if (!workflow) throw new Error(`${side.label} has no workflow step`)
    const count = shape.kind === 'step' ? 1 : shape.items
    const started = await timed(() => workflow.start(shape, inputs(`${shape.kind}${count}-${tag}`, count)))
    const decisionIds = await workflow.decisions(shape, started.value)
    for (const decisionId of decisionIds) await env.client.decisions.answer(decisionId, 'yes')
    for (const decisionId of decisionIds) await workflow.answered(decisionId)
    const items: number[] = []
    for (const decisionId of shuffled(decisionIds)) {
      items.push((await timed(() => workflow.resume(shape, started.value, decisionId))).ms)
    }
    await workflow.finished(shape, started.value)
    return { start: [started.ms], item: items }
  }

/**
 * The agent sample on one shared agent with a backlog: both sides open and
 * resume a run of the same agent, whose storage holds every other suspended
 * run (`set`); each sample suspends one more run first (untimed).
 */
const backlogSample =
  (env: BenchEnv, set: AgentSet): Sample =>
  async (side, tag) => {
    const agent = side.agent
    if (!agent) throw new Error(`${side.label} has no agent reviews`)
    const runId = await set.suspend()
    const executions = set.built.executions
    const before = executions.length
    const call: SuspendedRefund = {
      agent: set.built.refunder,
      agentId: 'refunder',
      runId,
      toolCallId: BACKLOG_CALL,
      externalId: BACKLOG_RESOURCE,
      executions,
    }
    const opened = await timed(() => agent.open(call))
    await env.client.decisions.answer(opened.value, 'yes')
    const resumed = await timed(() => agent.resume(call, opened.value))
    if (executions.length !== before + 1)
      throw new Error(`${side.label} (${tag}): the refund ran ${executions.length - before}×`)
    return { open: [opened.ms], resume: [resumed.ms] }
  }

/** Per order (ours first, then peer first): each side's measures after the warm-ups. */
async function inBothOrders(sides: readonly [Side, Side], rounds: Rounds, sample: Sample) {
  const orders: { ours: Measures; peer: Measures }[] = []
  for (const order of [0, 1] as const) {
    const kept = { ours: {} as Measures, peer: {} as Measures }
    const sequenceOfSides = order === 0 ? ([0, 1] as const) : ([1, 0] as const)
    for (let round = 0; round < rounds.warmups + rounds.samples; round++) {
      for (const index of sequenceOfSides) {
        const measures = await sample(sides[index], `o${order + 1}r${round}s${index}`)
        if (round < rounds.warmups) continue
        const into = index === 0 ? kept.ours : kept.peer
        for (const [name, values] of Object.entries(measures)) into[name] = [...(into[name] ?? []), ...values]
      }
    }
    orders.push(kept)
  }
  return orders
}

interface Path {
  measure: string
  scenario: string
  /** Issue 40's target as a multiple of the peer's median, where it sets one. */
  peerTarget?: number
}

function rows(
  sides: readonly [Side, Side],
  orders: { ours: Measures; peer: Measures }[],
  paths: readonly Path[],
  params: string,
): Row[] {
  const out: Row[] = []
  for (const path of paths) {
    orders.forEach((order, index) => {
      const ours = summarize(order.ours[path.measure] ?? [])
      const peer = summarize(order.peer[path.measure] ?? [])
      const first = index === 0 ? 'ours first' : 'peer first'
      out.push({
        group: GROUP,
        scenario: `${path.scenario}, order ${index + 1} (${first})`,
        params,
        unit: 'ms',
        median: ours.median,
        p95: ours.p95,
        p99: ours.p99,
        peer: { label: sides[1].label, value: peer.median },
        ...(path.peerTarget === undefined
          ? {}
          : {
              target: `≤ ${path.peerTarget.toFixed(1)}× peer`,
              met: ours.median <= path.peerTarget * peer.median,
            }),
      })
    })
  }
  return out
}

export async function benchSideBySide(
  env: BenchEnv,
  sides: readonly [Side, Side],
  sizes: SideBySideSizes,
  log: (message: string) => void,
): Promise<Row[]> {
  const [ours, peer] = sides
  const out: Row[] = []
  const perSide = (r: Rounds, what: string) =>
    `${r.samples} ${what} per side and order after ${r.warmups} warm-ups, A/B interleaved`
  if (ours.agent && peer.agent) {
    log('beside the peer: agent reviews')
    const orders = await inBothOrders(sides, sizes.agent, agentSample(env))
    out.push(
      ...rows(
        sides,
        orders,
        [
          { measure: 'open', scenario: 'open an agent review', peerTarget: 1 },
          { measure: 'resume', scenario: 'answered agent review → resumed, tool ran', peerTarget: 1 },
        ],
        `${perSide(sizes.agent, 'reviews')}; scripted model, requireApproval tool`,
      ),
    )
    log("beside the peer: the review run's Mastra part")
    out.push(...(await benchReviewRunFloor(env, sides, sizes.agent)))
    const { waiting } = sizes.backlog
    log(`beside the peer: agent reviews with ${waiting} others waiting`)
    const set = agentSet(env, 'side-backlog')
    for (let index = 0; index < waiting; index++) await set.suspend()
    const backlogOrders = await inBothOrders(sides, sizes.backlog, backlogSample(env, set))
    out.push(
      ...rows(
        sides,
        backlogOrders,
        [
          { measure: 'open', scenario: `open an agent review, ${waiting} other runs of the agent waiting` },
          {
            measure: 'resume',
            scenario: `answered agent review → resumed, ${waiting} other runs of the agent waiting`,
          },
        ],
        `${perSide(sizes.backlog, 'reviews')}; one agent, its storage holding ${waiting} other suspended runs (and each earlier sample's finished ones)`,
      ),
    )
  }
  if (!ours.workflow || !peer.workflow) return out
  const step: RunShape = { kind: 'step' }
  for (const side of sides) side.workflow?.register(step)
  log('beside the peer: workflow step resumes')
  const stepOrders = await inBothOrders(sides, sizes.step, workflowSample(env, step))
  out.push(
    ...rows(
      sides,
      stepOrders,
      [{ measure: 'item', scenario: 'workflow step: answered decision → resumed, protected step ran' }],
      perSide(sizes.step, 'resumes'),
    ),
  )
  for (const size of sizes.foreach) {
    const shape: RunShape = { kind: 'foreach', items: size.items }
    for (const side of sides) side.workflow?.register(shape)
    log(`beside the peer: .foreach of ${size.items} items`)
    const orders = await inBothOrders(sides, size, workflowSample(env, shape))
    out.push(
      ...rows(
        sides,
        orders,
        [
          { measure: 'start', scenario: `\`.foreach\` N=${size.items}: start, every item asked` },
          {
            measure: 'item',
            scenario: `\`.foreach\` item resumed by label, N=${size.items}`,
            peerTarget: 1.4,
          },
        ],
        `${perSide(size, `runs of ${size.items} items`)}; items resumed one by one, random order`,
      ),
    )
  }
  return out
}
