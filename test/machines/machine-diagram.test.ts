import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { setup } from 'xstate'
import { machineToMermaid, reviewLifecycleMermaid } from '../../src/machines/mermaid.js'
import { reviewLifecycleMachine } from '../../src/machines/review-lifecycle.js'

const root = fileURLToPath(new URL('../../', import.meta.url))

function committedDiagram(file = 'docs/review-lifecycle.md'): string {
  const doc = readFileSync(`${root}${file}`, 'utf8')
  const match = /```mermaid\n([\s\S]*?)```/.exec(doc)
  if (!match?.[1]) throw new Error(`${file} has no \`\`\`mermaid block`)
  return match[1]
}

describe('review lifecycle diagram', () => {
  it('matches the diagram committed in docs/review-lifecycle.md', () => {
    expect(committedDiagram()).toBe(reviewLifecycleMermaid())
  })

  it('matches the diagram shown in docs/concepts.md', () => {
    expect(committedDiagram('docs/concepts.md')).toBe(reviewLifecycleMermaid())
  })

  it('draws every state and every transition of the machine', () => {
    const text = reviewLifecycleMermaid()
    for (const [key, node] of Object.entries(reviewLifecycleMachine.root.states)) {
      expect(text).toContain(`  ${key} : `)
      for (const [event, definitions] of node.transitions) {
        for (const definition of definitions) {
          for (const target of definition.target ?? [])
            expect(text).toContain(`  ${key} --> ${target.key} : ${event}\n`)
        }
      }
    }
    expect(text).toContain('  [*] --> pending\n')
    expect(text).toContain('  completed --> [*]\n')
    expect(text).not.toContain('  stale --> [*]\n')
  })

  it('changes the generated diagram when a transition is added, so a stale committed copy fails', () => {
    const config = reviewLifecycleMachine.config
    const extended = setup({}).createMachine({
      ...config,
      states: {
        ...config.states,
        stale: { type: 'final', description: config.states?.stale?.description, on: {} },
        uncertain: {
          ...config.states?.uncertain,
          on: { ...(config.states?.uncertain?.on as object), RETRY: { target: 'pending' } },
        },
      },
    } as never)
    expect(machineToMermaid(extended)).not.toBe(reviewLifecycleMermaid())
    expect(machineToMermaid(extended)).toContain('uncertain --> pending : RETRY')
  })
})
