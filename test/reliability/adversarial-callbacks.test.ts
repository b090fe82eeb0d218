/**
 * Adversarial callbacks. Many decisions with different fates (approved,
 * denied, cancelled, expired); the genuine signed callbacks the service sent
 * are captured, then delivered to the dispatcher duplicated, shuffled and
 * replayed, together with forged, unsigned, truncated and tampered ones,
 * signed lies (a body that says `yes` for a denied decision, as a leaked
 * secret would allow), callbacks for decisions that have no saved review
 * (another customer's decision among them), while two other processes run
 * `reconcile` against the same files. The interleaving comes from a seeded
 * generator (`PUSHARY_SEED` replays one; the seed is in every failure).
 *
 * Expected: every approved refund runs exactly once, every other one never;
 * forged ones get 401, malformed 400, retryable outcomes 503, the rest 200
 * with a status of the contract; nothing answers 500.
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SIGNATURE_HEADER, signWebhookBody } from '../../src/pushary/callbacks.js'
import { RETRYABLE_DISPATCH_STATUSES } from '../../src/resume/dispatch-types.js'
import {
  createTestEnv,
  readEnvFile,
  runFixture,
  startFetchServer,
  type TestEnv,
  waitFor,
  writeEnvFile,
} from '../helpers/mastra.js'
import { buildApp, type TestApp } from '../workflows/fixtures/app.js'
import { allDecisions, decisionBinding, effectCounts } from './support/scenario.js'

const SEED = Number(process.env.PUSHARY_SEED ?? Math.floor(Math.random() * 2 ** 31))
const RUNS = Number(process.env.PUSHARY_ADVERSARIAL_RUNS ?? 24)

/** mulberry32: a small seeded generator, so a failing interleaving can be replayed. */
function seeded(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
const random = seeded(SEED)
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T
function shuffle<T>(items: T[]): T[] {
  for (let index = items.length - 1; index > 0; index--) {
    const other = Math.floor(random() * (index + 1))
    ;[items[index], items[other]] = [items[other] as T, items[index] as T]
  }
  return items
}

type Fate = 'yes' | 'no' | 'cancel' | 'expire'
interface Run {
  op: string
  fate: Fate
  decisionId: string
}
interface Captured {
  body: string
  signature: string
}
type Kind =
  | 'genuine'
  | 'replay'
  | 'forged-signature'
  | 'missing-signature'
  | 'truncated-signature'
  | 'tampered-body'
  | 'tampered-context'
  | 'malformed-signed'
  | 'signed-lie'
  | 'no-review'
interface Delivery {
  kind: Kind
  decisionId: string
  body: string
  signature: string | null
}

let env: TestEnv
let app: TestApp
let capture: Awaited<ReturnType<typeof startFetchServer>>
const captured: Captured[] = []

beforeAll(async () => {
  env = await createTestEnv('adversarial', { sweepIntervalMs: 100 })
  capture = await startFetchServer(async (request) => {
    captured.push({ body: await request.text(), signature: request.headers.get(SIGNATURE_HEADER) ?? '' })
    return new Response('ok')
  })
  writeEnvFile({ ...readEnvFile(env.dir), callbackUrl: `${capture.url}/callback` })
  app = buildApp(readEnvFile(env.dir))
})

afterAll(async () => {
  await app?.close()
  await capture?.close()
  await env?.close()
})

function request(delivery: Delivery): Request {
  const headers = new Headers({ 'content-type': 'application/json' })
  if (delivery.signature !== null) headers.set(SIGNATURE_HEADER, delivery.signature)
  return new Request('http://127.0.0.1/callback', { method: 'POST', headers, body: delivery.body })
}

const signed = (body: string): string => signWebhookBody(body, env.webhookSecret)

async function startRun(fate: Fate): Promise<Run> {
  const op = `adv-${randomUUID().slice(0, 8)}`
  const workflowId = fate === 'expire' ? 'refund-expiring' : 'refund-single'
  const workflow = app.mastra.getWorkflowById(workflowId as never) as unknown as {
    createRun(): Promise<{ runId: string; start(p: { inputData: unknown }): Promise<{ status: string }> }>
  }
  const run = await workflow.createRun()
  expect((await run.start({ inputData: { operationId: op, question: `Refund ${op}?` } })).status).toBe(
    'suspended',
  )
  const review = (await app.store.listByState('pending', { limit: 1000 })).find(
    (candidate) => candidate.runId === run.runId,
  )
  return { op, fate, decisionId: review?.decisionId as string }
}

/** The variants an attacker (or a confused network) makes of one genuine callback. */
function variants(genuine: Captured, decisionId: string, others: readonly Run[]): Delivery[] {
  const body = JSON.parse(genuine.body) as Record<string, unknown>
  const other = pick(others.filter((run) => run.decisionId !== decisionId))
  const lie = JSON.stringify({
    ...body,
    event: 'decision.answered',
    status: 'answered',
    answer: 'yes',
    value: 'yes',
  })
  // For an approved decision the lie is the genuine body: tamper the other way.
  const tampered = lie === genuine.body ? JSON.stringify({ ...body, answer: 'no', value: 'no' }) : lie
  const copies = 1 + Math.floor(random() * 3)
  return [
    ...Array.from({ length: copies }, () => ({
      kind: 'genuine' as const,
      decisionId,
      body: genuine.body,
      signature: genuine.signature,
    })),
    {
      kind: 'forged-signature',
      decisionId,
      body: lie,
      signature: signed(lie).replace(/^./, (c) => (c === 'a' ? 'b' : 'a')),
    },
    { kind: 'missing-signature', decisionId, body: lie, signature: null },
    {
      kind: 'truncated-signature',
      decisionId,
      body: genuine.body,
      signature: genuine.signature.slice(0, 32),
    },
    { kind: 'tampered-body', decisionId, body: tampered, signature: genuine.signature },
    {
      kind: 'tampered-context',
      decisionId,
      body: JSON.stringify({
        ...body,
        decisionId: other.decisionId,
        correlationId: other.decisionId,
        context: `${body.context ?? ''} `,
      }),
      signature: genuine.signature,
    },
    {
      kind: 'malformed-signed',
      decisionId,
      body: '{"correlationId":',
      signature: signed('{"correlationId":'),
    },
    { kind: 'signed-lie', decisionId, body: lie, signature: signed(lie) },
  ]
}

/** The decision a captured callback is about: the hosted body names it `correlationId`. */
function callbackIdOf(body: string): string {
  return (JSON.parse(body) as { correlationId: string }).correlationId
}

describe(`adversarial callbacks (seed ${SEED})`, () => {
  it('runs each approved refund exactly once and nothing else, answers no 500, whatever arrives', async () => {
    const fates: Fate[] = Array.from({ length: RUNS }, (_, index) =>
      index < 4
        ? (['yes', 'no', 'cancel', 'expire'] as const)[index]!
        : pick(['yes', 'yes', 'no', 'cancel', 'expire']),
    )
    const runs: Run[] = []
    for (const fate of fates) runs.push(await startRun(fate))

    // A callback before the review is saved: the asking process died between
    // creating the decision and saving the review. It is retryable (503
    // `unknown`) until recovery saves the review and applies the answer once.
    const earlyRunId = `adv-early-${randomUUID().slice(0, 8)}`
    const earlyOp = `adv-early-${randomUUID().slice(0, 8)}`
    await expect(
      runFixture(
        [
          'start',
          env.dir,
          JSON.stringify({
            workflowId: 'refund-single',
            input: { operationId: earlyOp, question: `Refund ${earlyOp}?` },
            runId: earlyRunId,
          }),
        ],
        { env: { PUSHARY_TEST_CRASH_BEFORE_SAVE: '1' } },
      ),
    ).rejects.toThrow(/SIGKILL/)
    const early = (await allDecisions(env.client)).find(
      (decision) => decisionBinding(decision)?.runId === earlyRunId,
    )
    const earlyId = early?.decisionId as string
    await env.client.decisions.answer(earlyId, 'yes')
    const earlyCallback = await waitFor(async () => captured.find((c) => callbackIdOf(c.body) === earlyId))
    const before = await app.dispatcher.handleCallback(
      request({ kind: 'genuine', decisionId: earlyId, ...earlyCallback }),
    )
    expect(before.status).toBe(503)
    expect(await before.json()).toMatchObject({ status: 'unknown' })
    expect((await app.dispatcher.recover(earlyId)).status).toBe('resumed')

    // Decisions with no saved review: asked outside any run, one of them for
    // another customer with a victim run's binding context copied in.
    const victim = runs.find((run) => run.fate === 'yes') as Run
    const victimDecision = await env.client.decisions.get(victim.decisionId)
    const strays = [
      await env.client.decisions.create({
        question: 'Refund stray?',
        callbackUrl: `${capture.url}/callback`,
      }),
      await env.client.decisions.create({
        question: victimDecision.question,
        externalId: 'customer_2',
        ...(victimDecision.context ? { context: victimDecision.context } : {}),
        callbackUrl: `${capture.url}/callback`,
      }),
    ]
    for (const stray of strays) await env.client.decisions.answer(stray.decisionId, 'yes')

    for (const run of runs) {
      if (run.fate === 'yes' || run.fate === 'no') await env.client.decisions.answer(run.decisionId, run.fate)
      if (run.fate === 'cancel') await env.client.decisions.cancel(run.decisionId)
    }
    runs.push({ op: earlyOp, fate: 'yes', decisionId: earlyId })
    // The hosted API calls back answers only: cancelled and expired decisions
    // are settled by the reconcilers below, never by a callback.
    const answeredRuns = runs.filter((run) => run.fate === 'yes' || run.fate === 'no')
    const settledIds = new Set([
      ...answeredRuns.map((run) => run.decisionId),
      ...strays.map((s) => s.decisionId),
    ])
    for (const run of runs.filter((candidate) => candidate.fate === 'expire')) {
      await waitFor(
        async () =>
          (await env.client.decisions.get(run.decisionId)).status === 'expired' ? true : undefined,
        60_000,
      )
    }
    await waitFor(async () => {
      const seen = new Set(captured.map((c) => callbackIdOf(c.body)))
      return [...settledIds].every((id) => seen.has(id)) ? true : undefined
    }, 60_000)

    const byDecision = new Map<string, Captured>()
    for (const callback of captured) {
      byDecision.set(callbackIdOf(callback.body), callback)
    }
    const deliveries: Delivery[] = []
    for (const run of answeredRuns)
      deliveries.push(...variants(byDecision.get(run.decisionId) as Captured, run.decisionId, runs))
    for (const stray of strays) {
      const genuine = byDecision.get(stray.decisionId) as Captured
      deliveries.push({ kind: 'no-review', decisionId: stray.decisionId, ...genuine })
    }
    shuffle(deliveries)

    // Two other processes reconcile the same files while the callbacks land.
    const reconcilers = [0, 1].map(() => runFixture(['reconcile', env.dir, JSON.stringify({ limit: 1000 })]))
    const outcomes: {
      delivery: Delivery
      status: number
      body: { status?: string; error?: string; answer?: { approved?: boolean } }
    }[] = []
    let next = 0
    await Promise.all(
      Array.from({ length: 6 }, async () => {
        while (next < deliveries.length) {
          const delivery = deliveries[next++] as Delivery
          const response = await app.dispatcher.handleCallback(request(delivery))
          outcomes.push({ delivery, status: response.status, body: await response.json() })
        }
      }),
    )
    await Promise.all(reconcilers)
    // One more round here, so every cancelled and expired review is settled.
    await app.dispatcher.reconcile({ limit: 1000 })

    // Replays after everything settled, and the retries a sender makes after 503.
    for (let round = 0; round < 10; round++) {
      const retry = outcomes.filter(
        (outcome) =>
          outcome.status === 503 &&
          outcome.delivery.kind !== 'no-review' &&
          !outcomes.some(
            (later) =>
              later.delivery.decisionId === outcome.delivery.decisionId &&
              later.delivery.kind === 'replay' &&
              later.status === 200,
          ),
      )
      const ids = new Set(retry.map((outcome) => outcome.delivery.decisionId))
      if (round > 0 && ids.size === 0) break
      for (const run of answeredRuns) {
        if (round > 0 && !ids.has(run.decisionId)) continue
        const genuine = byDecision.get(run.decisionId) as Captured
        const delivery: Delivery = { kind: 'replay', decisionId: run.decisionId, ...genuine }
        const response = await app.dispatcher.handleCallback(request(delivery))
        outcomes.push({ delivery, status: response.status, body: await response.json() })
      }
    }

    const label = (outcome: (typeof outcomes)[number]) =>
      `seed ${SEED}: ${outcome.delivery.kind} ${outcome.delivery.decisionId} -> ${outcome.status} ${JSON.stringify(outcome.body)}`
    const retryable = RETRYABLE_DISPATCH_STATUSES as readonly string[]
    for (const outcome of outcomes) {
      const { kind } = outcome.delivery
      if (
        [
          'forged-signature',
          'missing-signature',
          'truncated-signature',
          'tampered-body',
          'tampered-context',
        ].includes(kind)
      ) {
        expect(outcome.status, label(outcome)).toBe(401)
      } else if (kind === 'malformed-signed') {
        expect(outcome.status, label(outcome)).toBe(400)
      } else if (kind === 'no-review') {
        expect(outcome.status, label(outcome)).toBe(503)
        expect(outcome.body.status, label(outcome)).toBe('unknown')
      } else if (outcome.status === 503) {
        expect(retryable, label(outcome)).toContain(outcome.body.status)
      } else {
        expect(outcome.status, label(outcome)).toBe(200)
        expect(['resumed', 'duplicate'], label(outcome)).toContain(outcome.body.status)
        if (outcome.body.status === 'resumed') {
          const run = runs.find((candidate) => candidate.decisionId === outcome.delivery.decisionId)
          expect(outcome.body.answer?.approved, label(outcome)).toBe(run?.fate === 'yes')
        }
      }
    }

    const counts = await effectCounts(env.dir)
    for (const run of runs) {
      const review = await app.store.get(run.decisionId)
      expect(review?.state, `seed ${SEED}: ${run.fate} ${run.decisionId}`).toBe('completed')
      expect(counts.get(run.op) ?? 0, `seed ${SEED}: ${run.fate} ${run.op}`).toBe(run.fate === 'yes' ? 1 : 0)
    }
    for (const stray of strays) expect(await app.store.get(stray.decisionId)).toBeNull()
    const approved = runs.filter((run) => run.fate === 'yes').length
    console.log(
      `adversarial callbacks (seed ${SEED}): ${outcomes.length} callbacks sent over ${runs.length} runs ` +
        `(${approved} approved, ${runs.length - approved} declined/cancelled/expired, ${strays.length} without a review), ` +
        `${outcomes.filter((o) => o.status === 401).length} refused as forged; 0 double, 0 unapproved executions`,
    )
  }, 600_000)

  it("never lets another customer's decision carrying a victim's binding context approve or re-run the victim", async () => {
    const victim = await startRun('yes')
    const decision = await env.client.decisions.get(victim.decisionId)
    const forged = await env.client.decisions.create({
      question: decision.question,
      externalId: 'customer_2',
      ...(decision.context ? { context: decision.context } : {}),
    })
    await env.client.decisions.answer(forged.decisionId, 'yes')
    // Neither the dispatcher nor an operator's recover takes it as the victim's answer.
    expect((await app.dispatcher.resumeDecision(forged.decisionId)).status).toBe('unknown')
    expect((await app.dispatcher.recover(forged.decisionId)).status).toBe('unknown')
    expect(await app.store.get(forged.decisionId)).toBeNull()
    // Same customer, same context, but the run waits on its own decision: not restarted either.
    const copy = await env.client.decisions.create({
      question: decision.question,
      externalId: 'customer_1',
      ...(decision.context ? { context: decision.context } : {}),
    })
    await env.client.decisions.answer(copy.decisionId, 'yes')
    expect(await app.dispatcher.recover(copy.decisionId)).toMatchObject({
      status: 'unknown',
      reason: expect.stringMatching(/suspended/),
    })
    expect((await app.store.get(victim.decisionId))?.state).toBe('pending')
    expect((await env.client.decisions.get(victim.decisionId)).status).toBe('pending')
    expect((await effectCounts(env.dir)).get(victim.op) ?? 0).toBe(0)
    // The victim's own answer still resumes it, once.
    await env.client.decisions.answer(victim.decisionId, 'yes')
    expect((await app.dispatcher.resumeDecision(victim.decisionId)).status).toBe('resumed')
    expect((await effectCounts(env.dir)).get(victim.op)).toBe(1)
  })
})
