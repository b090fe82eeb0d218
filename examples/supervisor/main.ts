/**
 * A supervisor agent delegates to a refunder sub-agent whose refund tool
 * needs approval (`requireApproval`). The delegated suspension surfaces at
 * the supervisor; `resolvePusharyApprovals` asks the customer on the phone
 * and approves or declines at the outermost agent.
 *
 *   npx tsx examples/supervisor/main.ts                    # answer on the reviewer page (link printed)
 *   npx tsx examples/supervisor/main.ts --answer approve   # unattended: answered through the service API
 *   npx tsx examples/supervisor/main.ts --answer deny
 *
 * Real Mastra agents with a scripted model (no provider, no key); the local
 * decision service runs embedded on a temporary SQLite file. Exit 0 only
 * when the outcome matches the answer (with --answer).
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { Agent } from '@mastra/core/agent'
import { Mastra } from '@mastra/core/mastra'
import { createTool } from '@mastra/core/tools'
import { LibSQLStore } from '@mastra/libsql'
import { createPusharyClient, createPusharyDevServer, resolvePusharyApprovals } from '@pushary/mastra'
import { waitForPusharyService } from '@pushary/mastra/testing'
import { z } from 'zod/v4'
import { linkSimulatedPhone, waitUntilReachable } from '../shared/local-phone.js'
import { callsOnce, scriptedModel } from '../shared/scripted-model.js'

const CUSTOMER = 'customer_1'

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { answer: { type: 'string' }, port: { type: 'string', default: '0' } },
  })
  if (values.answer !== undefined && values.answer !== 'approve' && values.answer !== 'deny') {
    process.stderr.write('--answer must be approve or deny\n')
    return 2
  }
  const dir = mkdtempSync(join(tmpdir(), 'pushary-supervisor-'))
  const service = await createPusharyDevServer({
    callbackAddresses: { allowLoopback: true },
    dbPath: join(dir, 'service.sqlite'),
    port: Number(values.port),
    onError: () => {},
  })
  const client = createPusharyClient({ apiKey: service.apiKey, baseUrl: service.baseUrl })

  const refunds: string[] = []
  const issueRefund = createTool({
    id: 'issue-refund',
    description: 'Refund an order',
    inputSchema: z.object({ orderId: z.string(), amount: z.number().positive() }),
    outputSchema: z.object({ refunded: z.boolean() }),
    requireApproval: true,
    execute: async ({ orderId }) => {
      refunds.push(orderId)
      return { refunded: true }
    },
  })
  const refunder = new Agent({
    id: 'refunder',
    name: 'refunder',
    description: 'Refunds orders',
    instructions: 'Refund the order you are asked to refund.',
    model: scriptedModel(
      callsOnce([
        { toolCallId: 'refund_1', toolName: 'issueRefund', input: { orderId: 'order_1', amount: 20 } },
      ]),
    ),
    tools: { issueRefund },
  })
  const supervisor = new Agent({
    id: 'supervisor',
    name: 'supervisor',
    instructions: 'Delegate refunds to the refunder.',
    model: scriptedModel(
      callsOnce([
        {
          toolCallId: 'delegate_1',
          toolName: 'agent-refunder',
          input: { prompt: 'Refund order_1 (20 EUR)' },
        },
      ]),
    ),
    agents: { refunder },
  })
  const mastra = new Mastra({
    agents: { supervisor, refunder },
    storage: new LibSQLStore({ id: 'supervisor', url: `file:${join(dir, 'mastra.sqlite')}` }),
    logger: false,
  })

  try {
    await waitForPusharyService(client, { timeoutMs: 30_000 })
    if (values.answer) await linkSimulatedPhone(client, CUSTOMER)
    else {
      const { universalLink } = await client.enroll(CUSTOMER)
      console.log(`Link your phone (open it, tap "Link this phone"): ${universalLink}`)
      if (!(await waitUntilReachable(client, CUSTOMER, 300_000))) throw new Error('no phone was linked')
    }
    const agent = mastra.getAgent('supervisor')
    const memory = { memory: { thread: 'conversation_1', resource: CUSTOMER } }
    const first = await agent.generate('Please refund order_1', memory)
    console.log(`supervisor: ${first.finishReason} (the refunder's refund waits for approval)`)

    // The person answers while resolvePusharyApprovals waits: unattended runs
    // tap through the service API, otherwise on the reviewer page.
    const answering = (async () => {
      for (;;) {
        const { decisions } = await client.decisions.list({
          externalId: CUSTOMER,
          status: 'pending',
          limit: 5,
        })
        const decision = decisions[0]
        if (decision?.decisionId) {
          console.log(
            `asked: "${decision.question}"  reviewer page: ${service.publicUrl}/review/${decision.decisionId}`,
          )
          if (values.answer)
            await client.decisions.answer(decision.decisionId, values.answer === 'approve' ? 'yes' : 'no')
          return
        }
        await new Promise((resolve) => setTimeout(resolve, 200))
      }
    })()
    const [outcome] = await Promise.all([
      resolvePusharyApprovals(
        {
          client,
          externalId: CUSTOMER,
          policy: false,
          requireReachable: true,
          timeoutMs: 300_000,
          question: ({ args }) => {
            const { orderId, amount } = args as { orderId: string; amount: number }
            return `Refund ${amount} EUR for ${orderId}?`
          },
        },
        { agent, resourceId: CUSTOMER },
      ),
      answering,
    ])
    const resolved = outcome.resolved[0]
    const problem = resolved?.reviewError ?? resolved?.resumeError ?? resolved?.discoveryError
    if (!resolved || problem) throw new Error(`not resolved: ${problem ?? 'nothing was suspended'}`)
    console.log(
      `Outcome: ${resolved.approved ? 'approved' : 'declined'} at the supervisor (${resolved.toolName}); refunds executed: ${refunds.length}`,
    )
    const expected =
      values.answer === undefined ? (resolved.approved ? 1 : 0) : values.answer === 'approve' ? 1 : 0
    const ok =
      refunds.length === expected &&
      (values.answer === undefined || resolved.approved === (values.answer === 'approve'))
    console.log(ok ? 'OK: the outcome matches.' : `MISMATCH: expected ${expected} refund(s).`)
    return ok ? 0 : 1
  } finally {
    await service.close()
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(
      `supervisor example failed: ${error instanceof Error ? error.message : String(error)}\n`,
    )
    process.exit(1)
  },
)
