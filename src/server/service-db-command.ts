/**
 * The frame every command that reads the running service's database shares:
 * `--help`, a bad argument (exit 2), a missing database (exit 1, and never
 * an empty one created just to report that it holds nothing), then the
 * command itself on the open database, which is closed afterwards.
 */
import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import type { Client } from '@libsql/client'
import type { CommandIo } from '../command-io.js'
import { openServiceDatabase } from './database.js'

/**
 * Parses `argv`, opens the database named by the parsed `dbPath` and runs
 * `run` on it.
 *
 * @example
 * return runServiceDbCommand('devices', USAGE, argv, parseArgs, io, (db, args) => list(db, args, io))
 */
export async function runServiceDbCommand<Args extends { dbPath: string }>(
  name: string,
  usage: string,
  argv: readonly string[],
  parse: (argv: readonly string[]) => Args | 'help',
  io: CommandIo,
  run: (db: Client, args: Args) => Promise<number>,
): Promise<number> {
  let args: Args | 'help'
  try {
    args = parse(argv)
  } catch (error) {
    io.stderr.write(
      `pushary-mastra ${name}: ${error instanceof Error ? error.message : String(error)}\n\n${usage}`,
    )
    return 2
  }
  if (args === 'help') {
    io.stdout.write(usage)
    return 0
  }
  const dbPath = resolve(args.dbPath)
  if (!existsSync(dbPath)) {
    io.stderr.write(`pushary-mastra ${name}: no service database at ${dbPath} (pass --db)\n`)
    return 1
  }
  const db = await openServiceDatabase(dbPath)
  try {
    return await run(db, args)
  } finally {
    db.close()
  }
}
