/**
 * The missing-gate warning in real Mastra runs (LibSQL file storage, the
 * local decision service over loopback HTTP): an approval step followed by a
 * step that is neither `pusharyGate()` nor a permit step logs one warning
 * through the Mastra instance's own logger, naming both steps, at the
 * workflow's first run in this process; the gate, the permit step and the
 * package's own agent review workflow do not warn, and the run is not refused.
 */
import { join } from 'node:path'
import { ConsoleLogger } from '@mastra/core/logger'
import { Mastra } from '@mastra/core/mastra'
import { createStep, createWorkflow } from '@mastra/core/workflows'
import { LibSQLStore } from '@mastra/libsql'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod/v4'
import { pusharyApprovalStepInputSchema } from '../../src/steps/approval-schemas.js'
import { PACKAGE_WORKFLOW_OPTIONS, pusharyApprovalStep } from '../../src/steps/approval-step.js'
import { pusharyApprovedAnswerSchema, pusharyGate } from '../../src/steps/gate-step.js'
import { withPusharyPermit } from '../../src/steps/permit-step.js'
import { createTestEnv, type TestEnv } from '../helpers/mastra.js'

/** A real Mastra logger that keeps every warning, as an operator's log would. */
class CapturingLogger extends ConsoleLogger {
  readonly warnings: string[] = []
  override warn(message: string): void {
    this.warnings.push(message)
  }
}

let env: TestEnv
let n = 0

beforeAll(async () => {
  env = await createTestEnv('gate-warning')
})
afterAll(async () => {
  await env?.close()
})

const options = { ...PACKAGE_WORKFLOW_OPTIONS }
const approve = () => pusharyApprovalStep({ client: env.client }, { id: 'approve', externalId: 'ops_1' })

/** The finding's protected step: its own schema, so it compiles without the gate and ignores `approved`. */
const restart = () =>
  createStep({
    id: 'restart-service',
    inputSchema: z.object({ approved: z.boolean() }),
    outputSchema: z.object({ restarted: z.boolean() }),
    execute: async () => ({ restarted: true }),
  })

const ran = () =>
  createStep({
    id: 'restart-service',
    inputSchema: pusharyApprovedAnswerSchema,
    outputSchema: z.object({ restarted: z.boolean() }),
    execute: async () => ({ restarted: true }),
  })

const workflows = {
  ungated: () =>
    createWorkflow({
      id: 'ungated',
      inputSchema: pusharyApprovalStepInputSchema,
      outputSchema: z.unknown(),
      options,
    })
      .then(approve())
      .then(restart())
      .commit(),
  gated: () =>
    createWorkflow({
      id: 'gated',
      inputSchema: pusharyApprovalStepInputSchema,
      outputSchema: z.unknown(),
      options,
    })
      .then(approve())
      .then(pusharyGate())
      .then(ran())
      .commit(),
  permitted: () =>
    createWorkflow({
      id: 'permitted',
      inputSchema: pusharyApprovalStepInputSchema,
      outputSchema: z.unknown(),
      options,
    })
      .then(approve())
      .then(
        withPusharyPermit(
          { client: env.client },
          {
            id: 'restart-service',
            approvalStepId: 'approve',
            outputSchema: z.object({ restarted: z.boolean() }),
            action: { toolName: 'service.restart', toolTarget: 'api' },
            execute: async () => ({ restarted: true }),
          },
        ),
      )
      .commit(),
}

function mastraWith(workflow: keyof typeof workflows): { mastra: Mastra; logger: CapturingLogger } {
  const logger = new CapturingLogger()
  const mastra = new Mastra({
    workflows: { [workflow]: workflows[workflow]() },
    storage: new LibSQLStore({ id: `gw${++n}`, url: `file:${join(env.dir, `mastra-${n}.db`)}` }),
    logger,
  })
  return { mastra, logger }
}

async function start(mastra: Mastra, workflowId: string): Promise<string> {
  const run = await mastra.getWorkflowById(workflowId as never).createRun()
  const result = await run.start({
    inputData: { operationId: `restart:${++n}`, question: 'Restart the api service?' },
  })
  return result.status
}

const pushary = (logger: CapturingLogger) => logger.warnings.filter((line) => line.startsWith('[pushary]'))

describe('an approval step without a gate after it', () => {
  it('warns once per workflow, through the Mastra logger, naming the approval step and the next step, and still asks', async () => {
    const { mastra, logger } = mastraWith('ungated')
    expect(await start(mastra, 'ungated')).toBe('suspended')
    const warnings = pushary(logger)
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain('workflow "ungated"')
    expect(warnings[0]).toContain('approval step "approve"')
    expect(warnings[0]).toContain('"restart-service"')
    expect(warnings[0]).toContain('.then(pusharyGate())')
    // A second run of the same workflow in this process says nothing new.
    expect(await start(mastra, 'ungated')).toBe('suspended')
    expect(pushary(logger)).toHaveLength(1)
  })

  it('does not warn when pusharyGate() follows the approval step', async () => {
    const { mastra, logger } = mastraWith('gated')
    expect(await start(mastra, 'gated')).toBe('suspended')
    expect(pushary(logger)).toEqual([])
  })

  it('does not warn when a permit step follows the approval step', async () => {
    const { mastra, logger } = mastraWith('permitted')
    expect(await start(mastra, 'permitted')).toBe('suspended')
    expect(pushary(logger)).toEqual([])
  })
})
