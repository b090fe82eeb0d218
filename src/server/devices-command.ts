/**
 * `pushary-mastra devices list|revoke`: the enrolled phones of the local
 * decision service, read and revoked straight from its database file (the
 * running service looks every device up per request, so a revoke takes
 * effect on the device's next request, without a restart).
 */
import type { CommandIo } from '../command-io.js'
import { parseExternalId } from '../pushary/identity.js'
import { DEFAULT_DB_PATH } from './database.js'
import { createEnrollmentRepo } from './enrollment-repo.js'
import { runServiceDbCommand } from './service-db-command.js'

const USAGE = `Usage:
  pushary-mastra devices list [--db <path>] [--external-id <customer>] [--json]
  pushary-mastra devices revoke <deviceId> [--db <path>]
  pushary-mastra devices revoke --external-id <customer> [--db <path>]

A device is a browser that opened an enrolment link. Revoking it signs it out
for good; the person needs a new enrolment link. Devices unused for 180 days
stop working by themselves.
Default database: ${DEFAULT_DB_PATH}
`

interface DevicesArgs {
  action: 'list' | 'revoke'
  dbPath: string
  externalId?: string
  deviceId?: string
  json: boolean
}

class UsageError extends Error {}

function parseArgs(argv: readonly string[]): DevicesArgs | 'help' {
  const [action, ...rest] = argv
  if (action === undefined || action === 'help' || action === '--help' || action === '-h') return 'help'
  if (action !== 'list' && action !== 'revoke') throw new UsageError(`unknown action "${action}"`)
  const args: DevicesArgs = { action, dbPath: DEFAULT_DB_PATH, json: false }
  for (let i = 0; i < rest.length; i += 1) {
    const arg = rest[i] ?? ''
    const eq = arg.indexOf('=')
    const flag = arg.startsWith('--') && eq !== -1 ? arg.slice(0, eq) : arg
    const inline = arg.startsWith('--') && eq !== -1 ? arg.slice(eq + 1) : undefined
    const value = (): string => {
      const next = inline ?? rest[++i]
      if (next === undefined || next === '') throw new UsageError(`${flag} needs a value`)
      return next
    }
    if (flag === '--help' || flag === '-h') return 'help'
    else if (flag === '--json') args.json = true
    else if (flag === '--db') args.dbPath = value()
    else if (flag === '--external-id') args.externalId = parseExternalId(value(), '--external-id', 'devices')
    else if (!flag.startsWith('-') && action === 'revoke' && args.deviceId === undefined) args.deviceId = flag
    else throw new UsageError(`unexpected argument "${arg}"`)
  }
  if (action === 'revoke' && (args.deviceId === undefined) === (args.externalId === undefined)) {
    throw new UsageError('revoke takes either a deviceId or --external-id <customer>')
  }
  return args
}

/**
 * Runs `pushary-mastra devices …`; resolves 0 on success, 1 when nothing
 * matched or the database is missing, 2 for bad arguments.
 *
 * @example
 * process.exitCode = await runDevicesCommand(['list', '--db', '.pushary/dev.db'], { stdout: process.stdout, stderr: process.stderr })
 */
export async function runDevicesCommand(argv: readonly string[], io: CommandIo): Promise<number> {
  return runServiceDbCommand('devices', USAGE, argv, parseArgs, io, async (db, args) => {
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
          // JSON quoting keeps odd customer IDs (spaces, control characters) visible and on one line.
          io.stdout.write(
            `${device.deviceId}  ${JSON.stringify(device.externalId)}  ${device.createdAt}  ${device.lastSeenAt}\n`,
          )
        }
      }
      return 0
    }
    if (args.externalId !== undefined) {
      const count = await repo.revokeDevicesOf(args.externalId)
      io.stdout.write(`Revoked ${count} device(s) of ${JSON.stringify(args.externalId)}.\n`)
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
