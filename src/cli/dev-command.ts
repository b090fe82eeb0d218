/**
 * `pushary-mastra dev`: starts the local decision service, prints what a
 * developer needs (URL, API key, webhook secret, how to enrol a phone) and
 * stops cleanly on Ctrl-C.
 */
import { readFileSync } from 'node:fs'
import { networkInterfaces } from 'node:os'
import { resolve } from 'node:path'
import { DEFAULT_DB_PATH } from '../server/database.js'
import { createPusharyDevServer, type PusharyDevServerOptions } from '../server/dev-server.js'
import { isPusharyDevServerError, PusharyDevServerError } from '../server/dev-server-error.js'
import { CommandArgsError, parseCommandArgv } from './args.js'
import { type CommandIo, terminalIo, terminalSafe } from './command-io.js'
import type { StoreLocation } from './reviews-args.js'

const USAGE = `Usage: pushary-mastra dev [options]

Options:
  --host <addr>        Interface to bind (default 127.0.0.1; 0.0.0.0 for a phone on the LAN)
  --port <n>           Port (default 4100; 0 picks a free one)
  --db <path>          SQLite file (default ${DEFAULT_DB_PATH})
  --public-url <url>   Base URL printed in links, e.g. http://192.168.1.20:4100
  --api-key-file <f>   Read the API key to require from a file (default: generated once, stored in the database)
  --api-key <key>      Same, on the command line (visible to other users in process listings)
  --show-secrets       Print the API key and webhook secret (otherwise printed only when first created)
  --policy <file>      JSON policy for POST /authorize ({ "rules": [...] })
  --sandbox            Answer decisions that carry sandboxOutcome automatically
  --allow-loopback-callbacks
                       Allow callbackUrl on 127.0.0.1 / ::1 / localhost (local development)
  --allow-callback-host <host|ip|cidr>
                       Allow one non-public callback host or range (repeatable)
  --board-db <file>    Serve the review board at /board over this SQLite review store (your app's)
  --board-pg <url>     Same, over a PostgreSQL review store (--board-pg-schema <name>, default public)
                       The board's operator key is this service's API key.
  --help, -h           Show this message

Enrolled phones: pushary-mastra devices list|revoke (see pushary-mastra devices --help).
Exit codes: 0 stopped by Ctrl-C, 1 failed, 2 bad arguments.
`

/** Default port of the dev command (the programmatic server defaults to a random one). */
export const DEFAULT_DEV_PORT = 4100

const FLAGS = {
  host: { type: 'string' },
  port: { type: 'string' },
  db: { type: 'string' },
  'public-url': { type: 'string' },
  'api-key': { type: 'string' },
  'api-key-file': { type: 'string' },
  policy: { type: 'string' },
  'allow-callback-host': { type: 'string', multiple: true },
  sandbox: { type: 'boolean' },
  'show-secrets': { type: 'boolean' },
  'allow-loopback-callbacks': { type: 'boolean' },
  'board-db': { type: 'string' },
  'board-pg': { type: 'string' },
  'board-pg-schema': { type: 'string' },
} as const

/** Options of the `dev` command: the server's, plus what only the command does. */
export interface DevCommandOptions extends PusharyDevServerOptions {
  /** File holding the API key (read at start, so the key never appears in argv). */
  apiKeyFile?: string
  /** Print the API key and webhook secret even when they already existed. */
  showSecrets?: boolean
  /** The review store the board at `/board` reads and recovers (none: no board). */
  boardStore?: StoreLocation
}

type ParsedArgs = { help: true } | { help: false; options: DevCommandOptions }

/**
 * Parses `dev` arguments (`--flag value` or `--flag=value`); throws
 * `PusharyDevServerError('invalid_option')` naming the flag.
 *
 * @example
 * parseDevArgs(['--port', '0', '--sandbox']) // { help: false, options: { port: 0, sandbox: true } }
 */
