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
