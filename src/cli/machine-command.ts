/**
 * `pushary-mastra machine`: prints the review lifecycle so operators and docs
 * see the exact machine the stores consult.
 */
import type { AnyStateNode } from 'xstate'
import { reviewLifecycleMermaid } from '../machines/mermaid.js'
import { reviewLifecycleMachine } from '../machines/review-lifecycle.js'
import { parseCommandArgv } from './args.js'
import { type CommandIo, type ParsedCommand, parsedCommand, runParsedCommand } from './command-io.js'

const FORMATS = ['mermaid'] as const

const USAGE = `Usage: pushary-mastra machine [--format mermaid | --json]

Prints the review lifecycle state machine. Formats: ${FORMATS.join(', ')} (default mermaid).

  --format <name>  Diagram format
  --json           Print the states and transitions as JSON instead of a diagram
  --help, -h       Show this message

Exit codes: 0 done, 2 bad arguments.
`

const FLAGS = { format: { type: 'string' }, json: { type: 'boolean' } } as const

type ParsedArgs = ParsedCommand<{ readonly output: (typeof FORMATS)[number] | 'json' }>

function parseArgs(argv: readonly string[]): ParsedArgs {
  return parsedCommand<{ readonly output: (typeof FORMATS)[number] | 'json' }>(() => {
    const parsed = parseCommandArgv(argv, FLAGS)
    if (parsed.help) return { status: 'help' }
    const { values, positionals } = parsed
    if (positionals.length > 0) return { status: 'invalid', message: `unknown argument "${positionals[0]}"` }
    if (values.json && values.format !== undefined) {
      return { status: 'invalid', message: 'give either --format or --json, not both' }
    }
    if (values.json) return { status: 'run', output: 'json' }
    const format = values.format ?? 'mermaid'
    if (format !== 'mermaid') {
      return { status: 'invalid', message: `unknown --format "${format}" (supported: ${FORMATS.join(', ')})` }
    }
    return { status: 'run', output: format }
  })
}

/** The machine as data, read from the machine object like the diagram. */
function lifecycleJson(): string {
  const root = reviewLifecycleMachine.root as AnyStateNode
  const nodes = Object.values(root.states) as AnyStateNode[]
  const states = nodes.map((node) => ({
    name: node.key,
    description: node.description ?? null,
    final: node.type === 'final',
  }))
  const transitions = nodes.flatMap((node) =>
    [...node.transitions.entries()].flatMap(([event, definitions]) =>
      definitions.flatMap((definition) =>
        (definition.target ?? []).map((target) => ({ from: node.key, event, to: target.key })),
      ),
    ),
  )
  const initial = root.initial.target.map((target) => target.key)[0] ?? null
  return `${JSON.stringify({ initial, states, transitions })}\n`
}

/**
 * Runs `pushary-mastra machine`. Exit code 0 on success, 2 on a bad argument
 * or an unknown format.
 *
 * @example
 * ```ts
 * const code = await runMachineCommand(['--format', 'mermaid'], { stdout: process.stdout, stderr: process.stderr })
 * ```
 */
export function runMachineCommand(argv: readonly string[], io: CommandIo): Promise<number> {
  return runParsedCommand('machine', USAGE, parseArgs(argv), io, async (parsed) => {
    io.stdout.write(parsed.output === 'json' ? lifecycleJson() : reviewLifecycleMermaid())
    return 0
  })
}
