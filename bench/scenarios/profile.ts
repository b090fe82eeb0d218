/**
 * "Where the time goes" on the answer → resumed path: how many HTTP round
 * trips, review-store calls (each write is one commit) and Mastra
 * storage calls one resume makes, with their inclusive time, and a sampled
 * CPU profile of the resumes grouped by package or source module. Only the
 * resume is counted and sampled; starting and answering the run is not.
 */
import { Session } from 'node:inspector/promises'
import { relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { DEFAULT_START_CONCURRENCY } from '../../src/workflows/approval-workflows.js'
import type { BenchEnv } from '../lib/env.js'
import { agentReview, nativeApproval } from './agent-review.js'
import { batch, foreachOurs } from './multi-item.js'
import { type Around, resumeViaCallback, resumeViaDispatcher } from './resume.js'

const FOREACH_COUNTED = 10
const BATCH_COUNTED = 10

export interface CallBreakdown {
  path: string
  /** What one counted unit is: a resume, an open, an item started. */
  per: string
  resumes: number
  msPerResume: number
  rows: { key: string; perResume: number; msPerResume: number }[]
}

async function countCalls(
  env: BenchEnv,
  path: string,
  resumes: number,
  once: (operationId: string, around: Around) => Promise<number>,
  /** Resumes made by one call of `once` (a multi-item run resumes every item). */
  perOnce = 1,
  per = 'resume',
): Promise<CallBreakdown> {
  env.probe.reset()
  const counted: Around = async (body) => {
    env.probe.enabled = true
    try {
      return await body()
    } finally {
      env.probe.enabled = false
    }
  }
  let total = 0
  for (let index = 0; index < resumes; index++) total += await once(`${path}-count-${index}`, counted)
  const made = resumes * perOnce
  const rows = [...env.probe.calls.entries()]
    .map(([key, value]) => ({ key, perResume: value.calls / made, msPerResume: value.ms / made }))
    .sort((a, b) => b.msPerResume - a.msPerResume)
  env.probe.reset()
  return { path, per, resumes: made, msPerResume: total / made, rows }
}

/** Wraps `around` and adds up the time spent inside it (a batch calls it once per child, or once for its start). */
function summing(around: Around): { around: Around; ms: () => number } {
  let inside = 0
  return {
    around: async (body) => {
      const at = performance.now()
      try {
        return await around(body)
      } finally {
        inside += performance.now() - at
      }
    },
    ms: () => inside,
  }
}

export async function countPerResume(env: BenchEnv, resumes: number): Promise<CallBreakdown[]> {
  return [
    await countCalls(env, '`dispatcher.resumeDecision`', resumes, (id, around) =>
      resumeViaDispatcher(env, id, around),
    ),
    await countCalls(env, '`dispatcher.handleCallback`', resumes, (id, around) =>
      resumeViaCallback(env, id, around),
    ),
    // The agent's own Mastra (its LibSQL file) is counted too: its workflows and memory domains.
    await countCalls(env, '`resumePusharyAgentReview` (agent review)', resumes, (_id, around) =>
      agentReview(env, around, true).then((timing) => timing.resumeMs),
    ),
    await countCalls(env, 'native `approveToolCallGenerate` (same agent shape)', resumes, (_id, around) =>
      nativeApproval(env, around, true),
    ),
    // The open of the same agent review: its baseline is one create and one save.
    await countCalls(
      env,
      "`openPusharyAgentReview` (agent review opened; the review run is on the agent's Mastra)",
      resumes,
      (_id, around) => agentReview(env, undefined, true, around).then((timing) => timing.openMs),
      1,
      'open',
    ),
    // Multi-item: every item of one run is counted; the table is per item.
    await countCalls(
      env,
      `\`.foreach\` item resumed by label (${FOREACH_COUNTED} items of one run, each through \`resumeDecision\`)`,
      1,
      async (id, around) => (await foreachOurs(env, id, around)).reduce((a, b) => a + b, 0),
      FOREACH_COUNTED,
    ),
    await countCalls(
      env,
      `batch child resumed (${BATCH_COUNTED} children of one batch, each through \`resumeDecision\`; the last resumes the parent)`,
      1,
      async (_id, around) => {
        const counted = summing(around)
        await batch(env, BATCH_COUNTED, counted.around)
        return counted.ms()
      },
      BATCH_COUNTED,
    ),
    // The first pass of the same batch: every child run started and asked.
    await countCalls(
      env,
      `batch started (${BATCH_COUNTED} children, ${DEFAULT_START_CONCURRENCY} started at a time, so inclusive times overlap)`,
      1,
      async (_id, around) => {
        const counted = summing(around)
        await batch(env, BATCH_COUNTED, undefined, counted.around)
        return counted.ms()
      },
      BATCH_COUNTED,
      'item started',
    ),
  ]
}

interface ProfileNode {
  id: number
  callFrame: { url: string; functionName: string }
  children?: number[]
}

interface CpuProfile {
  nodes: ProfileNode[]
  samples: number[]
  timeDeltas: number[]
}

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

function category(url: string, functionName: string): string {
  if (url === '') {
    if (functionName === '(garbage collector)') return 'garbage collection'
    if (functionName === '(idle)') return '(idle: waiting on I/O, threads)'
    if (functionName === '(program)') return '(V8 / native, unattributed)'
    return `native: ${functionName || 'anonymous'}`
  }
  const modules = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)
  if (modules) return modules[1] ?? url
  if (url.includes('undici')) return 'Node fetch (undici)'
  if (url.startsWith('node:')) return 'Node core (http, streams, crypto, timers)'
  const local = relative(ROOT, url.startsWith('file:') ? fileURLToPath(url) : url)
  if (local.startsWith('src/server/')) return 'src/server (the local decision service, in process)'
  if (local.startsWith('bench/')) return 'bench harness'
  return local
}

