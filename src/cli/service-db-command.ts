/**
 * The frame every command that reads the running service's database shares:
 * `--help`, a bad argument (exit 2), a missing database (exit 1, and never
 * an empty one created just to report that it holds nothing), then the
 * command itself on the open database, which is closed afterwards.
 */
import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import type { Client } from '@libsql/client'
import { openServiceDatabase } from '../server/database.js'
import { type CommandIo, type ParsedCommand, runParsedCommand } from './command-io.js'

/**
 * Answers help and bad arguments, opens the database named by the parsed
 * `dbPath` and runs `run` on it.
 *
 * @example
 * return runServiceDbCommand('devices', USAGE, parseArgs(argv), io, (db, args) => list(db, args, io))
 */
export async function runServiceDbCommand<Args extends { dbPath: string }>(
  name: string,
  usage: string,
  parsed: ParsedCommand<Args>,
  io: CommandIo,
  run: (db: Client, args: Args) => Promise<number>,
): Promise<number> {
  return runParsedCommand(name, usage, parsed, io, async (args) => {
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
  })
}
