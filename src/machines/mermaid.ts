/**
 * Renders a flat XState machine as a Mermaid `stateDiagram-v2`. The diagram is
 * generated from the machine object itself (not from a hand-kept list), so the
 * committed copy in docs/review-lifecycle.md can be checked against it.
 */
import type { AnyStateNode } from 'xstate'
import { reviewLifecycleMachine } from './review-lifecycle.js'

/** Mermaid ends a transition label at a newline and treats `;` as a separator. */
function label(text: string): string {
  return text.replace(/\s*[\r\n;]+\s*/g, ', ').trim()
}

function targetKeys(node: AnyStateNode, event: string): string[] {
  const definitions = node.transitions.get(event) ?? []
  const keys: string[] = []
  for (const definition of definitions) {
    for (const target of definition.target ?? []) keys.push(target.key)
  }
  return keys
}

/**
 * Renders `machine` as Mermaid `stateDiagram-v2` text: the initial arrow,
 * each state's description, each transition labelled with its event (in the
 * order the machine defines them), and an arrow to `[*]` from each final
 * state. Only flat machines are supported, which keeps the output stable.
 *
 * @example
 * ```ts
 * const text = machineToMermaid(reviewLifecycleMachine)
 * text.startsWith('stateDiagram-v2') // true
 * ```
 */
export function machineToMermaid(machine: { readonly root: AnyStateNode }): string {
  const root = machine.root
  const lines = ['stateDiagram-v2']
  for (const target of root.initial.target) lines.push(`  [*] --> ${target.key}`)
  const nodes = Object.values(root.states) as AnyStateNode[]
  for (const node of nodes) {
    if (Object.keys(node.states).length > 0) {
      throw new TypeError(`machineToMermaid supports flat machines only; state "${node.key}" has children`)
    }
    if (node.description) lines.push(`  ${node.key} : ${label(node.description)}`)
  }
  for (const node of nodes) {
    for (const event of node.transitions.keys()) {
      for (const key of targetKeys(node, event)) lines.push(`  ${node.key} --> ${key} : ${label(event)}`)
    }
  }
  for (const node of nodes) {
    if (node.type === 'final') lines.push(`  ${node.key} --> [*]`)
  }
  return `${lines.join('\n')}\n`
}

/**
 * The review lifecycle as Mermaid text; what `pushary-mastra machine --format
 * mermaid` prints and what docs/review-lifecycle.md must contain.
 *
 * @example
 * ```ts
 * process.stdout.write(reviewLifecycleMermaid())
 * ```
 */
export function reviewLifecycleMermaid(): string {
  return machineToMermaid(reviewLifecycleMachine)
}
