/**
 * fast-check model-based test: random sequences of open / answer / callback /
 * reconcile / crash / recover / operator recovery over several reviews (each
 * its own run), checked after every command against the model and the
 * lifecycle machine (see `support/lifecycle-model.ts`). Counterexamples the
 * property found, shrunk, and the sequences that cover each recovery rule
 * are kept below as fixed regression cases.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestEnv, type TestEnv } from '../helpers/mastra.js'
import { buildApp } from '../workflows/fixtures/app.js'
import {
  Answer,
  Callback,
  CallbackBurst,
  CrashAfterClaim,
  CrashBeforeFinish,
  MODEL_CLAIM_LEASE_MS,
  type Model,
  Open,
  OperatorRecover,
  type Real,
  Reconcile,
  Recover,
  type Verdict,
} from './support/lifecycle-model.js'

/** Property runs; raise with PUSHARY_PROPERTY_RUNS for a longer soak. */
const RUNS = Number(process.env.PUSHARY_PROPERTY_RUNS ?? 50)
const SEED = process.env.PUSHARY_PROPERTY_SEED ? Number(process.env.PUSHARY_PROPERTY_SEED) : undefined

let env: TestEnv
let iteration = 0
const counter = { commands: 0, callbacks: 0 }

beforeAll(async () => {
  env = await createTestEnv('lifecycle-model')
})

afterAll(async () => {
  await env?.close()
})

type Sequence = Iterable<fc.AsyncCommand<Model, Real, boolean>>

/** Each sequence gets its own Mastra, review store and side-effect files; the service is shared. */
async function runSequence(commands: Sequence): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'pushary-model-'))
  // A short claim lease: a crash-left claim is recoverable after 200 ms.
  const app = buildApp({ ...env, dir }, { claimLeaseMs: MODEL_CLAIM_LEASE_MS })
  const real: Real = { env, dir, app, reviews: [], tag: String(iteration++), counter }
  try {
    await fc.asyncModelRun(() => ({ model: { reviews: [] }, real }), commands)
  } finally {
    await app.close()
  }
}

const index = fc.nat({ max: 3 })
const commandArbitraries = [
  fc.constant(new Open()),
  fc.constant(new Open()),
  fc
    .tuple(index, fc.constantFrom<Verdict>('yes', 'yes', 'no', 'cancel'))
    .map(([at, verdict]) => new Answer(at, verdict)),
  index.map((at) => new Callback(at)),
  index.map((at) => new CallbackBurst(at)),
  fc.constant(new Reconcile()),
  index.map((at) => new CrashAfterClaim(at)),
  index.map((at) => new CrashBeforeFinish(at)),
  index.map((at) => new Recover(at)),
  fc
    .tuple(index, fc.constantFrom('completed' as const, 'stale' as const, 'pending' as const))
    .map(([at, outcome]) => new OperatorRecover(at, outcome)),
]

describe('the review lifecycle under random open / answer / callback / reconcile / crash / recover', () => {
  it(`keeps store, history and side effects in agreement with the model and the machine (${RUNS} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.commands(commandArbitraries, { maxCommands: 16, size: 'max' }), (commands) =>
        runSequence(commands),
      ),
      { numRuns: RUNS, ...(SEED === undefined ? {} : { seed: SEED }), endOnFailure: false },
    )
    console.log(
      `lifecycle model: ${RUNS} property runs, ${counter.commands} commands, ${counter.callbacks} signed callbacks; store, history and refunds agreed with the machine after every command`,
    )
    expect(counter.commands).toBeGreaterThan(RUNS * 3)
  }, 600_000)
})

describe('kept sequences (regressions and one per recovery rule)', () => {
  const cases: [string, Sequence][] = [
    [
      'a callback while a dead resumer holds the claim is busy; recover resumes it once; a replay is a duplicate',
      [
        new Open(),
        new Answer(0, 'yes'),
        new CrashAfterClaim(0),
        new Callback(0),
        new Recover(0),
        new Callback(0),
      ],
    ],
    [
      'a run that finished before its resumer died is recorded completed by recover, never refunded again',
      [
        new Open(),
        new Answer(0, 'yes'),
        new CrashBeforeFinish(0),
        new Reconcile(),
        new Recover(0),
        new Callback(0),
      ],
    ],
    [
      'an operator may only confirm a crash-left claim; a completed review refuses every recovery',
      [
        new Open(),
        new OperatorRecover(0, 'completed'),
        new Answer(0, 'yes'),
        new Callback(0),
        new OperatorRecover(0, 'stale'),
        new OperatorRecover(0, 'pending'),
      ],
    ],
    [
      'a wrongly ended claim is reopened by the operator and then resumes with the denial, running nothing',
      [
        new Open(),
        new Answer(0, 'no'),
        new CrashAfterClaim(0),
        new OperatorRecover(0, 'stale'),
        new Callback(0),
        new OperatorRecover(0, 'pending'),
        new Reconcile(),
      ],
    ],
    [
      'a reopened review whose run already refunded is completed without a second refund',
      [
        new Open(),
        new Answer(0, 'yes'),
        new CrashBeforeFinish(0),
        new OperatorRecover(0, 'stale'),
        new OperatorRecover(0, 'pending'),
        new Callback(0),
      ],
    ],
    [
      'a cancelled decision resumes as declined, and the yes-lie in its callback body changes nothing',
      [
        new Open(),
        new Open(),
        new Answer(1, 'cancel'),
        new Callback(1),
        new Answer(0, 'yes'),
        new Reconcile(),
      ],
    ],
  ]
  for (const [name, sequence] of cases) {
    it(name, () => runSequence(sequence))
  }
})
