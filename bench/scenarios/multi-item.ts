/**
 * Multi-item approvals, issue 12 target 4: one batch of N items (a child run
 * per item), every decision answered, then each child resumed through the
 * dispatcher in random order; the last child resumes the parent once.
 * Per item = (start + resume) / N. And issue 21 target 4: a `.foreach` of
 * ten items, each suspended under its own label, resumed one by one through
 * the dispatcher, beside bare Mastra's same foreach resumed by label and the
 * floor of a verified item resume (that bare resume + one GET + two durable
 * commits), in turning order.
 */
import type { Client } from '@libsql/client'
import type { PusharyReview } from '../../src/store/review-schema.js'
import { type BenchEnv, EXTERNAL_ID } from '../lib/env.js'
import type { Row } from '../lib/report.js'
import { inTurningOrder, shuffled, summarize, timed } from '../lib/stats.js'
import { betweenTwoCommits, floorDatabase } from './resume.js'

const GROUP = '4. Multi-item'

export async function pendingReviews(env: BenchEnv) {
  const all: Awaited<ReturnType<BenchEnv['store']['listByState']>> = []
  for (;;) {
    const after = all.at(-1)?.decisionId
    const page = await env.store.listByState('pending', { limit: 1000, ...(after ? { after } : {}) })
    all.push(...page)
    if (page.length < 1000) return all
  }
}

/**
 * One batch of `count` items; `around` wraps each child's resume and
 * `aroundStart` the batch run's start (the profile counts calls inside them).
 */
export async function batch(
  env: BenchEnv,
  count: number,
  around: Around = (body) => body(),
  aroundStart: Around = (body) => body(),
): Promise<{ startMs: number; resumeMs: number; review: PusharyReview }> {
  const items = Array.from({ length: count }, (_, index) => ({
    operationId: `batch-${count}-${index}`,
    question: `Item ${index}?`,
    type: 'confirm' as const,
  }))
  const workflow = env.mastra.getWorkflow('batch')
  const run = await workflow.createRun()
  let started = performance.now()
  const first = await aroundStart(() => run.start({ inputData: items }))
  if (first.status !== 'suspended') throw new Error(`batch start ended ${first.status}`)
  const startMs = performance.now() - started
  const reviews = (await pendingReviews(env)).filter(
    (review) => review.target === 'workflow-step' && review.parent?.runId === run.runId,
  )
  if (reviews.length !== count) throw new Error(`expected ${count} child reviews, found ${reviews.length}`)
  for (const review of reviews) await env.client.decisions.answer(review.decisionId, 'yes')
  started = performance.now()
  for (const review of shuffled(reviews)) {
    const result = await around(() => env.dispatcher.resumeDecision(review.decisionId))
    if (result.status !== 'resumed') throw new Error(`resume ended ${result.status}`)
  }
  const resumeMs = performance.now() - started
  const state = await workflow.getWorkflowRunById(run.runId)
  if (state?.status !== 'success') throw new Error(`batch ended ${state?.status}`)
  return { startMs, resumeMs, review: reviews[0] as PusharyReview }
}

interface BareRun {
  runId: string
  start(p: { inputData: unknown }): Promise<{ status: string }>
  resume(p: { label: string; resumeData: unknown }): Promise<{ status: string }>
}
const bareWorkflow = (env: BenchEnv) =>
  env.mastra.getWorkflow('bare') as unknown as { createRun(o?: { runId?: string }): Promise<BareRun> }

/**
 * The floor of one durable item, what no grouping-free design can skip: a
 * bare Mastra run started (it suspends), one decision created through the
 * client and one review saved (start); then one GET of the answered
 * decision, two single-statement commits and the bare resume by label.
 * The person's answer between the two halves is not timed, as in `batch`.
 */
