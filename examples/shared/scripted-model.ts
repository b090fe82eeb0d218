/**
 * A scripted language model (AI SDK v2 shape), so the examples and the tests
 * run real Mastra agents without a model provider or key. Each turn it reads
 * the prompt the agent built and answers with the script's reply: tool calls,
 * or text. The default closing text lists every tool result the model saw, so
 * a test can assert what reached the model (a decline reason, a typed answer).
 */
import type { MastraLanguageModel } from '@mastra/core/agent'

type PromptPart = { type: string; text?: string; toolCallId?: string; toolName?: string; output?: unknown }
type Prompt = readonly { role: string; content: string | readonly PromptPart[] }[]

export interface ScriptedToolCall {
  toolCallId: string
  toolName: string
  input: unknown
}

export type ScriptedReply = { toolCalls: ScriptedToolCall[] } | { text: string }

/** What one turn sees: the tool results already in the prompt, by call id, and the user texts. */
export interface ScriptedTurn {
  results: Map<string, { toolName: string; output: unknown }>
  userTexts: string[]
  prompt: Prompt
}

/** Tool results already in the prompt, by tool call id. */
function readTurn(prompt: Prompt): ScriptedTurn {
  const results = new Map<string, { toolName: string; output: unknown }>()
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

/** Default closing text: every tool result the model saw, as JSON. */
export function describeResults(turn: ScriptedTurn): string {
  const seen = [...turn.results.entries()].map(([id, result]) => ({ id, ...result }))
  return `saw ${JSON.stringify(seen)}`
}

/**
 * Emits `calls` while none of them has a result in the prompt, then `text`
 * (default: {@link describeResults}).
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

let counter = 0

export function scriptedModel(script: (turn: ScriptedTurn) => ScriptedReply): MastraLanguageModel {
  const reply = (prompt: Prompt) => script(readTurn(prompt))
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
    async doGenerate(options: { prompt: Prompt }) {
      const answer = reply(options.prompt)
      return 'text' in answer
        ? { content: [{ type: 'text', text: answer.text }], finishReason: 'stop', usage, warnings: [] }
        : { content: toolCallParts(answer.toolCalls), finishReason: 'tool-calls', usage, warnings: [] }
    },
    async doStream(options: { prompt: Prompt }) {
      const answer = reply(options.prompt)
      const id = `text_${++counter}`
      const parts: unknown[] = [
        { type: 'stream-start', warnings: [] },
        {
          type: 'response-metadata',
          id: `resp_${counter}`,
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
