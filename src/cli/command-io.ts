import { Writable } from 'node:stream'
import { CommandArgsError } from './args.js'

/**
 * The streams a `pushary-mastra` subcommand writes to; tests pass their own
 * streams.
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
 * Runs an argument parser that throws `CommandArgsError` and reads a refusal
 * as the `invalid` result, so every command reports bad arguments the same way.
 *
 * @example
 * const parsed = parsedCommand(() => ({ status: 'run', format: 'mermaid' }))
 */
export function parsedCommand<Run>(parse: () => ParsedCommand<Run>): ParsedCommand<Run> {
  try {
    return parse()
  } catch (error) {
    if (error instanceof CommandArgsError) return { status: 'invalid', message: error.message }
    throw error
  }
}

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

// C0 and C1 controls, DEL, and the characters that reorder or hide text
// (bidi controls, zero-width characters, soft hyphen).
const UNSAFE_FOR_TERMINAL =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is this expression's purpose
  /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g

/**
 * One line of operator output, safe to print: every control, bidi or
 * invisible character becomes a visible `\uXXXX`. Stored text (a tool call
 * ID chosen by a model, a history reason, a receipt body) otherwise reaches
 * the terminal raw, where an escape sequence can rewrite the screen, set
 * the clipboard or forge a row. The escape is also valid inside a JSON
 * string, so JSON output goes through it too.
 *
 * @example
 * io.stdout.write(`${terminalSafe(row)}\n`)
 */
export function terminalSafe(text: string): string {
  return text.replace(UNSAFE_FOR_TERMINAL, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

/**
 * Text of several lines, safe to print: each line goes through
 * {@link terminalSafe}, only the line breaks written by the command stay.
 *
 * @example
 * io.stdout.write(terminalLines(`${header}\n${row}\n`))
 */
export function terminalLines(text: string): string {
  return text.split('\n').map(terminalSafe).join('\n')
}

function terminalStream(target: Writable): Writable {
  return new Writable({
    decodeStrings: false,
    write(chunk: unknown, _encoding, done) {
      target.write(terminalLines(String(chunk)))
      done()
    },
  })
}

/**
 * The command's streams with every line put through {@link terminalSafe}, for
 * commands that print what they read from a database or a request: a
 * tampered row, a customer ID or an error text can then never move the
 * cursor, rewrite the screen or forge a line, wherever it is printed.
 *
 * @example
 * const out = terminalIo(io)
 * out.stdout.write(`${device.externalId}\n`)
 */
export function terminalIo(io: CommandIo): CommandIo {
  return { stdout: terminalStream(io.stdout), stderr: terminalStream(io.stderr) }
}