async function itemFloor(env: BenchEnv, db: Client, template: PusharyReview, n: number): Promise<number> {
  const operationId = `item-floor-${n}`
  const input = { operationId, question: `Item floor ${n}?`, type: 'confirm' as const }
  const start = await timed(async () => {
    const run = await bareWorkflow(env).createRun()
    const first = await run.start({ inputData: input })
    if (first.status !== 'suspended') throw new Error(`item floor start ended ${first.status}`)
    const asked = await env.client.decisions.create({ externalId: EXTERNAL_ID, ...input })
    await env.store.save({
      ...template,
      runId: run.runId,
      operationId,
      decisionId: asked.decisionId,
      correlationId: asked.decisionId,
    } as PusharyReview)
    return { runId: run.runId, decisionId: asked.decisionId }
  })
  await env.client.decisions.answer(start.value.decisionId, 'yes')
  const resume = await timed(async () => {
    const decision = await env.client.decisions.get(start.value.decisionId)
    const resumed = await betweenTwoCommits(db, operationId, async () => {
      const run = await bareWorkflow(env).createRun({ runId: start.value.runId })
      return run.resume({ label: operationId, resumeData: { answer: 'yes' } })
    })
    return { decision, resumed }
  })
  if (resume.value.decision.status !== 'answered' || resume.value.resumed.status !== 'success') {
    throw new Error('item floor did not resume')
  }
  return start.ms + resume.ms
}

export async function benchMultiItem(
  env: BenchEnv,
  options: { small: number; large: number },
): Promise<Row[]> {
  await batch(env, options.small) // warm-up
  const small = await batch(env, options.small)
  const template = small.review
  const db = await floorDatabase(env, 'item-floor')
  const floors: number[] = []
  try {
    for (let n = 0; n < options.small * 2; n++) floors.push(await itemFloor(env, db, template, n))
  } finally {
    db.close()
  }
  const floor = summarize(floors.slice(options.small)).median
  const large = await batch(env, options.large)
  const perSmall = (small.startMs + small.resumeMs) / options.small
  const perLarge = (large.startMs + large.resumeMs) / options.large
  const params = (n: number, r: { startMs: number; resumeMs: number }) =>
    `${n} items: start ${r.startMs.toFixed(0)} ms + resume ${r.resumeMs.toFixed(0)} ms, random order`
  return [
    {
      group: GROUP,
      scenario: `per-item cost at ${options.small} items (start + verified resume)`,
      params: params(options.small, small),
      unit: 'ms/item',
      median: perSmall,
      baseline: { label: 'per-item floor', value: floor },
      target: '< 5 ms per item',
      met: perSmall < 5,
    },
    {
      group: GROUP,
      scenario:
        'per-item floor: bare run start + one create + one save, then one GET + two commits + bare resume',
      params: `${options.small} items one after another after ${options.small} warm-ups, the answer not timed`,
      unit: 'ms/item',
      median: floor,
    },
    {
      group: GROUP,
      scenario: `per-item cost at ${options.large} items (start + verified resume)`,
      params: params(options.large, large),
      unit: 'ms/item',
      median: perLarge,
      baseline: { label: `per item at ${options.small}`, value: perSmall },
      target: `≤ 2× of ${options.small} items, < 5 ms per item`,
      met: perLarge <= 2 * perSmall && perLarge < 5,
    },
  ]
}

const FOREACH_ITEMS = 10

const foreachInput = (tag: string) =>
  Array.from({ length: FOREACH_ITEMS }, (_, index) => ({
    operationId: `${tag}-${index}`,
    question: `Item ${tag} ${index}?`,
    type: 'confirm' as const,
  }))

interface ForeachRun {
  runId: string
  start(p: { inputData: unknown }): Promise<{ status: string }>
  resume(p: { label: string; resumeData: unknown }): Promise<{ status: string }>
}
const foreachWorkflow = (env: BenchEnv, key: 'foreach' | 'bareForeach') =>
  env.mastra.getWorkflow(key) as unknown as { createRun(o?: { runId?: string }): Promise<ForeachRun> }

type Around = <T>(body: () => Promise<T>) => Promise<T>

/**
 * Ours: every item's answered decision resumed through the dispatcher; ms
 * per item. `around` wraps each item's timed resume (the profile counts calls inside it).
 */
