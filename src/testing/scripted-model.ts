/**
 * A scripted language model (the AI SDK v2 shape Mastra calls), so a test runs
 * a real Mastra `Agent` without a model provider or key. Each turn it reads
 * the prompt the agent built and answers with the script's reply: tool calls,
 * or text. The default closing text lists every tool result the model saw,
 * so a test can assert what reached the model (a decline reason, a typed
 * answer).
 */
import type { MastraLanguageModel } from '@mastra/core/agent'

type PromptPart = { type: string; text?: string; toolCallId?: string; toolName?: string; output?: unknown }

/**
 * The prompt as the agent hands it to the model: messages with a role and
 * either a string or a list of parts (text, tool calls, tool results).
 *
 * @example
 * const roles = (turn: ScriptedTurn) => turn.prompt.map((message) => message.role)
 */
export type ScriptedPrompt = readonly { role: string; content: string | readonly PromptPart[] }[]

/**
 * One tool call the scripted model emits. `toolName` is the key of the tool
 * in the agent's `tools`; `input` must fit the tool's input schema.
 *
 * @example
 * const call: ScriptedToolCall = { toolCallId: 'c1', toolName: 'refund', input: { orderId: 'o1' } }
 */
export interface ScriptedToolCall {
  toolCallId: string
  toolName: string
  input: unknown
}

/**
 * What the model answers in one turn: tool calls (the agent runs or suspends
 * them) or a closing text.
 *
 * @example
 * const reply: ScriptedReply = { text: 'Done.' }
 */
export type ScriptedReply = { toolCalls: ScriptedToolCall[] } | { text: string }

/**
 * A tool result already in the prompt (the tool's output, a decline, or an
 * error), by the tool that produced it.
 *
 * @example
 * const declined = (result: ScriptedToolResult) => JSON.stringify(result.output).includes('declined')
 */
export interface ScriptedToolResult {
  toolName: string
  output: unknown
}

/**
 * What one turn sees: the tool results already in the prompt by call id, the
 * user's texts in order, and the whole prompt.
 *
 * @example
 * const script = (turn: ScriptedTurn): ScriptedReply =>
 *   turn.results.has('c1') ? { text: 'Done.' } : { toolCalls: [{ toolCallId: 'c1', toolName: 'refund', input: {} }] }
 */
export interface ScriptedTurn {
  results: Map<string, ScriptedToolResult>
  userTexts: string[]
  prompt: ScriptedPrompt
}

function readTurn(prompt: ScriptedPrompt): ScriptedTurn {
  const results = new Map<string, ScriptedToolResult>()
  const userTexts: string[] = []
  for (const message of prompt) {
    if (typeof message.content === 'string') continue
    for (const part of message.content) {
      if (message.role === 'tool' && part.type === 'tool-result' && part.toolCallId) {
        results.set(part.toolCallId, { toolName: part.toolName ?? '', output: part.output })
      }
      if (message.role === 'user' && part.type === 'text') userTexts.push(part.text ?? '')
    }
  }
  return { results, userTexts, prompt }
}

/**
 * The default closing text: `saw ` and every tool result the model saw, as
 * JSON, so an assertion on the agent's text shows what reached the model.
 *
 * @example
 * const model = scriptedModel((turn) => ({ text: describeResults(turn) }))
 */
export function describeResults(turn: ScriptedTurn): string {
  const seen = [...turn.results.entries()].map(([id, result]) => ({ id, ...result }))
  return `saw ${JSON.stringify(seen)}`
}

/**
 * A script that emits `calls` while none of them has a result in the prompt,
 * then closes with `text` (default: {@link describeResults}).
 *
 * @example
 * const model = scriptedModel(callsOnce([{ toolCallId: 'c1', toolName: 'refund', input: { orderId: 'o1' } }]))
 */
export function callsOnce(calls: ScriptedToolCall[], text?: string): (turn: ScriptedTurn) => ScriptedReply {
  return (turn) => {
    const open = calls.filter((call) => !turn.results.has(call.toolCallId))
    if (open.length === calls.length) return { toolCalls: calls }
    return { text: text ?? describeResults(turn) }
  }
}

/**
 * A language model for Mastra's `Agent` (`model:`) that answers each turn
 * with `script(turn)`, through `generate` and `stream` alike. No network, no
 * key; usage is reported as one token in and out.
 *
 * @example
 * const agent = new Agent({
 *   id: 'support',
 *   name: 'Support',
 *   instructions: 'Refund orders.',
 *   model: scriptedModel(callsOnce([{ toolCallId: 'c1', toolName: 'refund', input: { orderId: 'o1' } }], 'Done.')),
 *   tools: { refund },
 * })
 */
export function scriptedModel(script: (turn: ScriptedTurn) => ScriptedReply): MastraLanguageModel {
  // Response ids stay unique across models too: a test may continue one
  // memory thread with a second agent (a restarted worker).
  const prefix = globalThis.crypto.randomUUID().slice(0, 8)
  let counter = 0
  const reply = (prompt: ScriptedPrompt) => script(readTurn(prompt))
  const usage = { inputTokens: 1, outputTokens: 1, totalTokens: 2 }
  const toolCallParts = (calls: ScriptedToolCall[]) =>
    calls.map((call) => ({
      type: 'tool-call' as const,
      toolCallId: call.toolCallId,
      toolName: call.toolName,
      input: JSON.stringify(call.input),
    }))
  return {
    specificationVersion: 'v2',
    provider: 'scripted',
    modelId: 'scripted-model',
    supportedUrls: {},
    async doGenerate(options: { prompt: ScriptedPrompt }) {
      const answer = reply(options.prompt)
      return 'text' in answer
        ? { content: [{ type: 'text', text: answer.text }], finishReason: 'stop', usage, warnings: [] }
        : { content: toolCallParts(answer.toolCalls), finishReason: 'tool-calls', usage, warnings: [] }
    },
    async doStream(options: { prompt: ScriptedPrompt }) {
      const answer = reply(options.prompt)
      counter += 1
      const id = `text_${prefix}_${counter}`
      const parts: unknown[] = [
        { type: 'stream-start', warnings: [] },
        {
          type: 'response-metadata',
          id: `resp_${prefix}_${counter}`,
          modelId: 'scripted-model',
          timestamp: new Date(0),
        },
      ]
      if ('text' in answer) {
        parts.push(
          { type: 'text-start', id },
          { type: 'text-delta', id, delta: answer.text },
          { type: 'text-end', id },
          { type: 'finish', finishReason: 'stop', usage },
        )
      } else {
        parts.push(...toolCallParts(answer.toolCalls), { type: 'finish', finishReason: 'tool-calls', usage })
      }
      const stream = new ReadableStream({
        start(controller) {
          for (const part of parts) controller.enqueue(part)
          controller.close()
        },
      })
      return { stream: stream as never }
    },
  } as unknown as MastraLanguageModel
}
