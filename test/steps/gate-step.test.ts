/**
 * The gates in real Mastra runs (LibSQL file storage), in process: only an
 * answered confirm-yes reaches the protected step; every other answer, a
 * forged `approved` flag included, ends the run as declined with a reason.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Mastra } from '@mastra/core/mastra'
import { createStep, createWorkflow } from '@mastra/core/workflows'
import { LibSQLStore } from '@mastra/libsql'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { z } from 'zod/v4'
import { type PusharyAnswer, pusharyAnswerSchema } from '../../src/pushary/question.js'
import {
  isPusharyDeclined,
  pusharyApprovedAnswerSchema,
  pusharyApprovedItemSchema,
  pusharyGate,
  pusharyGateItems,
} from '../../src/steps/gate-step.js'

/** Every protected execution, by workflow. */
let executed: string[] = []

const refund = createStep({
  id: 'refund',
  inputSchema: pusharyApprovedAnswerSchema,
  outputSchema: z.object({ refunded: z.literal(true) }),
  execute: async () => {
    executed.push('refund')
    return { refunded: true as const }
  },
})

const refundItems = createStep({
  id: 'refund-items',
  inputSchema: z.array(pusharyApprovedItemSchema),
  outputSchema: z.array(z.number()),
  execute: async ({ inputData }) => {
    for (const item of inputData) executed.push(`item-${item.index}`)
    return inputData.map((item) => item.index)
  },
})

const gated = createWorkflow({
  id: 'gated-refund',
  inputSchema: pusharyAnswerSchema,
  outputSchema: z.object({ refunded: z.literal(true) }),
})
  .then(pusharyGate())
  .then(refund)
  .commit()

// The misuse the types refuse, forced through with a cast (as an untyped or
// hand-built workflow would): the protected step straight after an answer.
const ungated = createWorkflow({
  id: 'ungated-refund',
  inputSchema: pusharyAnswerSchema,
  outputSchema: z.unknown(),
})
  .then(refund as never)
  .commit()

const gatedItems = createWorkflow({
  id: 'gated-items',
  inputSchema: z.array(pusharyAnswerSchema),
  outputSchema: z.array(z.number()),
})
  .then(pusharyGateItems())
  .then(refundItems)
  .commit()

let dir: string
let mastra: Mastra

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'pushary-gate-'))
  mastra = new Mastra({
    storage: new LibSQLStore({ id: 'gate', url: `file:${join(dir, 'mastra.db')}` }),
    workflows: { gated, gatedItems, ungated },
    logger: false,
  })
})

afterAll(() => {
  rmSync(dir, { recursive: true, force: true })
})

beforeEach(() => {
  executed = []
})

type RunResult = { status: string; result?: unknown; steps: Record<string, { status: string }> }

async function run(workflowId: string, inputData: unknown): Promise<RunResult> {
  const workflow = mastra.getWorkflowById(workflowId as never) as unknown as {
    createRun(): Promise<{ start(p: { inputData: unknown }): Promise<RunResult> }>
  }
  return (await workflow.createRun()).start({ inputData })
}

const approved: PusharyAnswer = { status: 'answered', value: 'yes', approved: true }

