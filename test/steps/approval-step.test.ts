import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Mastra } from '@mastra/core/mastra'
import { createWorkflow } from '@mastra/core/workflows'
import { LibSQLStore } from '@mastra/libsql'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPusharyClient } from '../../src/pushary/client.js'
import { isPusharyValidationError, type PusharyValidationError } from '../../src/pushary/errors.js'
import { pusharyAnswerSchema } from '../../src/pushary/question.js'
import {
  parsePusharyApprovalStepInput,
  pusharyApprovalResumeSchema,
  pusharyApprovalStepInputSchema,
} from '../../src/steps/approval-schemas.js'
import { pusharyApprovalStep } from '../../src/steps/approval-step.js'
import { declineReason, pusharyGate } from '../../src/steps/gate-step.js'
import type { PusharyReviewStore } from '../../src/store/review-store.js'
import { createSqliteReviewStore } from '../../src/store/sqlite-store.js'
import { startFetchServer } from '../helpers/mastra.js'

let dir: string
let store: PusharyReviewStore
let requests = 0
let service: Awaited<ReturnType<typeof startFetchServer>>

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pushary-steps-'))
  store = createSqliteReviewStore({ url: `file:${join(dir, 'reviews.db')}` })
  service = await startFetchServer(async () => {
    requests++
    return new Response(JSON.stringify({ error: 'not expected' }), { status: 500 })
  })
})

afterAll(async () => {
  await store?.close()
  await service?.close()
})

function validationError(run: () => unknown): PusharyValidationError {
  try {
    run()
  } catch (error) {
    if (isPusharyValidationError(error)) return error
    throw error
  }
  throw new Error('no validation error was thrown')
}

describe('pusharyApprovalStep options', () => {
  const client = () =>
    createPusharyClient({ baseUrl: `${service.url}/api/v1/server`, apiKey: 'pk_test.sk_test' })

  it('refuses bad options in the factory, naming the field', () => {
    expect(
      validationError(() => pusharyApprovalStep({ client: client(), store }, { externalId: '  ' })),
    ).toMatchObject({
      code: 'invalid_external_id',
      field: 'opts.externalId',
    })
    expect(
      validationError(() =>
        pusharyApprovalStep({ client: client(), store }, { callbackUrl: 'ftp://example.com/cb' }),
      ),
    ).toMatchObject({ field: 'opts.callbackUrl' })
    expect(
      validationError(() => pusharyApprovalStep({ client: client(), store }, { expiresInSeconds: 0 })),
    ).toMatchObject({ field: 'opts.expiresInSeconds' })
    expect(validationError(() => pusharyApprovalStep({ client: client(), store }, { id: '' }))).toMatchObject(
      {
        code: 'invalid_identifier',
        field: 'opts.id',
      },
    )
    expect(
      validationError(() => pusharyApprovalStep(undefined as unknown as { client: never })),
    ).toMatchObject({ code: 'invalid_options', field: 'config' })
    expect(validationError(() => pusharyGate({ id: ' ' }))).toMatchObject({ code: 'invalid_identifier' })
    expect(requests).toBe(0)
  })

  it('refuses bad step input with a typed error naming the field', () => {
    expect(
      validationError(() => parsePusharyApprovalStepInput({ operationId: ' ', question: 'Refund?' })),
    ).toMatchObject({ code: 'invalid_identifier', field: 'operationId' })
    expect(
      validationError(() =>
        parsePusharyApprovalStepInput({
          operationId: 'op',
          question: 'Pick',
          type: 'select',
          options: ['only'],
        }),
      ),
    ).toMatchObject({ code: 'invalid_options', field: 'options' })
    expect(
      validationError(() => parsePusharyApprovalStepInput({ operationId: 'op', question: 'x'.repeat(501) })),
    ).toMatchObject({ code: 'invalid_question', field: 'question' })
    expect(
      validationError(() =>
        parsePusharyApprovalStepInput({ operationId: 'op', question: 'Q', externalId: 'x'.repeat(257) }),
      ),
    ).toMatchObject({ code: 'invalid_external_id', field: 'externalId' })
  })

  it('reads the legacy resume form { answer } as answered', () => {
    expect(pusharyApprovalResumeSchema.parse({ answer: 'yes' })).toEqual({
      answer: 'yes',
      status: 'answered',
    })
    expect(pusharyApprovalResumeSchema.parse({ answer: null, status: 'expired' })).toEqual({
      answer: null,
      status: 'expired',
    })
    expect(pusharyApprovalResumeSchema.safeParse({ answer: 'yes', status: 'pending' }).success).toBe(false)
  })

  it('fails a run that names no customer before any HTTP request or write', async () => {
    const workflow = createWorkflow({
      id: 'no-customer',
      inputSchema: pusharyApprovalStepInputSchema,
      outputSchema: pusharyAnswerSchema,
      options: { autoRestartActiveRuns: false },
    })
      .then(pusharyApprovalStep({ client: client(), store }))
      .commit()
    const mastra = new Mastra({
      storage: new LibSQLStore({ id: 'steps', url: `file:${join(dir, 'mastra.db')}` }),
      workflows: { workflow },
      logger: false,
    })
    const run = await mastra.getWorkflow('workflow').createRun()
    const result = await run.start({
      inputData: { operationId: 'op-1', question: 'Refund?', type: 'confirm' },
    })
    expect(result.status).toBe('failed')
    expect((result as { error?: { message?: string } }).error?.message).toContain('externalId')
    expect(requests).toBe(0)
    expect(await store.listByState('pending', { limit: 10 })).toEqual([])
  })

  it('refuses to ask from inside a nested workflow used as a step, before any request or write', async () => {
    const inner = createWorkflow({
      id: 'nested-inner',
      inputSchema: pusharyApprovalStepInputSchema,
      outputSchema: pusharyAnswerSchema,
    })
      .then(pusharyApprovalStep({ client: client(), store }, { externalId: 'customer_1' }))
      .commit()
    const outer = createWorkflow({
      id: 'nested-outer',
      inputSchema: pusharyApprovalStepInputSchema,
      outputSchema: pusharyAnswerSchema,
    })
      .then(inner)
      .commit()
    const mastra = new Mastra({
      storage: new LibSQLStore({ id: 'nested', url: `file:${join(dir, 'nested.db')}` }),
      workflows: { outer },
      logger: false,
    })
    const before = requests
    const run = await mastra.getWorkflow('outer').createRun()
    const result = await run.start({
      inputData: { operationId: 'op-n', question: 'Refund?', type: 'confirm' },
    })
    expect(result.status).toBe('failed')
    expect((result as { error?: { message?: string } }).error?.message).toMatch(
      /nested-inner.*not registered/,
    )
    expect(requests).toBe(before)
    expect((await store.listByState('pending', { limit: 100 })).filter((r) => r.runId === run.runId)).toEqual(
      [],
    )
  })
})

describe('gate decisions', () => {
  it('approves only a confirm answered yes and names every other outcome', () => {
    expect(declineReason({ status: 'answered', value: 'yes', approved: true })).toBeNull()
    expect(declineReason({ status: 'answered', value: 'no', approved: false })).toBe('denied')
    expect(declineReason({ status: 'expired', value: null, approved: false })).toBe('expired')
    expect(declineReason({ status: 'cancelled', value: null, approved: false })).toBe('cancelled')
    expect(declineReason({ status: 'answered', value: 'yes', approved: false })).toBe('not_approved')
    // A forged approved flag on a non-answer still declines.
    expect(declineReason({ status: 'expired', value: null, approved: true })).toBe('expired')
  })
})