/** Pseudo-frames of the profiler itself, and its own start/stop (`dispatch`), keep their own rows. */
const OWN_ROWS = new Set(['(garbage collector)', '(idle)', '(program)', '(root)', 'dispatch'])

/**
 * A sample in native code is charged to the JavaScript that called it: the
 * profiler names native addon frames after whatever symbol it finds nearby
 * (libsql's statement step showed up as V8's `ParseTask` in one process and
 * as `libsql_js::statement::Rows::js_next` in another), so the caller is the
 * only reliable name for that time.
 */
function sampleCategory(
  node: ProfileNode,
  nodes: ReadonlyMap<number, ProfileNode>,
  parents: ReadonlyMap<number, number>,
): string {
  const { url, functionName } = node.callFrame
  if (url !== '' || OWN_ROWS.has(functionName)) return category(url, functionName)
  for (let up = parents.get(node.id); up !== undefined; up = parents.get(up)) {
    const caller = nodes.get(up)
    if (caller && caller.callFrame.url !== '') return `${category(caller.callFrame.url, '')} (native code)`
  }
  return category(url, functionName)
}

export interface CpuShare {
  category: string
  msPerResume: number
  share: number
}

/** Samples the CPU during the timed part of `resumes` dispatcher resumes. */
export async function profileResumes(env: BenchEnv, resumes: number): Promise<CpuShare[]> {
  const session = new Session()
  session.connect()
  await session.post('Profiler.enable')
  await session.post('Profiler.setSamplingInterval', { interval: 200 })
  const totals = new Map<string, number>()
  const sampled: Around = async (body) => {
    await session.post('Profiler.start')
    try {
      return await body()
    } finally {
      const { profile } = (await session.post('Profiler.stop')) as unknown as { profile: CpuProfile }
      const nodes = new Map(profile.nodes.map((node) => [node.id, node]))
      const parents = new Map<number, number>()
      for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id)
      profile.samples.forEach((id, index) => {
        const node = nodes.get(id)
        if (!node) return
        const key = sampleCategory(node, nodes, parents)
        totals.set(key, (totals.get(key) ?? 0) + (profile.timeDeltas[index] ?? 0) / 1000)
      })
    }
  }
  try {
    for (let index = 0; index < resumes; index++) await resumeViaDispatcher(env, `profile-${index}`, sampled)
  } finally {
    await session.post('Profiler.disable')
    session.disconnect()
  }
  const sum = [...totals.values()].reduce((a, b) => a + b, 0)
  return [...totals.entries()]
    .map(([name, ms]) => ({ category: name, msPerResume: ms / resumes, share: sum > 0 ? ms / sum : 0 }))
    .sort((a, b) => b.msPerResume - a.msPerResume)
}
