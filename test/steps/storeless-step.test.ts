import { join } from 'node:path'
import { Mastra } from '@mastra/core/mastra'
import { createWorkflow } from '@mastra/core/workflows'
import { LibSQLStore } from '@mastra/libsql'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { pusharyAnswerSchema } from '../../src/pushary/question.js'
import { pusharyApprovalStepInputSchema } from '../../src/steps/approval-schemas.js'
import { pusharyApprovalStep } from '../../src/steps/approval-step.js'
import { createTestEnv, type TestEnv } from '../helpers/mastra.js'

let env: TestEnv
let mastra: Mastra

type Run = {
  runId: string
  start(p: { inputData: unknown }): Promise<{ status: string; suspendPayload?: unknown }>
  resume(p: { label: string; resumeData: unknown }): Promise<{ status: string; result?: unknown }>
}

beforeAll(async () => {
  env = await createTestEnv('storeless-step')
  // The form in docs/workflows.md: credentials only, no review store.
  const config = { apiKey: env.apiKey, baseUrl: env.baseUrl }
  const review = pusharyApprovalStep(config, { externalId: 'customer_1' })
  const workflow = createWorkflow({
    id: 'customer-review',
    inputSchema: pusharyApprovalStepInputSchema,
    outputSchema: pusharyAnswerSchema,
    options: { autoRestartActiveRuns: false },
  })
    .then(review)
    .commit()
  mastra = new Mastra({
    workflows: { workflow },
    storage: new LibSQLStore({ id: 'storeless', url: `file:${join(env.dir, 'mastra.db')}` }),
    logger: false,
  })
})

afterAll(async () => {
  await env?.close()
})

async function startRun(operationId: string, question = 'Refund EUR 20?') {
  const run = (await mastra.getWorkflow('workflow').createRun()) as unknown as Run
  const started = await run.start({ inputData: { operationId, question } })
  expect(started.status).toBe('suspended')
  const payload = (started.suspendPayload as Record<string, { decisionId: string }>)['pushary-approval']
  return { run, decisionId: payload!.decisionId }
}

describe('pusharyApprovalStep without a store', () => {
  it('is resumed by the caller with the legacy { answer } form once the person answered yes', async () => {
    const { run, decisionId } = await startRun('refund:storeless-yes')
    await env.client.decisions.answer(decisionId, 'yes')
    const result = await run.resume({ label: decisionId, resumeData: { answer: 'yes' } })
    expect(result.status).toBe('success')
    expect(result.result).toEqual({ status: 'answered', value: 'yes', approved: true })
  })

  it('still verifies resume data against the service: a forged yes keeps the step waiting', async () => {
    const { run, decisionId } = await startRun('refund:storeless-forged')
    const forged = await run.resume({ label: decisionId, resumeData: { answer: 'yes', status: 'answered' } })
    expect(forged.status).toBe('suspended')
    await env.client.decisions.answer(decisionId, 'no')
    const lying = await run.resume({ label: decisionId, resumeData: { answer: 'yes', status: 'answered' } })
    expect(lying.status).toBe('suspended')
    const honest = await run.resume({ label: decisionId, resumeData: { answer: 'no', status: 'answered' } })
    expect(honest.result).toEqual({ status: 'answered', value: 'no', approved: false })
  })

  it('accepts { answer: null, status } for a cancelled decision and does not approve', async () => {
    const { run, decisionId } = await startRun('refund:storeless-cancel')
    await env.client.decisions.cancel(decisionId)
    const result = await run.resume({ label: decisionId, resumeData: { answer: null, status: 'cancelled' } })
    expect(result.result).toEqual({ status: 'cancelled', value: null, approved: false })
  })
})
