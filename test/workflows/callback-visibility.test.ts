/**
 * What an operator sees when a worker is set up wrongly: a dispatcher with
 * the wrong webhook secret logs one line naming the secret (through the
 * Mastra logger) however many 401s it answers, and `pushary-mastra
 * deliveries list` shows those 401s from the local service's database;
 * `pushary-mastra reviews check --app` lists the pending reviews a worker
 * could not resume. Real local service over loopback, real HTTP receiver,
 * the CLI as a separate OS process.
 */
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import { ConsoleLogger } from '@mastra/core/logger'
import { Mastra } from '@mastra/core/mastra'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPusharyDispatcher } from '../../src/agents/dispatcher.js'
import type { CallbackDelivery } from '../../src/server/callbacks-outbox.js'
import { createTestEnv, startFetchServer, type TestEnv, waitFor } from '../helpers/mastra.js'
import { jsonOf, runCli } from '../reliability/support/cli.js'
import { buildApp, type TestApp } from './fixtures/app.js'

let env: TestEnv
let app: TestApp

beforeAll(async () => {
  env = await createTestEnv('callback-visibility')
  app = buildApp(env)
})

afterAll(async () => {
  await app?.close()
  await env?.close()
})

class Capture extends ConsoleLogger {
  readonly warnings: string[] = []
  override warn(message: string): void {
    this.warnings.push(message)
  }
}

describe('a dispatcher with the wrong webhook secret', () => {
  it('logs the secret as the cause once, and deliveries list shows the 401s', async () => {
    const logger = new Capture()
    const mastra = new Mastra({ logger, storage: app.mastra.getStorage() })
    const dispatcher = createPusharyDispatcher({
      mastra,
      client: env.client,
      store: app.store,
      webhookSecret: 'whsec_not_the_services_secret',
    })
    const receiver = await startFetchServer((request) => dispatcher.handleCallback(request))
    try {
      const decisionIds: string[] = []
      for (let index = 0; index < 2; index++) {
        const { decisionId } = await env.client.decisions.create({
          question: `Refund ${index}?`,
          callbackUrl: `${receiver.url}/pushary/callback`,
        })
        await env.client.decisions.answer(decisionId, 'yes')
        decisionIds.push(decisionId)
      }
      const db = join(env.dir, 'service.db')
      const listed = await waitFor(
        async () => {
          const result = await runCli([
            'deliveries',
            'list',
            '--decision',
            decisionIds[0] as string,
            '--db',
            db,
            '--json',
          ])
          const deliveries = jsonOf<(CallbackDelivery & { decisionId: string })[]>(result)
          return (deliveries[0]?.history.length ?? 0) >= 2 ? deliveries : undefined
        },
        60_000,
        200,
      )
      expect(listed).toHaveLength(1)
      expect(listed[0]?.decisionId).toBe(decisionIds[0])
      expect(listed[0]?.history.map((attempt) => [attempt.statusCode, attempt.ok])).toContainEqual([
        401,
        false,
      ])
      expect(listed[0]?.history.every((attempt) => attempt.statusCode === 401)).toBe(true)

      const text = await runCli(['deliveries', 'list', '--db', db])
      expect(text.code, text.stderr).toBe(0)
      expect(text.stdout).toContain(decisionIds[1])
      expect(text.stdout).toMatch(/HTTP 401/)
      expect(text.stdout).toMatch(/PUSHARY_WEBHOOK_SECRET/)

      // Several 401s (two decisions, retried), one line a minute naming the cause.
      const lines = logger.warnings.filter((line) => /PUSHARY_WEBHOOK_SECRET/.test(line))
      expect(lines).toHaveLength(1)
      expect(lines[0]).toMatch(/401/)
    } finally {
      await receiver.close()
    }
  }, 120_000)
})

describe('pushary-mastra reviews check', () => {
  it('lists the pending reviews a worker without the batch child workflow could not resume, and passes the correct worker', async () => {
    const runId = `check-${randomUUID().slice(0, 8)}`
    const workflow = app.mastra.getWorkflowById('refund-batch' as never) as unknown as {
      createRun(o: {
        runId: string
      }): Promise<{ start(p: { inputData: unknown }): Promise<{ status: string }> }>
    }
    const run = await workflow.createRun({ runId })
    const started = await run.start({
      inputData: [0, 1].map((index) => ({ operationId: `${runId}-${index}`, question: 'Refund?' })),
    })
    expect(started.status).toBe('suspended')
    const module = 'test/workflows/fixtures/worker-module.ts'
    const db = join(env.dir, 'reviews.db')
    const bad = await runCli(['reviews', 'check', '--app', module, '--db', db, '--json'], 120_000, {
      PUSHARY_TEST_DIR: env.dir,
      PUSHARY_TEST_WORKER: 'no-child-workflow',
    })
    expect(bad.code, bad.stderr).toBe(1)
    const report = jsonOf<{
      checked: number
      problems: { decisionId: string; target: string; missing: string }[]
    }>(bad)
    const ours = report.problems.filter((problem) => problem.missing === 'child_workflow')
    // The two items and the parent.
    expect(ours.map((problem) => problem.target).sort()).toEqual([
      'batch-parent',
      'workflow-step',
      'workflow-step',
    ])

    const good = await runCli(['reviews', 'check', '--app', module, '--db', db], 120_000, {
      PUSHARY_TEST_DIR: env.dir,
    })
    expect(good.code, good.stdout + good.stderr).toBe(0)
    expect(good.stdout).toMatch(/checked 3 pending review\(s\); 0 this worker cannot resume/)
  }, 120_000)
})
