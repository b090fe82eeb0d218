/**
 * Crash-point harness. Each path (the single workflow approval, the
 * multi-item batch) is driven in child OS processes that are killed with
 * SIGKILL at every stage of an approval; then fresh processes reconcile,
 * recover, and an operator settles what is left with the `pushary-mastra
 * reviews` command, deciding from the business records (the side-effect
 * table) exactly as docs/operations.md tells an operator to.
 *
 * Expected at every point: no protected action ever runs twice or without a
 * confirm `yes`; a review whose action ran is never left `pending`; every
 * interrupted review ends settled, with the reason recorded.
 *
 * A path is a table entry. The agent-review path runs a real Mastra `Agent`
 * (scripted model) whose refund tool is protected by `requireApproval`: the
 * test app's refund agent, reviewed through the package's agent review
 * workflow and resumed by the same dispatcher.
 */
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PusharyReview } from '../../src/store/review-schema.js'
import { createTestEnv, runFixture, type TestEnv } from '../helpers/mastra.js'
import { buildApp, EXTERNAL_ID, type TestApp } from '../workflows/fixtures/app.js'
import { openAgentRefund } from '../workflows/fixtures/refund-agent.js'
import { jsonOf, runCli } from './support/cli.js'
import type { ListedWithId } from './support/scenario.js'
import { allDecisions, allReviews, belongsTo, decisionBinding, effectCounts } from './support/scenario.js'

let env: TestEnv
let app: TestApp

beforeAll(async () => {
  env = await createTestEnv('crash-points')
  app = buildApp(env)
})

afterAll(async () => {
  await app?.close()
  await env?.close()
})

type Answer = 'yes' | 'no'

interface CrashPoint {
  /** The stage of the approval, as the reliability issue names it. */
  stage: string
  /** `start`: the kill hits the run's first pass; `resume`: the resume of the answered decisions. */
  phase: 'start' | 'resume'
  env: (ops: readonly string[]) => Record<string, string>
  /**
   * Who settles it: `recovery` (reconcile and `dispatcher.recover` alone) or
   * `operator` (the review ends `uncertain` and a person decides).
   */
  settledBy: 'recovery' | 'operator'
}

interface CrashPath {
  name: string
  /** `workflow`: a registered workflow started with `input`; `agent`: the refund agent asked to refund the one op. */
  kind: 'workflow' | 'agent'
  workflowId: string
  answers: readonly Answer[]
  input(ops: readonly string[]): unknown
  /** The review that governs the protected step of `op` (its own, or the batch parent's). */
  governing(reviews: readonly PusharyReview[], op: string): PusharyReview | undefined
  points: readonly CrashPoint[]
}

const question = (op: string) => ({ operationId: op, question: `Refund ${op}?` })

/**
 * The resume-phase points one approval shares on the workflow and agent paths:
 * after the claim, inside the approval step (Mastra resume #1, killed once
 * Mastra marked the run running), inside the protected step or tool before and
 * after its side effect, before the finish and during the finish write.
 */
function resumePoints(names: { approval: string; action: 'step' | 'tool'; ran: string }): CrashPoint[] {
  return [
    {
      stage: 'after the claim',
      phase: 'resume',
      env: () => ({ PUSHARY_TEST_CRASH_AFTER_CLAIM: '1' }),
      settledBy: 'recovery',
    },
    {
      stage: `inside ${names.approval}`,
      phase: 'resume',
      env: () => ({ PUSHARY_TEST_CRASH_IN_RESUME: '1' }),
      settledBy: 'recovery',
    },
    {
      stage: `inside the protected ${names.action}, before its side effect`,
      phase: 'resume',
      env: ([op]) => ({ PUSHARY_TEST_CRASH_IN_REFUND: op as string }),
      settledBy: 'operator',
    },
    {
      stage: `inside the protected ${names.action}, after its side effect`,
      phase: 'resume',
      env: ([op]) => ({ PUSHARY_TEST_CRASH_AFTER_REFUND: op as string }),
      settledBy: 'operator',
    },
    {
      stage: `after ${names.ran}, before the review is finished`,
      phase: 'resume',
      env: () => ({ PUSHARY_TEST_CRASH_BEFORE_FINISH: '1' }),
      settledBy: 'recovery',
    },
    {
      stage: 'during the finish write',
      phase: 'resume',
      env: () => ({ PUSHARY_TEST_CRASH_DURING_FINISH: '1' }),
      settledBy: 'recovery',
    },
  ]
}

