/**
 * The guard that proves an answer belongs to this run: each compared field
 * matters, every binding field changes the context and the key, and the
 * dispatcher refuses a decision that differs from the saved binding.
 */
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import { createClient } from '@libsql/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { deterministicKey } from '../../src/pushary/identity.js'
import { type Decision, decisionSchema } from '../../src/pushary/wire-responses.js'
import {
  batchGroupKey,
  checkWorkflowDecision,
  type PusharyWorkflowBinding,
  workflowApprovalKey,
  workflowBindingContext,
} from '../../src/steps/workflow-binding.js'
import { thrown } from '../helpers/errors.js'
import { createTestEnv, listEffects, type TestEnv } from '../helpers/mastra.js'
import { buildApp, type TestApp } from '../workflows/fixtures/app.js'

const binding: PusharyWorkflowBinding = {
  workflowId: 'refunds',
  runId: 'run_1',
  stepId: 'approve',
  operationId: 'refund:o1',
  externalId: 'customer_1',
  question: { question: 'Pick a refund method', type: 'select', options: ['card', 'voucher'] },
}
const saved = { ...binding, decisionId: 'dec_1' }

function decisionFor(overrides: Partial<Decision> = {}): Decision {
  return decisionSchema.parse({
    decisionId: 'dec_1',
    status: 'answered',
    answered: true,
    value: 'card',
    type: 'select',
    question: 'Pick a refund method',
    options: ['card', 'voucher'],
    externalId: 'customer_1',
    context: workflowBindingContext(binding),
    createdAt: new Date().toISOString(),
    answeredAt: new Date().toISOString(),
    expiresAt: null,
    ...overrides,
  })
}

describe('checkWorkflowDecision', () => {
  it('accepts the decision the binding asked', () => {
    expect(checkWorkflowDecision(saved, decisionFor())).toBeNull()
  })

  it('binds a batch item to its batch group, and still accepts one asked before items carried the group', () => {
    const parent = { workflowId: 'refund-batch', runId: 'run_p', stepId: 'approve-all', itemIndex: 3 }
    const item = { ...saved, parent }
    const context = workflowBindingContext(item)
    expect(JSON.parse(context)).toMatchObject({ batch: batchGroupKey(parent), batchItem: 3 })
    expect(checkWorkflowDecision(item, decisionFor({ context }))).toBeNull()
    expect(checkWorkflowDecision(item, decisionFor())).toBeNull()
    const otherBatch = workflowBindingContext({ ...item, parent: { ...parent, runId: 'run_q' } })
    expect(checkWorkflowDecision(item, decisionFor({ context: otherBatch }))).toMatch(/context/)
    expect(checkWorkflowDecision(saved, decisionFor({ context }))).toMatch(/context/)
    expect(workflowBindingContext(binding)).not.toContain('batch')
  })

  it('accepts a decision whose recipient the service cache omitted, only with the exact context', () => {
    expect(checkWorkflowDecision(saved, decisionFor({ externalId: null }))).toBeNull()
    const otherContext = workflowBindingContext({ ...binding, externalId: 'customer_2' })
    expect(checkWorkflowDecision(saved, decisionFor({ externalId: null, context: otherContext }))).toMatch(
      /context/,
    )
  })

  it.each([
    ['decisionId', { decisionId: 'dec_2' }, /decisionId/],
    ['recipient', { externalId: 'customer_2' }, /externalId/],
    ['type', { type: 'confirm' as const }, /type/],
    ['question', { question: 'Pick a refund method, or wire EUR 50,000' }, /question/],
    ['options', { options: ['card', 'voucher', 'wire'] }, /options/],
    ['option order', { options: ['voucher', 'card'] }, /options/],
    ['missing context', { context: null }, /context/],
    [
      'context of another run',
      { context: workflowBindingContext({ ...binding, runId: 'run_2' }) },
      /context/,
    ],
  ])('refuses a decision with a different %s', (_name, overrides, reason) => {
    expect(checkWorkflowDecision(saved, decisionFor(overrides))).toMatch(reason)
  })
})

describe('binding context and idempotency key', () => {
  const variants: [string, PusharyWorkflowBinding][] = [
    ['workflowId', { ...binding, workflowId: 'deletions' }],
    ['runId', { ...binding, runId: 'run_2' }],
    ['stepId', { ...binding, stepId: 'approve-2' }],
    ['operationId', { ...binding, operationId: 'refund:o2' }],
    ['externalId', { ...binding, externalId: 'customer_2' }],
    ['question', { ...binding, question: { ...binding.question, question: 'Pick a method' } }],
    ['options', { ...binding, question: { ...binding.question, options: ['card'] } }],
  ]

  it.each(variants)('gives a binding with another %s another context and another key', (_field, other) => {
    expect(workflowBindingContext(other)).not.toBe(workflowBindingContext(binding))
    expect(workflowApprovalKey(other)).not.toBe(workflowApprovalKey(binding))
  })

  it('encodes key parts unambiguously, refusing a part that contains the NUL separator', () => {
    expect(deterministicKey(['a b', 'c'])).not.toBe(deterministicKey(['a', 'b c']))
    expect(thrown(() => deterministicKey(['a\u0000b']))).toMatchObject({
      code: 'invalid_identifier',
      field: 'parts.0',
    })
    expect(deterministicKey(['ab', ''])).not.toBe(deterministicKey(['a', 'b']))
  })

  it('refuses a binding whose context would exceed 2,000 characters, naming the field', () => {
    const long = { ...binding, operationId: 'x'.repeat(1_900) }
    expect(thrown(() => workflowBindingContext(long))).toMatchObject({
      code: 'invalid_decision_input',
      field: 'context',
    })
    const fits = { ...binding, operationId: 'x'.repeat(1_600) }
    expect(workflowBindingContext(fits).length).toBeLessThanOrEqual(2_000)
  })
})

