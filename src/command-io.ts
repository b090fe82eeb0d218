import type { Writable } from 'node:stream'

/**
 * The streams a `pushary-mastra` subcommand writes to. A leaf module so the
 * command modules beside each layer and `cli.ts` share it without importing
 * upwards; tests pass their own streams.
 *
 * @example
 * const io: CommandIo = { stdout: process.stdout, stderr: process.stderr }
 */
export interface CommandIo {
  readonly stdout: Writable
  readonly stderr: Writable
}

/** What a subcommand's argument parser returns: usage, a refusal, or what to run. */
export type ParsedCommand<Run> =
  | { readonly status: 'help' }
  | { readonly status: 'invalid'; readonly message: string }
  | (Run & { readonly status: 'run' })

/**
 * Answers `--help` (usage on stdout, exit 0) and bad arguments (the message
 * and usage on stderr, exit 2) the same way for every subcommand, and runs
 * the rest.
 *
 * @example
 * return runParsedCommand('machine', USAGE, parseArgs(argv), io, async () => 0)
 */
export async function runParsedCommand<Run>(
  name: string,
  usage: string,
  parsed: ParsedCommand<Run>,
  io: CommandIo,
  run: (parsed: Run & { readonly status: 'run' }) => Promise<number>,
): Promise<number> {
  if (parsed.status === 'help') {
    io.stdout.write(usage)
    return 0
  }
  if (parsed.status === 'invalid') {
    io.stderr.write(`pushary-mastra ${name}: ${parsed.message}\n\n${usage}`)
    return 2
  }
  return run(parsed as Run & { readonly status: 'run' })
}