const PATHS: readonly CrashPath[] = [
  {
    name: 'workflow',
    kind: 'workflow',
    workflowId: 'refund-single',
    answers: ['yes'],
    input: ([op]) => question(op as string),
    governing: (reviews, op) =>
      reviews.find((review) => review.target === 'workflow-step' && review.operationId === op),
    points: [
      {
        stage: 'after the decision is created, before the review is saved',
        phase: 'start',
        env: () => ({ PUSHARY_TEST_CRASH_BEFORE_SAVE: '1' }),
        settledBy: 'recovery',
      },
      {
        stage: 'after the review is saved, before the suspension is persisted',
        phase: 'start',
        env: () => ({ PUSHARY_TEST_CRASH_AFTER_SAVE: '1' }),
        settledBy: 'recovery',
      },
      ...resumePoints({ approval: "the approval step's resume pass", action: 'step', ran: 'it ran' }),
    ],
  },
  {
    // Two items: the first approved, the second denied. In the first pass the
    // parent's own review is saved, claimed and released before the items'
    // saves (save 1, claim 1, finish 1); in the resume phase claims, finishes
    // and Mastra resumes count in the order item 0, item 1, parent.
    name: 'batch',
    kind: 'workflow',
    workflowId: 'refund-batch',
    answers: ['yes', 'no'],
    input: (ops) => ops.map(question),
    governing: (reviews) => reviews.find((review) => review.target === 'batch-parent'),
    points: [
      {
        stage: "after the parent's fan-out claim, before any item is asked",
        phase: 'start',
        env: () => ({ PUSHARY_TEST_CRASH_AFTER_CLAIM: '1' }),
        settledBy: 'recovery',
      },
      {
        stage: "while fanning out: after an item's decision is created, before its review is saved",
        phase: 'start',
        env: () => ({ PUSHARY_TEST_CRASH_BEFORE_SAVE: '3' }),
        settledBy: 'recovery',
      },
      {
        stage: "while fanning out: after an item's review is saved, before its suspension is persisted",
        phase: 'start',
        env: () => ({ PUSHARY_TEST_CRASH_AFTER_SAVE: '3' }),
        settledBy: 'recovery',
      },
      {
        stage: "after the fan-out released the parent's claim, before the parent's suspension is persisted",
        phase: 'start',
        env: () => ({ PUSHARY_TEST_CRASH_AFTER_FINISH: '1' }),
        settledBy: 'recovery',
      },
      {
        stage: "after an item's claim",
        phase: 'resume',
        env: () => ({ PUSHARY_TEST_CRASH_AFTER_CLAIM: '2' }),
        settledBy: 'recovery',
      },
      {
        stage: "inside the last item's resume pass",
        phase: 'resume',
        env: () => ({ PUSHARY_TEST_CRASH_IN_RESUME: '2' }),
        settledBy: 'recovery',
      },
      {
        stage: 'after the last item ran, before its review is finished',
        phase: 'resume',
        env: () => ({ PUSHARY_TEST_CRASH_BEFORE_FINISH: '2' }),
        settledBy: 'recovery',
      },
      {
        stage: "during the last item's finish write",
        phase: 'resume',
        env: () => ({ PUSHARY_TEST_CRASH_DURING_FINISH: '2' }),
        settledBy: 'recovery',
      },
      {
        stage: 'after the last item finished, before the parent is resumed',
        phase: 'resume',
        env: () => ({ PUSHARY_TEST_CRASH_AFTER_FINISH: '2' }),
        settledBy: 'recovery',
      },
      {
        stage: "after the parent's claim, while the parent is being resumed",
        phase: 'resume',
        env: () => ({ PUSHARY_TEST_CRASH_AFTER_CLAIM: '3' }),
        settledBy: 'recovery',
      },
      {
        stage: "inside the parent's protected step, after its side effect",
        phase: 'resume',
        env: ([op]) => ({ PUSHARY_TEST_CRASH_AFTER_REFUND_ITEM: op as string }),
        settledBy: 'operator',
      },
      {
        stage: "after the parent's run finished, before its review is finished",
        phase: 'resume',
        env: () => ({ PUSHARY_TEST_CRASH_BEFORE_FINISH: '3' }),
        settledBy: 'recovery',
      },
    ],
  },
  {
    // One refund the model asks for, approved on the phone. Claims, finishes
    // and saves count in the resuming (or opening) process only.
    name: 'agent',
    kind: 'agent',
    workflowId: 'pushary-agent-review',
    answers: ['yes'],
    input: ([op]) => op,
    governing: (reviews) => reviews.find((review) => review.target === 'agent'),
    points: [
      {
        stage: 'after the review is opened and saved',
        phase: 'start',
        env: () => ({ PUSHARY_TEST_CRASH_AFTER_SAVE: '1' }),
        settledBy: 'recovery',
      },
      ...resumePoints({
        approval: "the review run's approval step, before the native resume",
        action: 'tool',
        ran: 'the tool ran',
      }),
    ],
  },
]