export function parseDevArgs(argv: readonly string[]): ParsedArgs {
  const invalid = (field: string, message: string) =>
    new PusharyDevServerError({ code: 'invalid_option', field, message })
  let parsed: ReturnType<typeof parseCommandArgv<typeof FLAGS>>
  try {
    parsed = parseCommandArgv(argv, FLAGS)
  } catch (error) {
    if (error instanceof CommandArgsError) throw invalid(error.field, error.message)
    throw error
  }
  if (parsed.help) return { help: true }
  const { values, positionals } = parsed
  if (positionals.length > 0) {
    throw invalid(positionals[0] as string, `unexpected argument "${positionals[0]}"`)
  }
  const options: DevCommandOptions = {}
  if (values.host !== undefined) options.host = values.host
  if (values.port !== undefined) {
    if (!/^\d{1,5}$/.test(values.port) || Number(values.port) > 65_535) {
      throw invalid('--port', `--port must be a port number from 0 to 65535, got "${values.port}"`)
    }
    options.port = Number(values.port)
  }
  if (values.db !== undefined) options.dbPath = values.db
  if (values['public-url'] !== undefined) options.publicUrl = values['public-url']
  if (values['api-key'] !== undefined) options.apiKey = values['api-key']
  if (values['api-key-file'] !== undefined) options.apiKeyFile = values['api-key-file']
  if (values.policy !== undefined) options.policyPath = values.policy
  if (values.sandbox) options.sandbox = true
  if (values['show-secrets']) options.showSecrets = true
  if (values['allow-loopback-callbacks']) {
    options.callbackAddresses = { ...options.callbackAddresses, allowLoopback: true }
  }
  if (values['allow-callback-host'] !== undefined) {
    options.callbackAddresses = { ...options.callbackAddresses, allow: values['allow-callback-host'] }
  }
  if (values['board-db'] !== undefined && values['board-pg'] !== undefined) {
    throw invalid('--board-pg', 'pass either --board-db or --board-pg, not both')
  }
  if (values['board-pg-schema'] !== undefined && values['board-pg'] === undefined) {
    throw invalid('--board-pg-schema', '--board-pg-schema applies to --board-pg only')
  }
  if (values['board-db'] !== undefined) options.boardStore = { kind: 'sqlite', file: values['board-db'] }
  if (values['board-pg'] !== undefined) {
    const schema = values['board-pg-schema']
    options.boardStore = { kind: 'pg', url: values['board-pg'], ...(schema === undefined ? {} : { schema }) }
  }
  if (options.apiKey !== undefined && options.apiKeyFile !== undefined) {
    throw invalid('--api-key-file', 'pass either --api-key or --api-key-file, not both')
  }
  return { help: false, options }
}

function lanAddresses(): string[] {
  const found: string[] = []
  for (const entries of Object.values(networkInterfaces())) {
    for (const entry of entries ?? []) {
      if (entry.family === 'IPv4' && !entry.internal) found.push(entry.address)
    }
  }
  return found
}

async function printQr(io: CommandIo, text: string): Promise<void> {
  try {
    const qrcode = (await import('qrcode-terminal')).default
    qrcode.generate(text, { small: true }, (code) => io.stdout.write(`${code}\n`))
  } catch {
    // The link itself is printed too; a QR code is a convenience.
  }
}

/**
 * Runs `pushary-mastra dev` until SIGINT or SIGTERM, then closes the server
 * (connections, timers, database) and resolves 0. Bad options resolve 2.
 *
 * @example
 * process.exitCode = await runDevCommand(['--port', '0'], { stdout: process.stdout, stderr: process.stderr })
 */
