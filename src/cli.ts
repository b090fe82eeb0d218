/**
 * The `pushary-mastra` command. Each subcommand lives beside the layer it
 * drives and is loaded lazily, so `pushary-mastra machine` never opens a
 * database and `pushary-mastra dev` never loads XState's graph tooling.
 */
import type { CommandIo } from './command-io.js'

const USAGE = `Usage: pushary-mastra <command> [options]

Commands:
  dev       Start the local Pushary-compatible decision service and reviewer page
            (--host, --port, --db, --public-url, --api-key-file, --show-secrets, --policy, --sandbox)
  devices   List or revoke the phones enrolled with the local service (list | revoke <deviceId>)
  deliveries  List the local service's callback deliveries and each attempt's answer
            (list [--decision <id>] [--db <path>])
  machine   Print the review lifecycle state machine (--format mermaid)
  reviews   List, show, check and recover reviews
            (list | show ID | check --app <module> | recover ID completed|stale|pending --reason ...)
  help      Show this message
`

async function main(argv: readonly string[], io: CommandIo): Promise<number> {
  const [command, ...rest] = argv
  switch (command) {
    case 'dev': {
      const { runDevCommand } = await import('./server/dev-command.js')
      return runDevCommand(rest, io)
    }
    case 'devices': {
      const { runDevicesCommand } = await import('./server/devices-command.js')
      return runDevicesCommand(rest, io)
    }
    case 'deliveries': {
      const { runDeliveriesCommand } = await import('./server/deliveries-command.js')
      return runDeliveriesCommand(rest, io)
    }
    case 'machine': {
      const { runMachineCommand } = await import('./machines/machine-command.js')
      return runMachineCommand(rest, io)
    }
    case 'reviews':
      return (await import('./workflows/reviews-command.js')).runReviewsCommand(rest, io)
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      io.stdout.write(USAGE)
      return 0
    default:
      io.stderr.write(`pushary-mastra: unknown command "${command}"\n\n${USAGE}`)
      return 2
  }
}

main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr }).then(
  (code) => {
    process.exitCode = code
  },
  (error: unknown) => {
    process.stderr.write(`pushary-mastra: ${error instanceof Error ? error.message : String(error)}\n`)
    process.exitCode = 1
  },
)