/** `PUSHARY_CRASH_PATHS=agent,batch` runs only those paths (replaying one while debugging). */
const ONLY = (process.env.PUSHARY_CRASH_PATHS ?? '').split(',').filter(Boolean)

interface Scenario {
  path: CrashPath
  point: CrashPoint
  runId: string
  ops: string[]
}

function answerOf(scenario: Scenario, op: string): Answer {
  return scenario.path.answers[scenario.ops.indexOf(op)] as Answer
}

/** Runs `tasks` at most `width` at a time (the machine has two cores). */
async function pool<T>(tasks: readonly (() => Promise<T>)[], width: number): Promise<T[]> {
  const results: T[] = new Array(tasks.length)
  let next = 0
  await Promise.all(
    Array.from({ length: Math.min(width, tasks.length) }, async () => {
      while (next < tasks.length) {
        const index = next++
        results[index] = await (tasks[index] as () => Promise<T>)()
      }
    }),
  )
  return results
}

async function killed(args: string[], crash: Record<string, string>): Promise<void> {
  await expect(runFixture(args, { env: crash })).rejects.toThrow(/SIGKILL/)
}

/**
 * The scenario and op a decision belongs to: by the workflow binding in its
 * context, or for an agent review (whose context binds the review workflow
 * run) by its saved review's agent run.
 */
function ownerOf(
  decision: ListedWithId,
  reviews: readonly PusharyReview[],
  scenarios: readonly Scenario[],
): { scenario: Scenario; op: string } | null {
  const review = reviews.find((candidate) => candidate.decisionId === decision.decisionId)
  if (review?.target === 'agent') {
    const scenario = scenarios.find((candidate) => belongsTo(review, candidate.runId))
    return scenario ? { scenario, op: scenario.ops[0] as string } : null
  }
  const binding = decisionBinding(decision)
  const scenario = binding && scenarios.find((candidate) => belongsTo(binding, candidate.runId))
  return scenario && binding ? { scenario, op: binding.operationId } : null
}

/** Answers every still-pending decision of the scenario as its item says. */
async function answerOpen(scenarios: readonly Scenario[]): Promise<void> {
  const reviews = await allReviews(app.store)
  for (const decision of await allDecisions(env.client)) {
    if (decision.status !== 'pending') continue
    const owner = ownerOf(decision, reviews, scenarios)
    if (owner) await env.client.decisions.answer(decision.decisionId, answerOf(owner.scenario, owner.op))
  }
}