export async function runDevCommand(argv: readonly string[], terminal: CommandIo): Promise<number> {
  // Customer IDs, links and errors reach this terminal from requests.
  const io = terminalIo(terminal)
  let parsed: ParsedArgs
  try {
    parsed = parseDevArgs(argv)
  } catch (error) {
    io.stderr.write(
      `pushary-mastra dev: ${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`,
    )
    return 2
  }
  if (parsed.help) {
    io.stdout.write(USAGE)
    return 0
  }
  const { apiKeyFile, showSecrets = false, boardStore, ...options } = parsed.options
  if (apiKeyFile !== undefined) {
    try {
      options.apiKey = readFileSync(apiKeyFile, 'utf8').trim()
    } catch (error) {
      io.stderr.write(
        `pushary-mastra dev: cannot read --api-key-file ${apiKeyFile}: ${error instanceof Error ? error.message : String(error)}\n`,
      )
      return 2
    }
  } else if (options.apiKey !== undefined) {
    io.stderr.write(
      'pushary-mastra dev: warning: --api-key is visible to every local user in process listings; prefer --api-key-file.\n',
    )
  }
  const dbPath = resolve(options.dbPath ?? DEFAULT_DB_PATH)
  let board: ReviewBoardMount | null = null
  if (boardStore !== undefined) {
    try {
      board = await openBoardStore(boardStore, io)
    } catch (error) {
      io.stderr.write(
        `pushary-mastra dev: review board: ${error instanceof Error ? error.message : String(error)}\n`,
      )
      return 1
    }
  }
  let server: Awaited<ReturnType<typeof createPusharyDevServer>>
  try {
    server = await createPusharyDevServer({
      ...options,
      ...(board === null ? {} : { mounts: [{ path: BOARD_PATH, fetch: board.fetch }] }),
      port: options.port ?? DEFAULT_DEV_PORT,
      dbPath,
      onEnrollmentLink: (link) => {
        io.stdout.write(
          `\nEnrolment link for ${terminalSafe(JSON.stringify(link.externalId))} (single use, ${Math.round(link.expiresInSeconds / 60)} min):\n  ${terminalSafe(link.universalLink)}\n`,
        )
        void printQr(io, link.universalLink)
      },
      onError: (error) =>
        io.stderr.write(`pushary-mastra dev: ${error instanceof Error ? error.stack : String(error)}\n`),
    })
  } catch (error) {
    await board?.close()
    io.stderr.write(`pushary-mastra dev: ${error instanceof Error ? error.message : String(error)}\n`)
    return isPusharyDevServerError(error) && error.code === 'invalid_option' ? 2 : 1
  }

  // Secrets go to the terminal once, when they are created (a terminal's
  // scrollback and CI logs outlive the process), or when asked for.
  if (board !== null) {
    try {
      board.start(server.apiKey)
    } catch (error) {
      await server.close()
      await board.close()
      io.stderr.write(
        `pushary-mastra dev: review board: ${error instanceof Error ? error.message : String(error)}\n`,
      )
      return 2
    }
  }
  const showKey = showSecrets || server.created.apiKey
  const showSecret = showSecrets || server.created.webhookSecret
  const hidden = 'hidden (stored in the database; --show-secrets prints it)'
  const lines = [
    `Pushary dev server listening on ${server.url}`,
    `  API base URL    ${server.baseUrl}`,
    `  API key         ${showKey ? server.apiKey : options.apiKey !== undefined ? 'as given' : hidden}`,
    `  Webhook secret  ${showSecret ? server.webhookSecret : hidden}`,
    `  Reviewer page   ${server.publicUrl}/review`,
    ...(board === null
      ? []
      : [`  Review board    ${server.publicUrl}${BOARD_PATH} (sign in with the API key; ${board.where})`]),
    `  Database        ${dbPath}${options.sandbox ? '\n  Sandbox         on (sandboxOutcome answers decisions)' : ''}`,
    '',
    `  export PUSHARY_BASE_URL=${server.baseUrl}`,
    ...(showKey ? [`  export PUSHARY_API_KEY=${server.apiKey}`] : []),
    ...(showSecret ? [`  export PUSHARY_WEBHOOK_SECRET=${server.webhookSecret}`] : []),
    ...(server.created.apiKey || server.created.webhookSecret
      ? ['', 'Shown once: later starts hide the API key and webhook secret unless you pass --show-secrets.']
      : []),
    '',
    'Enrol a phone: npx pushary-mastra connect <customer> (with the two exports above), or POST /enroll; the single-use link is printed with a QR code.',
    'Enrolled phones: pushary-mastra devices list | revoke <deviceId>',
  ]
  const host = options.host ?? '127.0.0.1'
  if (options.publicUrl === undefined && (host === '0.0.0.0' || host === '::')) {
    const port = new URL(server.url).port
    const suggestions = lanAddresses().map((address) => `http://${address}:${port}`)
    if (suggestions.length > 0) {
      lines.push(`Links use ${server.url}; for a phone on the LAN pass --public-url ${suggestions[0]}`)
    }
  } else if (options.publicUrl === undefined) {
    lines.push(
      'Bound to loopback: add --host 0.0.0.0 --public-url http://<this machine>:<port> to answer from a phone.',
    )
  }
  lines.push('Press Ctrl-C to stop.', '')

  // Handlers go in before "Press Ctrl-C" is printed: a signal that arrives
  // before a listener exists kills the process without closing the database.
  const stopped = new Promise<number>((resolveExit) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off('SIGINT', stop)
      process.off('SIGTERM', stop)
      io.stdout.write(`\nReceived ${signal}; stopping the Pushary dev server…\n`)
      Promise.all([server.close(), board?.close()]).then(
        () => {
          io.stdout.write('Stopped.\n')
          resolveExit(0)
        },
        (error: unknown) => {
          io.stderr.write(`pushary-mastra dev: error while stopping: ${String(error)}\n`)
          resolveExit(1)
        },
      )
    }
    process.on('SIGINT', stop)
    process.on('SIGTERM', stop)
  })
  io.stdout.write(lines.join('\n'))
  return stopped
}

