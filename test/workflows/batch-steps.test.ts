/**
 * Which workflows reconcile's batch fallback lists: those holding a batch
 * step, found in real Mastra workflows however the step was placed. A
 * workflow that shows no steps is listed as before (`null`).
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createStep, createWorkflow } from '@mastra/core/workflows'
import { afterAll, describe, expect, it } from 'vitest'
import { z } from 'zod/v4'
import { createPusharyClient } from '../../src/pushary/client.js'
import { pusharyApprovalStepInputSchema } from '../../src/steps/approval-schemas.js'
import { createSqliteReviewStore } from '../../src/store/sqlite-store.js'
import {
  createPusharyApprovalWorkflow,
  pusharyApprovalBatchStep,
} from '../../src/workflows/approval-workflows.js'
import { batchStepIdsOf } from '../../src/workflows/batch-reconcile.js'

const store = createSqliteReviewStore({
  url: `file:${join(mkdtempSync(join(tmpdir(), 'pushary-batch-steps-')), 'reviews.db')}`,
})

afterAll(async () => {
  await store.close()
})

const items = z.array(pusharyApprovalStepInputSchema)
const prepare = createStep({
  id: 'prepare',
  inputSchema: items,
  outputSchema: items,
  execute: async ({ inputData }) => inputData,
})

describe('batchStepIdsOf', () => {
  it('finds batch steps after other steps, in a parallel, and rebuilt from a batch step', () => {
    const batch = pusharyApprovalBatchStep({ id: 'approve-all', childWorkflowId: 'item', store })
    const rebuilt = createStep({ ...batch, id: 'approve-again' })
    const workflow = createWorkflow({ id: 'mixed', inputSchema: items, outputSchema: z.unknown() })
      .then(prepare)
      .parallel([batch, rebuilt])
      .commit()
    expect([...(batchStepIdsOf(workflow) ?? [])].sort()).toEqual(['approve-again', 'approve-all'])
  })

  it('finds batch steps placed in a branch and in dowhile / dountil loops', () => {
    const branched = pusharyApprovalBatchStep({ id: 'approve-branch', childWorkflowId: 'item', store })
    const looped = pusharyApprovalBatchStep({ id: 'approve-while', childWorkflowId: 'item', store })
    const until = pusharyApprovalBatchStep({ id: 'approve-until', childWorkflowId: 'item', store })
    const inBranch = createWorkflow({ id: 'in-branch', inputSchema: items, outputSchema: z.unknown() })
      .branch([[async () => true, branched]])
      .commit()
    const inWhile = createWorkflow({ id: 'in-while', inputSchema: items, outputSchema: z.unknown() })
      .dowhile(looped, async () => false)
      .commit()
    const inUntil = createWorkflow({ id: 'in-until', inputSchema: items, outputSchema: z.unknown() })
      .dountil(until, async () => true)
      .commit()
    expect([inBranch, inWhile, inUntil].map((workflow) => [...(batchStepIdsOf(workflow) ?? [])])).toEqual([
      ['approve-branch'],
      ['approve-while'],
      ['approve-until'],
    ])
  })

  it('counts a nested workflow that holds a batch step under the nested step ID, at any depth', () => {
    const batch = pusharyApprovalBatchStep({ id: 'approve-all', childWorkflowId: 'item', store })
    const inner = createWorkflow({ id: 'inner', inputSchema: items, outputSchema: z.unknown() })
      .then(batch)
      .commit()
    const middle = createWorkflow({ id: 'middle', inputSchema: items, outputSchema: z.unknown() })
      .then(inner)
      .commit()
    const outer = createWorkflow({ id: 'outer', inputSchema: items, outputSchema: z.unknown() })
      .then(prepare)
      .then(middle)
      .commit()
    expect(batchStepIdsOf(outer)).toEqual(new Set(['middle']))
    const plainInner = createWorkflow({ id: 'plain-inner', inputSchema: items, outputSchema: items })
      .then(prepare)
      .commit()
    const plainOuter = createWorkflow({ id: 'plain-outer', inputSchema: items, outputSchema: items })
      .then(plainInner)
      .commit()
    expect(batchStepIdsOf(plainOuter)).toEqual(new Set())
  })

  it('finds none in a single-approval workflow, so reconcile never lists its runs', () => {
    const client = createPusharyClient({ baseUrl: 'http://127.0.0.1:9/api/v1/server', apiKey: 'pk_a.sk_b' })
    const single = createPusharyApprovalWorkflow(
      { client, store },
      { workflowId: 'single', externalId: 'customer_1' },
    )
    expect(batchStepIdsOf(single)).toEqual(new Set())
  })

  it('answers null for a workflow that does not show its steps: every suspended run is read', () => {
    expect(batchStepIdsOf({ id: 'opaque' })).toBeNull()
  })
})
