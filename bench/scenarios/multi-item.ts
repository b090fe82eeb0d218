/**
 * Multi-item approvals, issue 12 target 4: one batch of N items (a child run
 * per item), every decision answered, then each child resumed through the
 * dispatcher in random order; the last child resumes the parent once.
 * Per item = (start + resume) / N.
 */
import type { BenchEnv } from '../lib/env.js'
import type { Row } from '../lib/report.js'
import { shuffled } from '../lib/stats.js'

const GROUP = '4. Multi-item'

async function pendingReviews(env: BenchEnv) {
  const all: Awaited<ReturnType<BenchEnv['store']['listByState']>> = []
  for (;;) {
    const after = all.at(-1)?.decisionId
    const page = await env.store.listByState('pending', { limit: 1000, ...(after ? { after } : {}) })
    all.push(...page)
    if (page.length < 1000) return all
  }
}

async function batch(env: BenchEnv, count: number): Promise<{ startMs: number; resumeMs: number }> {
  const items = Array.from({ length: count }, (_, index) => ({
    operationId: `batch-${count}-${index}`,
    question: `Item ${index}?`,
    type: 'confirm' as const,
  }))
  const workflow = env.mastra.getWorkflow('batch')
  const run = await workflow.createRun()
  let started = performance.now()
  const first = await run.start({ inputData: items })
  if (first.status !== 'suspended') throw new Error(`batch start ended ${first.status}`)
  const startMs = performance.now() - started
  const reviews = (await pendingReviews(env)).filter(
    (review) => review.target === 'workflow-step' && review.parent?.runId === run.runId,
  )
  if (reviews.length !== count) throw new Error(`expected ${count} child reviews, found ${reviews.length}`)
  for (const review of reviews) await env.client.decisions.answer(review.decisionId, 'yes')
  started = performance.now()
  for (const review of shuffled(reviews)) {
    const result = await env.dispatcher.resumeDecision(review.decisionId)
    if (result.status !== 'resumed') throw new Error(`resume ended ${result.status}`)
  }
  const resumeMs = performance.now() - started
  const state = await workflow.getWorkflowRunById(run.runId)
  if (state?.status !== 'success') throw new Error(`batch ended ${state?.status}`)
  return { startMs, resumeMs }
}

export async function benchMultiItem(
  env: BenchEnv,
  options: { small: number; large: number },
): Promise<Row[]> {
  await batch(env, options.small) // warm-up
  const small = await batch(env, options.small)
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
      target: '< 5 ms per item',
      met: perSmall < 5,
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
