/**
 * What an agent review's card shows besides the question, like a workflow
 * card: which agent asks (the Mastra agent's `name`), what the tool does (the
 * Mastra tool's `description`, or the application's own text per tool) and
 * the risk (per tool; `medium` for a `requireApproval` call by default).
 * Everything here becomes part of the review's subject, so it is
 * fingerprinted into the binding: what the card shows is what was approved.
 */
import { z } from 'zod/v4'
import { DISPLAYED_TEXT_MESSAGE, isDisplayedTextExact, visibleText } from '../pushary/display-text.js'
import { PusharyValidationError } from '../pushary/errors.js'
import { PUSHARY_LIMITS } from '../pushary/limits.js'
import { storableString } from '../pushary/text-rules.js'
import type { PusharyApprovalSubject } from '../steps/approval-schemas.js'
import type { NormalizedCall } from './agent-shapes.js'

/** Risk shown for an approval when the tool's settings name none. */
export const DEFAULT_AGENT_TOOL_RISK = 'medium'

// The local service's card limits (server/local-input-rules.ts), so a card is never refused for length.
const LABEL_MAX = 120
const EFFECT_MAX = 500
const RISK_MAX = 200

const shownText = (max: number) =>
  storableString().trim().min(1).max(max).refine(isDisplayedTextExact, { message: DISPLAYED_TEXT_MESSAGE })

/**
 * Per-tool card settings, keyed by the tool's name as the agent calls it
 * (the key in the agent's `tools`). `risk`: `low`, `medium`, `high` (drawn
 * in colour) or your own short text; default `medium`. `description`: what
 * the reviewer reads instead of the tool's model-facing `description`.
 *
 * @example
 * const tools: PusharyAgentTools = { restartService: { risk: 'high', description: 'Restarts a production service' } }
 */
export const pusharyAgentToolsSchema = z.record(
  z.string().min(1).max(200),
  z.object({
    risk: shownText(RISK_MAX).optional(),
    description: shownText(EFFECT_MAX).optional(),
  }),
)
/** @example const tools: PusharyAgentTools = { issueRefund: { risk: 'high' } } */
export type PusharyAgentTools = z.input<typeof pusharyAgentToolsSchema>

/**
 * The per-tool settings, refused with a typed error naming the field before
 * anything is asked.
 *
 * @example
 * const tools = checkedAgentTools(target.tools, 'openPusharyAgentReview', 'target.tools')
 */
export function checkedAgentTools(tools: unknown, operation: string, field: string): PusharyAgentTools {
  if (tools === undefined) return {}
  const parsed = pusharyAgentToolsSchema.safeParse(tools)
  if (parsed.success) return parsed.data
  throw PusharyValidationError.fromZod(parsed.error, {
    operation,
    code: 'invalid_options',
    fieldPrefix: field,
  })
}

/**
 * Text the card derives from Mastra (the agent's name, the tool's name and
 * description): written by the developer, so an invisible character there
 * (an emoji's U+FE0F) is drawn visibly (`⟦U+FE0F⟧`) rather than failing the
 * review; cut to `max` UTF-16 units on a grapheme boundary, marking the cut
 * with an ellipsis.
 */
function cut(text: string, max: number): string {
  const oneLine = visibleText(text.replace(/\s+/g, ' ').trim())
  if (oneLine.length <= max) return oneLine
  let kept = ''
  for (const { segment } of new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(oneLine)) {
    if (kept.length + segment.length > max - 1) break
    kept += segment
  }
  return `${kept.trimEnd()}…`
}

type Listing = Record<string, unknown>
type Inspectable = {
  name?: unknown
  id?: unknown
  listTools?: () => Promise<Listing> | Listing
  listAgents?: () => Promise<Listing> | Listing
}

/** The agent that owns the called tool: the sub-agent at the end of `via` for a delegated call. */
async function owningAgent(agent: Inspectable, via: readonly string[]): Promise<Inspectable | undefined> {
  let current: Inspectable | undefined = agent
  for (const hop of via) {
    const agents: Listing | undefined = await current?.listAgents?.()
    current = agents?.[hop.replace(/^agent-/, '')] as Inspectable | undefined
  }
  return current
}

/**
 * The tool's own `description`, looked up on the agent that owns it; absent
 * when the agent cannot list its tools or the tool has none (the card then
 * says what runs without it).
 */
async function toolDescription(agent: Inspectable, call: NormalizedCall): Promise<string | undefined> {
  try {
    const owner = await owningAgent(agent, call.via)
    const tools = (await owner?.listTools?.()) ?? {}
    const byKey = call.toolName === undefined ? undefined : tools[call.toolName]
    const tool = (byKey ??
      Object.values(tools).find((entry) => (entry as { id?: unknown })?.id === call.toolName)) as
      | { description?: unknown }
      | undefined
    const description = tool?.description
    return typeof description === 'string' && description.trim() !== '' ? description : undefined
  } catch {
    return undefined
  }
}

/**
 * The agent's name as the card shows it (its `name`, else its id), cut to the
 * service's limit; a character the card cannot draw is shown visibly.
 *
 * @example
 * shownAgentName({ name: 'Ops bot' }, 'ops') // 'Ops bot'
 */
export function shownAgentName(agent: unknown, agentId: string): string {
  const { name, id } = (agent ?? {}) as Inspectable
  const chosen = [name, id, agentId].find(
    (value): value is string => typeof value === 'string' && value.trim() !== '',
  )
  return cut(chosen ?? agentId, PUSHARY_LIMITS.agentNameMax)
}

/** What {@link agentCardOf} adds to a review's subject. */
export type AgentCard = Pick<PusharyApprovalSubject, 'agentName' | 'presentation'>

/**
 * The card of one suspended call: the agent's name for every review, and for
 * an approval the tool's description and risk as the presentation (label:
 * the tool's name). A presentation your `subject` gives wins, taking the
 * tool's risk only when it names none.
 *
 * @example
 * const card = await agentCardOf({ agent, agentId: 'ops', call, tools: { restartService: { risk: 'high' } } })
 */
export async function agentCardOf(input: {
  agent: unknown
  agentId: string
  call: NormalizedCall
  tools: PusharyAgentTools
  given?: PusharyApprovalSubject['presentation']
}): Promise<AgentCard> {
  const agentName = shownAgentName(input.agent, input.agentId)
  const { call } = input
  if (call.kind !== 'approval' || call.toolName === undefined) {
    return { agentName, ...(input.given ? { presentation: input.given } : {}) }
  }
  const settings = Object.hasOwn(input.tools, call.toolName) ? input.tools[call.toolName] : undefined
  const risk = settings?.risk ?? DEFAULT_AGENT_TOOL_RISK
  if (input.given) return { agentName, presentation: { ...input.given, risk: input.given.risk ?? risk } }
  const described = settings?.description ?? (await toolDescription(input.agent as Inspectable, call))
  const effect = described === undefined ? `Runs the tool ${call.toolName}.` : cut(described, EFFECT_MAX)
  return {
    agentName,
    presentation: { label: cut(call.toolName, LABEL_MAX), effect, risk },
  }
}