/** Where the `dev` command serves the review board. */
export const BOARD_PATH = '/board'

interface ReviewBoardMount {
  /** Where the store is, for the printed line (never a connection string: it may hold a password). */
  readonly where: string
  readonly fetch: (request: Request) => Promise<Response>
  /** Creates the board once the service's API key (its operator key) is known. */
  start(operatorKey: string): void
  close(): Promise<void>
}

/**
 * Opens the review store the board reads (refused like `reviews`: a missing
 * file, a file with no review tables), and returns the mount the service
 * serves at /board; the board itself is created by `start` with the key.
 * Its log lines go to this terminal.
 */
async function openBoardStore(location: StoreLocation, io: CommandIo): Promise<ReviewBoardMount> {
  const [{ openStore }, { createPusharyReviewBoard }] = await Promise.all([
    import('./reviews-actions.js'),
    import('../board/review-board.js'),
  ])
  const store = await openStore(location)
  const line =
    (level: string) =>
    (message: string, ...args: unknown[]) =>
      io.stdout.write(
        `${new Date().toISOString()} ${level} ${terminalSafe(`${message}${args.length > 0 ? ` ${JSON.stringify(args[0])}` : ''}`)}\n`,
      )
  const logger = { info: line('INFO'), warn: line('WARN'), error: line('ERROR') }
  let board: ReturnType<typeof createPusharyReviewBoard> | null = null
  return {
    where:
      location.kind === 'pg'
        ? `PostgreSQL review store${location.schema ? ` (schema ${location.schema})` : ''}`
        : `review store ${resolve(location.file.replace(/^file:/, ''))}`,
    fetch: (request) =>
      board === null ? Promise.resolve(new Response('starting', { status: 503 })) : board.fetch(request),
    start(operatorKey) {
      board = createPusharyReviewBoard({ store, operatorKey, logger, basePath: BOARD_PATH })
    },
    close: () => store.close(),
  }
}