async function crash(path: CrashPath, point: CrashPoint): Promise<Scenario> {
  const tag = randomUUID().slice(0, 8)
  const runId = `crash-${path.name}-${tag}`
  const ops = path.answers.map((_, index) => `op-${tag}-${index}`)
  const scenario: Scenario = { path, point, runId, ops }
  if (path.kind === 'agent') return crashAgent(scenario)
  const start = JSON.stringify({ workflowId: path.workflowId, input: path.input(ops), runId })
  if (point.phase === 'start') {
    await killed(['start', env.dir, start], point.env(ops))
    await answerOpen([scenario])
    return scenario
  }
  const workflow = app.mastra.getWorkflowById(path.workflowId as never) as unknown as {
    createRun(o: {
      runId: string
    }): Promise<{ start(p: { inputData: unknown }): Promise<{ status: string }> }>
  }
  const run = await workflow.createRun({ runId })
  expect((await run.start({ inputData: path.input(ops) })).status).toBe('suspended')
  await answerOpen([scenario])
  const reviews = (await allReviews(app.store)).filter((review) => belongsTo(review, runId))
  const ids = ops.map(
    (op) =>
      reviews.find((review) => review.target === 'workflow-step' && review.operationId === op)
        ?.decisionId as string,
  )
  await killed(['resume-decisions', env.dir, JSON.stringify(ids)], point.env(ops))
  return scenario
}

/** The agent path: the model asks for the refund (agent run ID = the scenario's run ID), a review is opened. */
async function crashAgent(scenario: Scenario): Promise<Scenario> {
  const { point, runId, ops } = scenario
  const orderId = ops[0] as string
  if (point.phase === 'start') {
    await killed(['agent-start', env.dir, JSON.stringify({ orderId, runId })], point.env(ops))
    await answerOpen([scenario])
    return scenario
  }
  const { decisionId } = await openAgentRefund(app, EXTERNAL_ID, orderId, runId)
  await answerOpen([scenario])
  await killed(['resume-decisions', env.dir, JSON.stringify([decisionId])], point.env(ops))
  return scenario
}

/** No action ran twice or unapproved, and none that ran hides behind a `pending` review. */
async function checkSafe(scenarios: readonly Scenario[]): Promise<void> {
  const counts = await effectCounts(env.dir)
  const reviews = await allReviews(app.store)
  for (const scenario of scenarios) {
    const mine = reviews.filter((review) => belongsTo(review, scenario.runId))
    for (const op of scenario.ops) {
      const ran = counts.get(op) ?? 0
      const label = `${scenario.path.name} / ${scenario.point.stage} / ${op}`
      expect(ran, label).toBeLessThanOrEqual(answerOf(scenario, op) === 'yes' ? 1 : 0)
      if (ran > 0) expect(scenario.path.governing(mine, op)?.state, label).not.toBe('pending')
    }
  }
}

/** Every review of the scenarios that is not settled yet (or a decision without one). */
async function unsettled(scenarios: readonly Scenario[]): Promise<string[]> {
  const reviews = await allReviews(app.store)
  const ids = new Set<string>()
  for (const review of reviews) {
    if (!scenarios.some((scenario) => belongsTo(review, scenario.runId))) continue
    if (review.state === 'pending' || review.state === 'resuming') ids.add(review.decisionId)
  }
  for (const decision of await allDecisions(env.client)) {
    const binding = decisionBinding(decision)
    if (!binding || !scenarios.some((scenario) => belongsTo(binding, scenario.runId))) continue
    if (!reviews.some((review) => review.decisionId === decision.decisionId)) ids.add(decision.decisionId)
  }
  return [...ids]
}

