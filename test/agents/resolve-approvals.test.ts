import { mkdtempSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { resolvePusharyApprovals } from '../../src/agents/resolve-approvals.js'
import { createTestEnv, type TestEnv } from '../helpers/mastra.js'
import { answerNext } from './support/agent-env.js'
import { buildAgents } from './support/agents.js'

let env: TestEnv
let n = 0

beforeAll(async () => {
  env = await createTestEnv('resolve')
})
afterAll(async () => {
  await env?.close()
})

function fresh(
  calls: Parameters<typeof buildAgents>[0]['calls'],
  extra: Partial<Parameters<typeof buildAgents>[0]> = {},
) {
  const dir = mkdtempSync(join(env.dir, `case-${++n}-`))
  const externalId = `customer_${n}`
  return { externalId, ...buildAgents({ dir, client: env.client, externalId, calls, ...extra }) }
}

const refundCall = (id: string, orderId = 'o1', amount = 20) => ({
  toolCallId: id,
  toolName: 'issueRefund',
  input: { orderId, amount },
})

describe('resolvePusharyApprovals', () => {
  it('runs the protected tool once when the customer approves, as a run of the agent review workflow', async () => {
    const { refunder, externalId, executions, mastra } = fresh([refundCall('r1')])
    const output = await refunder.generate('Refund o1', { memory: { thread: 't1', resource: externalId } })
    expect(output.finishReason).toBe('suspended')
    const { runs } = await refunder.listSuspendedRuns({ resourceId: externalId })
    const [outcome] = await Promise.all([
      resolvePusharyApprovals(
        { client: env.client, externalId, policy: false },
        { agent: refunder, runs: runs.filter((run) => run.runId === output.runId) },
      ),
      answerNext(env.client, externalId, 'yes'),
    ])
    expect(outcome.allApproved).toBe(true)
    expect(outcome.resolved).toHaveLength(1)
    expect(outcome.resolved[0]).toMatchObject({ approved: true, toolName: 'issueRefund', toolCallId: 'r1' })
    expect((outcome.resolved[0]!.output as { text: string }).text).toContain('refunded')
    expect(executions).toHaveLength(1)
    const workflow = mastra.getWorkflowById('pushary-agent-review')
    const listed = await workflow.listWorkflowRuns()
    expect(
      listed.runs.map((run: { snapshot: unknown }) => (run.snapshot as { status: string }).status),
    ).toEqual(['success'])
  })

  it('declines with a reason the model reads when the customer says no, running nothing', async () => {
    const { refunder, externalId, executions } = fresh([refundCall('r2')])
    await refunder.generate('Refund', { memory: { thread: 't1', resource: externalId } })
    const [outcome] = await Promise.all([
      resolvePusharyApprovals(
        { client: env.client, externalId, policy: false },
        { agent: refunder, resourceId: externalId },
      ),
      answerNext(env.client, externalId, 'no'),
    ])
    expect(outcome.allApproved).toBe(false)
    expect(outcome.resolved[0]).toMatchObject({ approved: false, reason: 'The customer declined.' })
    expect((outcome.resolved[0]!.output as { text: string }).text).toContain('The customer declined.')
    expect(executions).toHaveLength(0)
  })

  it('declines an unanswered call when the local wait ends and withdraws the question', async () => {
    const { refunder, externalId, executions } = fresh([refundCall('r3')])
    await refunder.generate('Refund', { memory: { thread: 't1', resource: externalId } })
    const outcome = await resolvePusharyApprovals(
      { client: env.client, externalId, policy: false, timeoutMs: 300 },
      { agent: refunder, threadId: 't1' },
    )
    expect(outcome.resolved[0]).toMatchObject({ approved: false, reason: 'The review cancelled.' })
    expect(executions).toHaveLength(0)
  })

  it('resolves two approval-needing calls of one step in order, rediscovering the second', async () => {
    const { refunder, externalId, executions } = fresh([refundCall('a', 'A', 10), refundCall('b', 'B', 20)])
    await refunder.generate('Refund both', { memory: { thread: 't1', resource: externalId } })
    const answering = (async () => {
      await answerNext(env.client, externalId, 'yes')
      await answerNext(env.client, externalId, 'no')
    })()
    const [outcome] = await Promise.all([
      resolvePusharyApprovals(
        { client: env.client, externalId, policy: false },
        { agent: refunder, resourceId: externalId },
      ),
      answering,
    ])
    expect(outcome.resolved.map((entry) => [entry.toolCallId, entry.approved])).toEqual([
      ['a', true],
      ['b', false],
    ])
    expect(executions.map((e) => e.orderId)).toEqual(['A'])
    expect(outcome.pending).toEqual([])
  })

  it('stops at maxApprovals and returns the run as pending', async () => {
    const { refunder, externalId, executions } = fresh([refundCall('m1', 'A', 10), refundCall('m2', 'B', 20)])
    await refunder.generate('Refund both', { memory: { thread: 't1', resource: externalId } })
    const [outcome] = await Promise.all([
      resolvePusharyApprovals(
        { client: env.client, externalId, policy: false, maxApprovals: 1 },
        { agent: refunder, resourceId: externalId },
      ),
      answerNext(env.client, externalId, 'yes'),
    ])
    expect(outcome.resolved).toHaveLength(1)
    expect(outcome.pending).toHaveLength(1)
    expect(outcome.allApproved).toBe(false)
    expect(executions).toHaveLength(1)
  })

  it.each([
    ['generate, one level', false, false],
    ['generate, two levels', false, true],
    ['stream, one level', true, false],
    ['stream, two levels', true, true],
  ])('resolves a supervisor delegation at the outermost agent (%s)', async (_name, stream, twoLevels) => {
    const { supervisor, externalId, executions } = fresh([refundCall('sub_1')], {
      supervisorCalls: [
        {
          toolCallId: 'sup_1',
          toolName: twoLevels ? 'agent-middle' : 'agent-refunder',
          input: { prompt: 'refund o1' },
        },
      ],
      ...(twoLevels
        ? {
            middleCalls: [
              { toolCallId: 'mid_1', toolName: 'agent-refunder', input: { prompt: 'refund o1' } },
            ],
          }
        : {}),
    })
    const memory = { memory: { thread: 't1', resource: externalId } }
    if (stream) {
      const first = await supervisor.stream('Refund o1', memory)
      expect(await first.finishReason).toBe('suspended')
    } else {
      expect((await supervisor.generate('Refund o1', memory)).finishReason).toBe('suspended')
    }
    const [outcome, decision] = await Promise.all([
      resolvePusharyApprovals(
        { client: env.client, externalId, policy: false },
        { agent: supervisor, resourceId: externalId, stream },
      ),
      answerNext(env.client, externalId, 'yes'),
    ])
    expect(decision.question).toContain('issueRefund')
    expect(outcome.resolved[0]).toMatchObject({
      approved: true,
      toolName: 'issueRefund',
      toolCallId: 'sup_1',
    })
    expect(executions).toHaveLength(1)
    if (stream) {
      const output = outcome.resolved[0]!.output as { fullStream: AsyncIterable<{ type: string }> }
      const types: string[] = []
      for await (const chunk of output.fullStream) types.push(chunk.type)
      expect(types).toContain('finish')
    }
  })

  it('refuses unfiltered global resolution and a bad maxApprovals before any request', async () => {
    const { refunder } = fresh([])
    await expect(
      resolvePusharyApprovals({ client: env.client, externalId: 'c' }, { agent: refunder }),
    ).rejects.toMatchObject({ code: 'invalid_options', field: 'target' })
    await expect(
      resolvePusharyApprovals(
        { client: env.client, externalId: 'c', maxApprovals: 101 },
        { agent: refunder, threadId: 't' },
      ),
    ).rejects.toMatchObject({ field: 'config.maxApprovals' })
    await expect(
      resolvePusharyApprovals({ client: env.client, externalId: ' ' }, { agent: refunder, threadId: 't' }),
    ).rejects.toMatchObject({ code: 'invalid_external_id' })
  })
})
