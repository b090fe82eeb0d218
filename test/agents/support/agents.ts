/**
 * Real Mastra agents for the agent tests: a protected refund tool
 * (`requireApproval`) that counts executions, the deferred question tool, a
 * supervisor over a refunder, all on one LibSQL file.
 */
import { join } from 'node:path'
import { Agent } from '@mastra/core/agent'
import { Mastra } from '@mastra/core/mastra'
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
}) {
  const executions: { orderId: string; amount: number }[] = []
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
  const tools = { issueRefund, askHuman }
  const refunder = new Agent({
    id: 'refunder',
    name: 'refunder',
    description: 'Refunds orders',
    instructions: 'Refund when asked.',
    model: scriptedModel(input.script ?? callsOnce(input.calls)),
    tools,
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
  return { mastra, refunder, supervisor, executions }
}
