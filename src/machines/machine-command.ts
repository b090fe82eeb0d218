/**
 * `pushary-mastra machine`: prints the review lifecycle so operators and docs
 * see the exact machine the stores consult.
 */
import { type CommandIo, type ParsedCommand, runParsedCommand } from '../command-io.js'
import { reviewLifecycleMermaid } from './mermaid.js'

const FORMATS = ['mermaid'] as const

const USAGE = `Usage: pushary-mastra machine [--format mermaid]

Prints the review lifecycle state machine. Formats: ${FORMATS.join(', ')} (default mermaid).
`

type ParsedArgs = ParsedCommand<{ readonly format: (typeof FORMATS)[number] }>

function parseArgs(argv: readonly string[]): ParsedArgs {
  let format: string = 'mermaid'
  for (let index = 0; index < argv.length; index += 1) {
    const arg = argv[index] as string
    if (arg === '--help' || arg === '-h') return { status: 'help' }
    if (arg === '--format') {
      const value = argv[index + 1]
      if (value === undefined) return { status: 'invalid', message: '--format needs a value' }
      format = value
      index += 1
      continue
    }
    if (arg.startsWith('--format=')) {
      format = arg.slice('--format='.length)
      continue
    }
    return { status: 'invalid', message: `unknown argument "${arg}"` }
  }
  if (format !== 'mermaid') {
    return { status: 'invalid', message: `unknown --format "${format}" (supported: ${FORMATS.join(', ')})` }
  }
  return { status: 'run', format }
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
  return runParsedCommand('machine', USAGE, parseArgs(argv), io, async () => {
    io.stdout.write(reviewLifecycleMermaid())
    return 0
  })
}
