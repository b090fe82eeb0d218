/**
 * Real Mastra agents for the agent tests: a protected refund tool
 * (`requireApproval`) that counts executions, an unflagged lookup tool, the
 * deferred question tool, a supervisor over a refunder, all on one LibSQL file.
 */
import { join } from 'node:path'
import { Agent } from '@mastra/core/agent'
import { Mastra } from '@mastra/core/mastra'
import type { MastraMemory } from '@mastra/core/memory'
import { createTool } from '@mastra/core/tools'
import { LibSQLStore } from '@mastra/libsql'
import { z } from 'zod/v4'
import { createPusharyDeferredAskTool } from '../../../src/agents/deferred-ask-tool.js'
import type { PusharyClient } from '../../../src/pushary/client.js'
import {
  callsOnce,
  type ScriptedReply,
  type ScriptedToolCall,
  type ScriptedTurn,
  scriptedModel,
} from './scripted-model.js'

export function buildAgents(input: {
  dir: string
  client: PusharyClient
  externalId: string
  calls: ScriptedToolCall[]
  supervisorCalls?: ScriptedToolCall[]
  middleCalls?: ScriptedToolCall[]
  script?: (turn: ScriptedTurn) => ScriptedReply
  onRefund?: (args: { orderId: string; amount: number }) => Promise<void> | void
  /** Conversation memory of the refunder (needed for Mastra's autoResumeSuspendedTools). */
  memory?: MastraMemory
}) {
  const executions: { orderId: string; amount: number }[] = []
  const lookups: { orderId: string }[] = []
  // No approval flag of its own: gated only by an agent-level requireToolApproval.
  const lookupOrder = createTool({
    id: 'lookup-order',
    description: 'Look an order up',
    inputSchema: z.object({ orderId: z.string() }),
    outputSchema: z.object({ status: z.string() }),
    execute: async (args) => {
      lookups.push(args)
      return { status: 'shipped' }
    },
  })
  const issueRefund = createTool({
    id: 'issue-refund',
    description: 'Refund an order',
    inputSchema: z.object({ orderId: z.string(), amount: z.number().positive() }),
    outputSchema: z.object({ refunded: z.boolean(), orderId: z.string() }),
    requireApproval: true,
    execute: async (args) => {
      executions.push(args)
      await input.onRefund?.(args)
      return { refunded: true, orderId: args.orderId }
    },
  })
  const askHuman = createPusharyDeferredAskTool({ client: input.client }, { externalId: input.externalId })
  const tools = { issueRefund, askHuman, lookupOrder }
  const refunder = new Agent({
    id: 'refunder',
    name: 'refunder',
    description: 'Refunds orders',
    instructions: 'Refund when asked.',
    model: scriptedModel(input.script ?? callsOnce(input.calls)),
    tools,
    ...(input.memory ? { memory: input.memory } : {}),
  })
  const middle = new Agent({
    id: 'middle',
    name: 'middle',
    description: 'Delegates refunds',
    instructions: 'Delegate.',
    model: scriptedModel(callsOnce(input.middleCalls ?? [])),
    agents: { refunder },
  })
  const supervisor = new Agent({
    id: 'supervisor',
    name: 'supervisor',
    instructions: 'Delegate refunds.',
    model: scriptedModel(callsOnce(input.supervisorCalls ?? [])),
    agents: input.middleCalls ? { middle } : { refunder },
  })
  const mastra = new Mastra({
    agents: { refunder, middle, supervisor },
    storage: new LibSQLStore({ id: 'agents', url: `file:${join(input.dir, 'mastra.db')}` }),
    logger: false,
  })
  return { mastra, refunder, supervisor, executions, lookups }
}
