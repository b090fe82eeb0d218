/**
 * The `pushary-mastra` command (built to `dist/cli.js`). Every subcommand
 * lives in this folder and is loaded lazily, so `pushary-mastra machine`
 * never opens a database and `pushary-mastra dev` never loads XState's graph
 * tooling.
 *
 * The same rules hold for every command: `--help` / `-h` (or `help
 * <command>`) prints the usage on stdout, exit 0; bad arguments print the
 * message and the usage on stderr, exit 2; a failure at run time exits 1.
 */
import type { CommandIo } from './command-io.js'

const USAGE = `Usage: pushary-mastra <command> [options]

Commands:
  connect   Mint an enrolment link for a customer, show it with a QR code, wait for the phone
            (connect <customerId> [--timeout <s>] [--no-wait] [--json]; PUSHARY_API_KEY, PUSHARY_BASE_URL)
  dev       Start the local Pushary-compatible decision service and reviewer page
            (--host, --port, --db, --public-url, --api-key-file, --show-secrets, --policy, --sandbox)
  devices   List or revoke the phones enrolled with the local service (list | revoke <deviceId>)
  deliveries  List the local service's callback deliveries and each attempt's answer
            (list [--decision <id>] [--db <path>])
  machine   Print the review lifecycle state machine (--format mermaid | --json)
  reviews   List, show, check and recover reviews
            (list | show ID | check --app <module> | recover ID completed|stale|pending --reason ...)
  help      Show this message (help <command>: that command's usage)

Every command takes --help (-h). Listing and showing commands take --json.
Exit codes: 0 done, 1 refused or failed, 2 bad arguments.
`

type Command = (argv: readonly string[], io: CommandIo) => Promise<number>

/** Each command's module, imported only when that command runs. */
const COMMANDS: Record<string, () => Promise<Command>> = {
  connect: async () => (await import('./connect-command.js')).runConnectCommand,
  dev: async () => (await import('./dev-command.js')).runDevCommand,
  devices: async () => (await import('./devices-command.js')).runDevicesCommand,
  deliveries: async () => (await import('./deliveries-command.js')).runDeliveriesCommand,
  machine: async () => (await import('./machine-command.js')).runMachineCommand,
  reviews: async () => (await import('./reviews-command.js')).runReviewsCommand,
}

async function main(argv: readonly string[], io: CommandIo): Promise<number> {
  const [command, ...rest] = argv
  if (command === 'help' || command === '--help' || command === '-h') {
    const named = rest[0]
    if (named !== undefined && Object.hasOwn(COMMANDS, named)) {
      return (await (COMMANDS[named] as () => Promise<Command>)())(['--help'], io)
    }
    if (named !== undefined) {
      io.stderr.write(`pushary-mastra: unknown command "${named}"\n\n${USAGE}`)
      return 2
    }
    io.stdout.write(USAGE)
    return 0
  }
  if (command === undefined) {
    io.stderr.write(`pushary-mastra: name a command\n\n${USAGE}`)
    return 2
  }
  if (!Object.hasOwn(COMMANDS, command)) {
    io.stderr.write(`pushary-mastra: unknown command "${command}"\n\n${USAGE}`)
    return 2
  }
  const run = await (COMMANDS[command] as () => Promise<Command>)()
  return run(rest, io)
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
