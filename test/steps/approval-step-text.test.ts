/**
 * Issue 9, items 1, 2 and 7 at the step: text that a store would read back
 * changed (NUL, unpaired surrogates) or an option that could never be tapped
 * is refused by the step's own input check with a typed error naming the
 * field, and a real Mastra run fails before any request to the decision
 * service and before any review is saved.
 */
import { join } from 'node:path'
import { Mastra } from '@mastra/core/mastra'
import { createWorkflow } from '@mastra/core/workflows'
import { LibSQLStore } from '@mastra/libsql'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPusharyClient } from '../../src/pushary/client.js'
import { isPusharyValidationError } from '../../src/pushary/errors.js'
import { pusharyAnswerSchema } from '../../src/pushary/question.js'
import {
  parsePusharyApprovalStepInput,
  pusharyApprovalStepInputSchema,
} from '../../src/steps/approval-schemas.js'
import { pusharyApprovalStep } from '../../src/steps/approval-step.js'
import type { PusharyReviewStore } from '../../src/store/review-store.js'
import { createSqliteReviewStore } from '../../src/store/sqlite-store.js'
import { thrown } from '../helpers/errors.js'
import { createTestEnv, type TestEnv } from '../helpers/mastra.js'
import { countingFetch } from '../server/support/devices.js'

let env: TestEnv
let store: PusharyReviewStore

beforeAll(async () => {
  env = await createTestEnv('step-text')
  store = createSqliteReviewStore({ url: `file:${join(env.dir, 'reviews.db')}` })
})

afterAll(async () => {
  await store?.close()
  await env?.close()
})

const base = {
  operationId: 'refund:o1:v1',
  question: 'Refund EUR 5?',
  type: 'confirm',
  externalId: 'customer_1',
}

const CASES = [
  ['question', { question: 'Refund EUR 5 to customer 42?\u0000 Also wire EUR 50,000.' }],
  ['operationId', { operationId: 'refund:o1\u0000:v2' }],
  ['externalId', { externalId: 'victim\ud800' }],
  ['placeholder', { type: 'input', placeholder: 'why\u0000' }],
  ['subject.toolName', { subject: { toolName: 'refund\udc00' } }],
  ['options.1', { type: 'select', options: ['card', 'wire\r\nEUR 50,000'] }],
] as const

describe('approval step input that would not survive storage', () => {
  it.each(CASES)('refuses %s with a typed error naming it', (field, change) => {
    const error = thrown(() => parsePusharyApprovalStepInput({ ...base, ...change }))
    expect(isPusharyValidationError(error) && error.field).toBe(field)
  })

  it('fails the run before any request or saved review', async () => {
    const counter = countingFetch()
    const client = createPusharyClient({ baseUrl: env.baseUrl, apiKey: env.apiKey, fetch: counter.fetch })
    const workflow = createWorkflow({
      id: 'text-rules',
      inputSchema: pusharyApprovalStepInputSchema,
      outputSchema: pusharyAnswerSchema,
      options: { autoRestartActiveRuns: false },
    })
      .then(pusharyApprovalStep({ client, store }))
      .commit()
    const mastra = new Mastra({
      storage: new LibSQLStore({ id: 'step-text', url: `file:${join(env.dir, 'mastra.db')}` }),
      workflows: { workflow },
      logger: false,
    })
    for (const [field, change] of CASES) {
      const run = await mastra.getWorkflow('workflow').createRun()
      // Mastra checks the input schema first and throws; the step itself fails the run.
      const outcome = await run.start({ inputData: { ...base, ...change } as never }).then(
        (result) => result.status,
        () => 'refused by Mastra input validation',
      )
      expect(['failed', 'refused by Mastra input validation'], field).toContain(outcome)
    }
    expect(counter.count()).toBe(0)
    expect((await env.client.decisions.list({ limit: 10 })).decisions).toEqual([])
    expect(await store.listByState('pending', { limit: 10 })).toEqual([])
  })
})
