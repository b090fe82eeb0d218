/**
 * The warning an approval step logs at its workflow's first run when the
 * step after it is neither `pusharyGate()` nor a permit step. Not a refusal:
 * a step may read `approved` itself. But a protected step that declares its
 * own input schema (`z.object({ approved: z.boolean() })`) compiles without
 * the gate and runs after a Deny unless it checks, so the operator is told
 * once, naming both steps, through the Mastra instance's logger.
 *
 * Steps that guard an answer say so in their Mastra step `metadata` (which
 * Mastra keeps on the step in the workflow graph), so the check reads the
 * graph of the registered workflow and nothing else.
 */
import type { Mastra } from '@mastra/core/mastra'

/** Step metadata key under which a step declares how it guards an approval answer. */
export const PUSHARY_GUARD_METADATA_KEY = 'pusharyGuard'

/**
 * How a step guards the answer before it: `gate` (`pusharyGate`,
 * `pusharyGateItems`), `permit` (`withPusharyPermit`), or `own-check` (a
 * package step that reads `approved` itself, as the agent review workflow's
 * resume step does).
 *
 * @example
 * createStep({ id, inputSchema, outputSchema, metadata: { pusharyGuard: 'gate' }, execute })
 */
export type PusharyGuard = 'gate' | 'permit' | 'own-check'

const GUARDS: ReadonlySet<unknown> = new Set<PusharyGuard>(['gate', 'permit', 'own-check'])

/** A graph entry as Mastra keeps it (only the fields read here). */
interface GraphStep {
  id?: unknown
  metadata?: Record<string, unknown> | undefined
}
interface GraphEntry {
  type?: unknown
  id?: unknown
  step?: (GraphStep & { type?: unknown; step?: GraphStep }) | undefined
  steps?: ReadonlyArray<{ type?: unknown; id?: unknown; step?: GraphStep }>
}

/** The steps an entry starts, each with its id and whether it declares a guard. */
function startedSteps(entry: GraphEntry): Array<{ id: string; guarded: boolean }> {
  const one = (step: GraphStep | undefined, fallback: unknown) => ({
    id: typeof step?.id === 'string' ? step.id : String(fallback ?? entry.type),
    guarded: GUARDS.has(step?.metadata?.[PUSHARY_GUARD_METADATA_KEY]),
  })
  switch (entry.type) {
    case 'step':
      return [one(entry.step, entry.id)]
    case 'foreach':
    case 'loop':
      return [one(entry.step?.step, entry.step?.id ?? entry.id)]
    case 'parallel':
    case 'conditional':
      return (entry.steps ?? []).map((branch) => one(branch.step, branch.id))
    default:
      // A mapping, a sleep, an agent or tool entry: nothing there checks `approved`.
      return [{ id: typeof entry.id === 'string' ? entry.id : String(entry.type), guarded: false }]
  }
}

function holdsStep(entry: GraphEntry, stepId: string): boolean {
  if (entry.type === 'step') return entry.step?.id === stepId
  if (entry.type === 'foreach') return entry.step?.step?.id === stepId
  return false
}

/**
 * The steps right after `stepId` in a workflow graph that do not guard its
 * answer; empty when they all do, when nothing follows, or when the step is
 * not at the top level (or inside a `.foreach`) of this graph.
 *
 * @example
 * unguardedAfter(workflow.stepGraph, 'approve') // ['issue-refund']
 */
export function unguardedAfter(graph: unknown, stepId: string): string[] {
  if (!Array.isArray(graph)) return []
  const entries = graph as GraphEntry[]
  const at = entries.findIndex((entry) => holdsStep(entry, stepId))
  const next = at === -1 ? undefined : entries[at + 1]
  if (!next) return []
  return startedSteps(next)
    .filter((step) => !step.guarded)
    .map((step) => step.id)
}

function graphOf(mastra: Mastra, workflowId: string): unknown {
  try {
    return (mastra.getWorkflowById(workflowId as never) as { stepGraph?: unknown } | undefined)?.stepGraph
  } catch {
    return undefined
  }
}

/**
 * A check for one approval step: at the first run of each workflow in this
 * process (the step object remembers which workflows it already checked),
 * warns through the Mastra logger when the next step is not a guard. Never
 * throws: a graph it cannot read is simply not judged.
 *
 * @example
 * const warnIfUngated = createUngatedWarning('approve')
 * warnIfUngated(mastra, workflowId)
 */
export function createUngatedWarning(
  stepId: string,
): (mastra: Mastra | undefined, workflowId: string) => void {
  const checked = new Set<string>()
  return (mastra, workflowId) => {
    if (!mastra || checked.has(workflowId)) return
    checked.add(workflowId)
    const unguarded = unguardedAfter(graphOf(mastra, workflowId), stepId)
    if (unguarded.length === 0) return
    const after = unguarded.map((id) => `"${id}"`).join(', ')
    mastra
      .getLogger()
      ?.warn(
        `[pushary] workflow "${workflowId}": approval step "${stepId}" is followed by ${after}, not by pusharyGate() or a permit step, so ${after} also runs after a Deny, an expiry or a cancellation unless it checks \`approved\` itself. Insert .then(pusharyGate()) after "${stepId}" (or wrap the action in withPusharyPermit).`,
      )
  }
}