describe('stability and limits of the binding', () => {
  // Decisions asked before an upgrade are answered after it: the key and the
  // context of the same binding must not change between releases.
  it('derives the same idempotency key (the official SDK NUL-joined key since the hosted-wire release) and context', () => {
    // Was 669199ae… (JSON-array key) before the key followed the official SDK.
    expect(workflowApprovalKey(binding)).toBe('0f727dd1dd0a999a1f212340433b7595dedb1b9b')
    expect(workflowBindingContext(binding)).toBe(
      '{"externalId":"customer_1","operationId":"refund:o1","pushary":"workflow-step",' +
        '"questionHash":"d847fb2c5cb118f207d5ddb7a017e4b8ceb42244ca93821cfc80367cdc29e919",' +
        '"runId":"run_1","stepId":"approve","version":1,"workflowId":"refunds"}',
    )
  })

  it('accepts a context of exactly 2,000 characters and refuses one more, naming the operation', () => {
    const room = 2_000 - workflowBindingContext({ ...binding, operationId: '' }).length
    const exact = { ...binding, operationId: 'x'.repeat(room) }
    expect(workflowBindingContext(exact)).toHaveLength(2_000)
    expect(
      thrown(() => workflowBindingContext({ ...exact, operationId: `${exact.operationId}x` })),
    ).toMatchObject({
      code: 'invalid_decision_input',
      operation: 'pusharyApprovalStep',
      field: 'context',
      message: expect.stringContaining('exceeds the decision context limit of 2000 characters'),
    })
  })

  it('compares the question text as the service returns it, ignoring surrounding whitespace only', () => {
    expect(checkWorkflowDecision(saved, decisionFor({ question: '  Pick a refund method \n' }))).toBeNull()
    expect(checkWorkflowDecision(saved, decisionFor({ question: 'Pick a  refund method' }))).toMatch(
      /question/,
    )
  })
})

describe('the dispatcher against a decision that differs from the saved binding', () => {
  let env: TestEnv
  let app: TestApp

  beforeAll(async () => {
    env = await createTestEnv('binding')
    app = buildApp(env)
  })

  afterAll(async () => {
    await app?.close()
    await env?.close()
  })

  it.each([
    [
      'question',
      (b: Record<string, unknown>) => ({
        ...b,
        question: { ...(b.question as object), question: 'Refund EUR 5?' },
      }),
    ],
    ['recipient', (b: Record<string, unknown>) => ({ ...b, externalId: 'customer_2' })],
    ['operation', (b: Record<string, unknown>) => ({ ...b, operationId: 'refund:other' })],
  ])(
    'refuses a saved binding whose %s was tampered with: mismatch, review left pending, nothing claimed or run',
    async (_field, tamper) => {
      const op = `refund:tamper-${randomUUID()}`
      const workflow = app.mastra.getWorkflowById('refund-single' as never) as unknown as {
        createRun(): Promise<{ runId: string; start(p: { inputData: unknown }): Promise<{ status: string }> }>
      }
      const run = await workflow.createRun()
      expect((await run.start({ inputData: { operationId: op, question: 'Refund EUR 500?' } })).status).toBe(
        'suspended',
      )
      const review = (await app.store.listByState('pending', { limit: 1000 })).find(
        (r) => r.runId === run.runId,
      )
      const decisionId = review?.decisionId as string
      await env.client.decisions.answer(decisionId, 'yes')
      const db = createClient({ url: `file:${join(env.dir, 'reviews.db')}` })
      try {
        const row = await db.execute({
          sql: 'SELECT binding FROM pushary_reviews WHERE decision_id = ?',
          args: [decisionId],
        })
        const tampered = tamper(JSON.parse(String(row.rows[0]?.binding)) as Record<string, unknown>)
        await db.execute({
          sql: 'UPDATE pushary_reviews SET binding = ? WHERE decision_id = ?',
          args: [JSON.stringify(tampered), decisionId],
        })
      } finally {
        db.close()
      }
      const result = await app.dispatcher.resumeDecision(decisionId)
      expect(result.status).toBe('mismatch')
      expect((await app.store.get(decisionId))?.state).toBe('pending')
      expect((await app.store.history(decisionId)).map((entry) => entry.event)).toEqual([null])
      expect((await listEffects(env.dir)).filter((effect) => effect.key === op)).toEqual([])
    },
  )
})