describe('SIGKILL at every stage of an approval, then fresh processes recover', () => {
  it('never runs an action twice or unapproved, and settles every interrupted review with a reason', async () => {
    const cases = PATHS.filter((path) => ONLY.length === 0 || ONLY.includes(path.name)).flatMap((path) =>
      path.points.map((point) => ({ path, point })),
    )
    const scenarios = await pool(
      cases.map(
        ({ path, point }) =>
          () =>
            crash(path, point),
      ),
      3,
    )
    await checkSafe(scenarios)

    // A fresh process reconciles: it may finish what is safely resumable, but
    // must not re-run anything or hide an action that ran.
    await runFixture(['reconcile', env.dir, JSON.stringify({ limit: 1000 })])
    await checkSafe(scenarios)
    const afterReconcile = await allReviews(app.store)
    for (const scenario of scenarios) {
      const mine = afterReconcile.filter((review) => belongsTo(review, scenario.runId))
      const counts = await effectCounts(env.dir)
      for (const op of scenario.ops) {
        if ((counts.get(op) ?? 0) === 0) continue
        expect(['resuming', 'uncertain', 'completed']).toContain(scenario.path.governing(mine, op)?.state)
      }
    }

    // Fresh processes recover whatever is left, then reconcile what the
    // recovery made resumable (restarted runs ask again; the answers are given).
    for (let round = 0; round < 3; round++) {
      const open = await unsettled(scenarios)
      if (open.length === 0) break
      await runFixture(['recover', env.dir, JSON.stringify(open)])
      await answerOpen(scenarios)
      await runFixture(['reconcile', env.dir, JSON.stringify({ limit: 1000 })])
      await checkSafe(scenarios)
    }

    // The operator settles every uncertain review from the business records.
    const db = join(env.dir, 'reviews.db')
    const listed = await runCli(['reviews', 'list', '--state', 'uncertain,resuming', '--db', db, '--json'])
    expect(listed.code).toBe(0)
    const counts = await effectCounts(env.dir)
    const operated = new Set<string>()
    for (const review of jsonOf<PusharyReview[]>(listed)) {
      const scenario = scenarios.find((candidate) => belongsTo(review, candidate.runId))
      if (!scenario) continue
      const ran = scenario.ops.some((op) => (counts.get(op) ?? 0) > 0)
      // Nothing in the ledger: the run tells whether the approval still waits
      // (reopen it) or is past it (it will never run: stale).
      const shown = await runCli([
        'reviews',
        'show',
        review.decisionId,
        '--db',
        db,
        '--mastra-db',
        join(env.dir, 'mastra.db'),
        '--json',
      ])
      expect(shown.code, shown.stderr).toBe(0)
      const { run } = jsonOf<{ run: { status: string; approval: string | null } | null }>(shown)
      const outcome = ran ? 'completed' : run?.approval === 'suspended' ? 'pending' : 'stale'
      const result = await runCli([
        'reviews',
        'recover',
        review.decisionId,
        outcome,
        '--reason',
        ran ? 'refund found in the ledger' : `no refund in the ledger; run ${run?.status}`,
        '--db',
        db,
      ])
      expect(result.code, result.stderr).toBe(0)
      operated.add(scenario.runId)
    }
    // A reopened review is resumed by the next reconcile, like any answer.
    await runFixture(['reconcile', env.dir, JSON.stringify({ limit: 1000 })])
    await checkSafe(scenarios)

    const final = await allReviews(app.store)
    const finalCounts = await effectCounts(env.dir)
    const summary: string[] = []
    for (const scenario of scenarios) {
      const label = `${scenario.path.name} / ${scenario.point.stage}`
      const mine = final.filter((review) => belongsTo(review, scenario.runId))
      expect(mine.length, label).toBeGreaterThan(0)
      for (const review of mine) {
        expect(['completed', 'stale'], `${label} ${review.target}`).toContain(review.state)
        const history = await app.store.history(review.decisionId)
        const interrupted = history.some((entry) =>
          ['RECLAIM', 'FAILED_AFTER_CLAIM', 'NOT_APPLIED'].includes(entry.event ?? ''),
        )
        if (interrupted) {
          const last = history.at(-1)
          expect(last?.reason ?? history.findLast((entry) => entry.reason)?.reason, label).toBeTruthy()
        }
      }
      for (const op of scenario.ops) {
        const ran = finalCounts.get(op) ?? 0
        const governing = scenario.path.governing(mine, op)
        if (answerOf(scenario, op) === 'no') expect(ran, `${label} ${op}`).toBe(0)
        else if (governing?.state === 'stale') expect(ran, `${label} ${op}`).toBe(0)
        else expect(ran, `${label} ${op}`).toBe(1)
      }
      const settledBy = operated.has(scenario.runId) ? 'operator' : 'recovery'
      summary.push(`${label}: ${settledBy}`)
      expect(settledBy, label).toBe(scenario.point.settledBy)
    }
    console.log(
      `crash points: ${scenarios.length} (${PATHS.filter((path) =>
        scenarios.some((scenario) => scenario.path === path),
      )
        .map((path) => `${path.name} ${path.points.length}`)
        .join(', ')})\n${summary.join('\n')}`,
    )
  }, 600_000)
})
