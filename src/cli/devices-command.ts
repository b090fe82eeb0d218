/**
 * `pushary-mastra devices list|revoke`: the enrolled phones of the local
 * decision service, read and revoked straight from its database file (the
 * running service looks every device up per request, so a revoke takes
 * effect on the device's next request, without a restart).
 */
import { parseExternalId } from '../pushary/identity.js'
import { DEFAULT_DB_PATH } from '../server/database.js'
import { createEnrollmentRepo } from '../server/enrollment-repo.js'
import { CommandArgsError, parseCommandArgv } from './args.js'
import { type CommandIo, type ParsedCommand, parsedCommand, terminalIo, terminalSafe } from './command-io.js'
import { runServiceDbCommand } from './service-db-command.js'

const USAGE = `Usage:
  pushary-mastra devices list [--db <path>] [--external-id <customer>] [--json]
  pushary-mastra devices revoke <deviceId> [--db <path>]
  pushary-mastra devices revoke --external-id <customer> [--db <path>]

A device is a browser that opened an enrolment link. Revoking it signs it out
for good; the person needs a new enrolment link. Devices unused for 180 days
stop working by themselves.
Default database: ${DEFAULT_DB_PATH}

  --json          Print JSON instead of text (list)
  --help, -h      Show this message

Exit codes: 0 done, 1 nothing matched or no database, 2 bad arguments.
`

interface DevicesArgs {
  action: 'list' | 'revoke'
  dbPath: string
  externalId?: string
  deviceId?: string
  json: boolean
}

const FLAGS = {
  db: { type: 'string' },
  'external-id': { type: 'string' },
  json: { type: 'boolean' },
} as const

function parseArgs(argv: readonly string[]): ParsedCommand<DevicesArgs> {
  return parsedCommand<DevicesArgs>(() => {
    const parsed = parseCommandArgv(argv, FLAGS)
    if (parsed.help) return { status: 'help' }
    const { values, positionals } = parsed
    const [action, ...rest] = positionals
    if (action === 'help') return { status: 'help' }
    if (action === undefined) return { status: 'invalid', message: 'name an action: list or revoke' }
    if (action !== 'list' && action !== 'revoke') {
      return { status: 'invalid', message: `unknown action "${action}" (list, revoke)` }
    }
    const args: DevicesArgs = { action, dbPath: values.db ?? DEFAULT_DB_PATH, json: values.json === true }
    const externalId = values['external-id']
    if (externalId !== undefined) {
      try {
        args.externalId = parseExternalId(externalId, '--external-id', 'devices')
      } catch (error) {
        throw new CommandArgsError(error instanceof Error ? error.message : String(error), '--external-id')
      }
    }
    if (action === 'revoke' && rest.length > 0) args.deviceId = rest.shift()
    if (rest.length > 0) return { status: 'invalid', message: `unexpected argument "${rest[0]}"` }
    if (action === 'revoke' && (args.deviceId === undefined) === (args.externalId === undefined)) {
      return { status: 'invalid', message: 'revoke takes either a deviceId or --external-id <customer>' }
    }
    return { status: 'run', ...args }
  })
}

/**
 * Runs `pushary-mastra devices …`; resolves 0 on success, 1 when nothing
 * matched or the database is missing, 2 for bad arguments.
 *
 * @example
 * process.exitCode = await runDevicesCommand(['list', '--db', '.pushary/dev.db'], { stdout: process.stdout, stderr: process.stderr })
 */
export async function runDevicesCommand(argv: readonly string[], terminal: CommandIo): Promise<number> {
  // Every row is read from a database file that may have been written by anyone.
  const io = terminalIo(terminal)
  return runServiceDbCommand('devices', USAGE, parseArgs(argv), io, async (db, args) => {
    const repo = createEnrollmentRepo(db)
    if (args.action === 'list') {
      const devices = await repo.listDevices(
        args.externalId === undefined ? {} : { externalId: args.externalId },
      )
      if (args.json) {
        io.stdout.write(`${JSON.stringify(devices)}\n`)
      } else if (devices.length === 0) {
        io.stdout.write('No enrolled devices.\n')
      } else {
        io.stdout.write('DEVICE ID         CUSTOMER  ENROLLED  LAST SEEN\n')
        for (const device of devices) {
          // JSON quoting keeps odd customer IDs (spaces) visible; the terminal
          // rule escapes each value on its own, so a newline or escape
          // sequence stored in any of them is shown, never obeyed.
          const row = [
            device.deviceId,
            JSON.stringify(device.externalId),
            device.createdAt,
            device.lastSeenAt,
          ]
          io.stdout.write(`${row.map(terminalSafe).join('  ')}\n`)
        }
      }
      return 0
    }
    if (args.externalId !== undefined) {
      const count = await repo.revokeDevicesOf(args.externalId)
      io.stdout.write(`Revoked ${count} device(s) of ${terminalSafe(JSON.stringify(args.externalId))}.\n`)
      return count > 0 ? 0 : 1
    }
    const outcome = await repo.revokeDevice(args.deviceId ?? '')
    switch (outcome) {
      case 'revoked':
        io.stdout.write(`Revoked device ${args.deviceId}.\n`)
        return 0
      case 'ambiguous':
        io.stderr.write(
          `pushary-mastra devices: ${args.deviceId} matches several devices; give more of the id\n`,
        )
        return 1
      case 'not_found':
        io.stderr.write(`pushary-mastra devices: no device ${args.deviceId}\n`)
        return 1
      default: {
        const unknown: never = outcome
        throw new Error(`unknown revoke outcome ${String(unknown)}`)
      }
    }
  })
}
