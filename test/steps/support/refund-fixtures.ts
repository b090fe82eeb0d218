/**
 * The refund fixtures the approval tests share, all real: a SQLite review
 * store and a Mastra on LibSQL files in a scratch directory, the
 * `pusharyApprovalStep` → gate → refund workflow, and a refund agent whose
 * tool needs approval (`requireApproval`), driven by a scripted model.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Agent } from '@mastra/core/agent'
import { type Config, Mastra } from '@mastra/core/mastra'
import { createTool } from '@mastra/core/tools'
import { createStep, createWorkflow } from '@mastra/core/workflows'
import { LibSQLStore } from '@mastra/libsql'
import { z } from 'zod/v4'
import { pusharyApprovalStepInputSchema } from '../../../src/steps/approval-schemas.js'
import {
  type PusharyApprovalStepOptions,
  type PusharyStepConfig,
  pusharyApprovalStep,
} from '../../../src/steps/approval-step.js'
import { pusharyApprovedAnswerSchema, pusharyGate } from '../../../src/steps/gate-step.js'
import type { PusharyReviewStore } from '../../../src/store/review-store.js'
import { createSqliteReviewStore } from '../../../src/store/sqlite-store.js'
import { callsOnce, scriptedModel } from '../../agents/support/scripted-model.js'

/**
 * A fresh temp directory named after `prefix`.
 *
 * @example
 * const dir = scratchDir('pushary-fallback-agent-')
 */
export function scratchDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix))
}

/**
 * A fresh temp directory with a SQLite review store on its `reviews.db`.
 *
 * @example
 * const { dir, store } = scratchReviewStore('pushary-fallback-mastra-')
 */
export function scratchReviewStore(prefix: string): { dir: string; store: PusharyReviewStore } {
  const dir = scratchDir(prefix)
  return { dir, store: createSqliteReviewStore({ url: `file:${join(dir, 'reviews.db')}` }) }
}

/**
 * A Mastra with logging off, its storage on the LibSQL file `file` (default `mastra.db`) of `dir`.
 *
 * @example
 * const mastra = mastraOnFile({ dir, id: 'fallback', workflows: { workflow } })
 */
export function mastraOnFile(input: {
  dir: string
  id: string
  file?: string
  agents?: Config['agents']
  workflows?: Config['workflows']
}): Mastra {
  return new Mastra({
    ...(input.agents ? { agents: input.agents } : {}),
    ...(input.workflows ? { workflows: input.workflows } : {}),
    storage: new LibSQLStore({ id: input.id, url: `file:${join(input.dir, input.file ?? 'mastra.db')}` }),
    logger: false,
  })
}

/**
 * Workflow `id`: `pusharyApprovalStep(config, approval)`, the gate, then a refund step calling `onRefund`.
 *
 * @example
 * const workflow = refundWorkflow({ id: 'refund-link', config, approval: { id: 'approve' }, onRefund })
 */
export function refundWorkflow(input: {
  id: string
  config: PusharyStepConfig
  approval: PusharyApprovalStepOptions
  onRefund: () => void
}) {
  const refund = createStep({
    id: 'refund',
    inputSchema: pusharyApprovedAnswerSchema,
    outputSchema: z.object({ refunded: z.literal(true) }),
    execute: async () => {
      input.onRefund()
      return { refunded: true as const }
    },
  })
  return createWorkflow({
    id: input.id,
    inputSchema: pusharyApprovalStepInputSchema,
    outputSchema: z.unknown(),
    options: { autoRestartActiveRuns: false },
  })
    .then(pusharyApprovalStep(input.config, input.approval))
    .then(pusharyGate())
    .then(refund)
    .commit()
}

/**
 * An agent whose scripted model calls its `requireApproval` tool `refund` once, for `orderId`.
 *
 * @example
 * const agent = refundAgent({ id: 'sandbox-refunder', name: 'Sandbox refunder', orderId: 'o-9', onRefund })
 */
export function refundAgent(input: {
  id: string
  name: string
  orderId: string
  onRefund: () => void
}): Agent {
  return new Agent({
    id: input.id,
    name: input.name,
    instructions: 'Refund when asked.',
    model: scriptedModel(
      callsOnce([{ toolCallId: 'call_1', toolName: 'refund', input: { orderId: input.orderId } }]),
    ),
    tools: {
      refund: createTool({
        id: 'refund',
        description: 'Refund an order',
        inputSchema: z.object({ orderId: z.string() }),
        requireApproval: true,
        execute: async () => {
          input.onRefund()
          return { refunded: true }
        },
      }),
    },
  })
}