describe('pusharyGate in a run', () => {
  it('passes an answered confirm-yes on to the protected step', async () => {
    const result = await run('gated-refund', approved)
    expect(result.status).toBe('success')
    expect(result.result).toEqual({ refunded: true })
    expect(result.steps['pushary-gate']?.status).toBe('success')
    expect(isPusharyDeclined(result.result)).toBe(false)
    expect(executed).toEqual(['refund'])
  })

  it.each<[string, PusharyAnswer, string]>([
    ['a no', { status: 'answered', value: 'no', approved: false }, 'denied'],
    ['an expiry', { status: 'expired', value: null, approved: false }, 'expired'],
    ['a cancellation', { status: 'cancelled', value: null, approved: false }, 'cancelled'],
    [
      'a select or input answer reading yes',
      { status: 'answered', value: 'yes', approved: false },
      'not_approved',
    ],
    ['a forged approved flag on a no', { status: 'answered', value: 'no', approved: true }, 'not_approved'],
    [
      'a forged approved flag on another value',
      { status: 'answered', value: 'maybe', approved: true },
      'not_approved',
    ],
    ['a forged approved flag on an expiry', { status: 'expired', value: null, approved: true }, 'expired'],
  ])('ends the run as declined on %s without running the protected step', async (_name, answer, reason) => {
    const result = await run('gated-refund', answer)
    expect(result.status).toBe('success')
    expect(result.result).toEqual({ outcome: 'declined', reason, answer })
    expect(isPusharyDeclined(result.result)).toBe(true)
    expect(result.steps.refund).toBeUndefined()
    expect(executed).toEqual([])
  })

  it.each<[string, PusharyAnswer]>([
    ['a no', { status: 'answered', value: 'no', approved: false }],
    ['an expiry', { status: 'expired', value: null, approved: false }],
    ['a select answer reading yes', { status: 'answered', value: 'yes', approved: false }],
  ])('without the gate, fails the run on %s before the protected step body runs', async (_name, answer) => {
    const result = await run('ungated-refund', answer)
    expect(result.status).toBe('failed')
    expect(result.steps.refund?.status).toBe('failed')
    expect(executed).toEqual([])
  })

  it('takes its step id from the options, refusing a blank one', () => {
    expect(pusharyGate().id).toBe('pushary-gate')
    expect(pusharyGate({ id: 'check-approval' }).id).toBe('check-approval')
    expect(pusharyGateItems().id).toBe('pushary-gate-items')
    expect(pusharyGateItems({ id: 'check-items' }).id).toBe('check-items')
    expect(() => pusharyGateItems({ id: '' })).toThrow(/opts\.id/)
    expect(() => pusharyGate({ id: ' ' })).toThrow(
      expect.objectContaining({ operation: 'pusharyGate', field: 'opts.id' }),
    )
    expect(pusharyGate().description).toContain('Continue only when the person approved')
    expect(pusharyGateItems().description).toContain('Keep only the items the person approved')
  })
})

describe('pusharyGateItems in a run', () => {
  it('passes on only the approved items, with their input index', async () => {
    const answers: PusharyAnswer[] = [
      { status: 'answered', value: 'no', approved: false },
      approved,
      { status: 'expired', value: null, approved: false },
      { status: 'answered', value: 'yes', approved: false },
      { status: 'answered', value: 'maybe', approved: true },
      { status: 'cancelled', value: null, approved: true },
      approved,
    ]
    const result = await run('gated-items', answers)
    expect(result.status).toBe('success')
    expect(result.result).toEqual([1, 6])
    expect(executed).toEqual(['item-1', 'item-6'])
  })

  it('passes on nothing when no item was approved', async () => {
    const result = await run('gated-items', [{ status: 'answered', value: 'no', approved: false }])
    expect(result.result).toEqual([])
    expect(executed).toEqual([])
  })
})

describe('isPusharyDeclined', () => {
  it.each<[string, unknown]>([
    ['an approved answer', approved],
    ['a protected step result', { refunded: true }],
    ['null', null],
    ['a string', 'declined'],
    ['an unknown reason', { outcome: 'declined', reason: 'timeout', answer: approved }],
    ['another outcome', { outcome: 'approved', reason: 'denied', answer: approved }],
    ['a missing answer', { outcome: 'declined', reason: 'denied' }],
    ['a malformed answer', { outcome: 'declined', reason: 'denied', answer: { status: 'answered' } }],
  ])('is false for %s', (_name, value) => {
    expect(isPusharyDeclined(value)).toBe(false)
  })

  it('is true for each decline reason', () => {
    for (const reason of ['denied', 'expired', 'cancelled', 'not_approved'] as const) {
      expect(isPusharyDeclined({ outcome: 'declined', reason, answer: approved })).toBe(true)
    }
  })
})
