// docs/agents.md "What the reviewer sees", as written. Added before the
// sample: the application's ops agent (a real Mastra agent on a LibSQL file,
// driven by the scripted model of @pushary/mastra/testing), its review store
// and the signed-in on-call person; after it, the exports.
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import { Agent } from '@mastra/core/agent'
import { Mastra } from '@mastra/core/mastra'
import { createTool } from '@mastra/core/tools'
import { LibSQLStore } from '@mastra/libsql'
import { describeResults, type ScriptedReply, type ScriptedTurn, scriptedModel } from '@pushary/mastra/testing'
import { z } from 'zod'
import { config, reviewStore as store } from './app.js'

/** The signed-in on-call person (one per test run: each test file has its own service). */
const session = { customerId: 'oncall_card', threadId: 'ops-card' }
/** What the tools did once approved. */
const ran: string[] = []

// The model calls the tool the user asked for, then reports what it returned.
function script(turn: ScriptedTurn): ScriptedReply {
  if (turn.results.size > 0) return { text: describeResults(turn) }
  const asked = turn.userTexts.at(-1) ?? ''
  return asked.startsWith('Restart')
    ? { toolCalls: [{ toolCallId: `restart_${randomUUID()}`, toolName: 'restartService', input: { service: 'api' } }] }
    : { toolCalls: [{ toolCallId: `refund_${randomUUID()}`, toolName: 'issueRefund', input: { orderId: 'o-1' } }] }
}

const ops = new Agent({
  id: 'ops',
  name: 'Ops bot',
  instructions: 'Restart services and refund orders when asked.',
  model: scriptedModel(script),
  tools: {
    restartService: createTool({
      id: 'restart-service',
      description: 'Restarts a service.',
      inputSchema: z.object({ service: z.string() }),
      requireApproval: true,
      execute: async ({ service }) => {
        ran.push(`restart ${service}`)
        return { restarted: true }
      },
    }),
    issueRefund: createTool({
      id: 'issue-refund',
      description: 'Refunds an order in full to the original payment method.',
      inputSchema: z.object({ orderId: z.string() }),
      requireApproval: true,
      execute: async ({ orderId }) => {
        ran.push(`refund ${orderId}`)
        return { refunded: true }
      },
    }),
  },
})
const mastra = new Mastra({
  agents: { ops },
  storage: new LibSQLStore({ id: 'ops-app', url: `file:${join(process.env.README_SAMPLES_DIR!, 'ops-mastra.db')}` }),
  logger: false,
})
const agent = mastra.getAgent('ops')

// --- sample ---
import { openPusharyAgentReview, type PusharyAgentTools, resolvePusharyApprovals } from '@pushary/mastra'

// Keyed by the tool's name as the agent calls it (the key in the agent's `tools`).
const tools: PusharyAgentTools = {
  restartService: { risk: 'high', description: 'Restarts one production service (about a minute of errors)' },
  issueRefund: { risk: 'medium' }, // description: the tool's own
}
const memory = { thread: session.threadId, resource: session.customerId }

// Deferred: open a review for each suspended call now; resume it when the answer arrives.
const restart = await agent.generate('Restart the api service', { memory })
const suspended = await agent.listSuspendedRuns({ resourceId: session.customerId })
for (const run of suspended.runs.filter((item) => item.runId === restart.runId)) {
  for (const call of run.toolCalls) {
    await openPusharyAgentReview(config, {
      agent,
      agentId: 'ops',
      runId: run.runId,
      toolCallId: call.toolCallId!,
      externalId: session.customerId,
      actionVersion: 'v1',
      store,
      tools,
    })
  }
}

// Or ask and wait for the answers: the same `tools` on the resolver's config.
const refund = await agent.generate('Refund order o-1', { memory })
const { runs } = await agent.listSuspendedRuns({ resourceId: session.customerId })
const outcome = await resolvePusharyApprovals(
  { ...config, externalId: session.customerId, tools },
  { agent, runs: runs.filter((run) => run.runId === refund.runId) },
)
// --- end of sample ---

export { outcome, ran, session }