export async function foreachOurs(
  env: BenchEnv,
  tag: string,
  around: Around = (body) => body(),
): Promise<number[]> {
  const run = await foreachWorkflow(env, 'foreach').createRun()
  const first = await run.start({ inputData: foreachInput(tag) })
  if (first.status !== 'suspended') throw new Error(`foreach start ended ${first.status}`)
  const reviews = (await pendingReviews(env)).filter((review) => review.runId === run.runId)
  if (reviews.length !== FOREACH_ITEMS)
    throw new Error(`expected ${FOREACH_ITEMS} reviews, found ${reviews.length}`)
  for (const review of reviews) await env.client.decisions.answer(review.decisionId, 'yes')
  const samples: number[] = []
  for (const review of shuffled(reviews)) {
    const { ms, value } = await around(() => timed(() => env.dispatcher.resumeDecision(review.decisionId)))
    if (value.status !== 'resumed') throw new Error(`foreach item resume ended ${value.status}`)
    samples.push(ms)
  }
  const state = await env.mastra.getWorkflow('foreach').getWorkflowRunById(run.runId)
  if (state?.status !== 'success') throw new Error(`foreach ended ${state?.status}`)
  return samples
}

/** Bare Mastra by label; with `db`, the floor: one GET of an answered decision and two commits around each. */
async function foreachBare(env: BenchEnv, tag: string, db?: Client): Promise<number[]> {
  const started = await foreachWorkflow(env, 'bareForeach').createRun()
  const first = await started.start({ inputData: foreachInput(tag) })
  if (first.status !== 'suspended') throw new Error(`bare foreach start ended ${first.status}`)
  const asked = db
    ? await env.client.decisions.create({
        externalId: 'bench-foreach-floor',
        question: `Items ${tag}?`,
        type: 'confirm',
      })
    : undefined
  if (asked) await env.client.decisions.answer(asked.decisionId, 'yes')
  const samples: number[] = []
  let last = ''
  for (const index of shuffled([...Array(FOREACH_ITEMS).keys()])) {
    const label = `${tag}-${index}`
    const { ms, value } = await timed(async () => {
      if (asked) await env.client.decisions.get(asked.decisionId)
      const resume = async () => {
        const run = await foreachWorkflow(env, 'bareForeach').createRun({ runId: started.runId })
        return run.resume({ label, resumeData: { answer: 'yes' } })
      }
      return db ? betweenTwoCommits(db, label, resume) : resume()
    })
    last = value.status
    samples.push(ms)
  }
  if (last !== 'success') throw new Error(`bare foreach ended ${last}`)
  return samples
}

export async function benchForeach(
  env: BenchEnv,
  options: { warmups: number; rounds: number },
): Promise<Row[]> {
  const db = await floorDatabase(env, 'foreach-floor')
  let taken: { ours: number[][]; bare: number[][]; floor: number[][] }
  try {
    taken = await inTurningOrder(
      { warmups: options.warmups, samples: options.rounds },
      {
        ours: (round) => foreachOurs(env, `fo${round}`),
        bare: (round) => foreachBare(env, `fb${round}`),
        floor: (round) => foreachBare(env, `ff${round}`, db),
      },
    )
  } finally {
    db.close()
  }
  const [ours, bare, floor] = [taken.ours.flat(), taken.bare.flat(), taken.floor.flat()]
  const params = `${options.rounds} foreach runs of ${FOREACH_ITEMS} items after ${options.warmups} warm-up, items resumed one by one in random order`
  const o = summarize(ours)
  const b = summarize(bare)
  const f = summarize(floor)
  return [
    {
      group: GROUP,
      scenario: `\`.foreach\` item at N=${FOREACH_ITEMS}: answered decision → \`dispatcher.resumeDecision\` (by label) → item done`,
      params,
      unit: 'ms',
      median: o.median,
      p95: o.p95,
      p99: o.p99,
      baseline: {
        label: 'foreach floor: bare resume by label + one GET + two durable commits',
        value: f.median,
      },
      target: '≤ 1.2× floor',
      met: o.median <= 1.2 * f.median,
    },
    {
      group: GROUP,
      scenario: `foreach floor at N=${FOREACH_ITEMS}: bare resume by label + GET + two single-statement commits`,
      params,
      unit: 'ms',
      median: f.median,
      p95: f.p95,
      p99: f.p99,
      baseline: { label: 'bare Mastra `run.resume({ label })` of a foreach item', value: b.median },
    },
  ]
}
