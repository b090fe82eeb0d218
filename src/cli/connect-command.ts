/**
 * `pushary-mastra connect <customerId>`: mints a single-use enrolment link
 * for one customer on the configured decision service (the hosted API or the
 * local one, from `PUSHARY_API_KEY` / `PUSHARY_BASE_URL`, as every other part
 * of the package), shows it with a QR code, then waits until a phone is
 * linked and prints the customer's reachability.
 */
import { createPusharyClient, type PusharyClient } from '../pushary/client.js'
import { isPusharyApiError, isPusharyValidationError } from '../pushary/errors.js'
import { parseExternalId } from '../pushary/identity.js'
import type { DecisionReach, EnrollResult } from '../pushary/wire-responses.js'
import { CommandArgsError, parseCommandArgv } from './args.js'
import {
  type CommandIo,
  type ParsedCommand,
  parsedCommand,
  runParsedCommand,
  terminalSafe,
} from './command-io.js'

const DEFAULT_TIMEOUT_SECONDS = 600
const MAX_TIMEOUT_SECONDS = 86_400
const POLL_INTERVAL_MS = 1_000
// One poll must not outlive the wait by a whole default request timeout (65 s).
const POLL_REQUEST_TIMEOUT_MS = 15_000

const USAGE = `Usage: pushary-mastra connect <customerId> [--timeout <seconds>] [--no-wait] [--json]

Mints a single-use enrolment link for one customer (your application's
customer ID, the externalId every question names), prints it with a QR code,
waits until a phone is linked (open the link on the phone and confirm there),
then prints the customer's reachability: deliverability and device count.

The service is the one the package uses everywhere: PUSHARY_API_KEY (required)
and PUSHARY_BASE_URL (default: the hosted API). For the local service, use the
two export lines that pushary-mastra dev prints.

  --timeout <seconds>  How long to wait for the phone (default ${DEFAULT_TIMEOUT_SECONDS}; never past the link's expiry)
  --no-wait            Print the link and exit without waiting
  --json               Print JSON lines instead of text: the link, then the reachability
  --help, -h           Show this message

Exit codes: 0 linked (or the link printed, with --no-wait), 1 no phone linked
in time or the service refused, 2 bad arguments or a missing PUSHARY_API_KEY.
`

const FLAGS = {
  timeout: { type: 'string' },
  'no-wait': { type: 'boolean' },
  json: { type: 'boolean' },
} as const

interface ConnectArgs {
  readonly externalId: string
  readonly timeoutSeconds: number
  readonly wait: boolean
  readonly json: boolean
}

function parseArgs(argv: readonly string[]): ParsedCommand<ConnectArgs> {
  return parsedCommand<ConnectArgs>(() => {
    const parsed = parseCommandArgv(argv, FLAGS)
    if (parsed.help) return { status: 'help' }
    const { values, positionals } = parsed
    const [customerId, ...rest] = positionals
    if (customerId === undefined)
      return { status: 'invalid', message: 'name the customer: connect <customerId>' }
    if (rest.length > 0)
      return { status: 'invalid', message: `unexpected argument "${terminalSafe(rest[0] ?? '')}"` }
    let externalId: string
    try {
      externalId = parseExternalId(customerId, 'customerId', 'connect')
    } catch (error) {
      throw new CommandArgsError(error instanceof Error ? error.message : String(error), 'customerId')
    }
    const wait = values['no-wait'] !== true
    if (!wait && values.timeout !== undefined) {
      return { status: 'invalid', message: '--timeout has no effect with --no-wait; give one of them' }
    }
    let timeoutSeconds = DEFAULT_TIMEOUT_SECONDS
    if (values.timeout !== undefined) {
      timeoutSeconds = Number(values.timeout)
      if (!/^\d+$/.test(values.timeout) || timeoutSeconds < 1 || timeoutSeconds > MAX_TIMEOUT_SECONDS) {
        return {
          status: 'invalid',
          message: `--timeout must be a whole number of seconds from 1 to ${MAX_TIMEOUT_SECONDS}, got "${terminalSafe(values.timeout)}"`,
        }
      }
    }
    return { status: 'run', externalId, timeoutSeconds, wait, json: values.json === true }
  })
}

/** The client from the environment, or the exit-2 message naming the variable to set. */
function clientFromEnvironment(): { client: PusharyClient } | { problem: string } {
  try {
    return { client: createPusharyClient({ requestTimeoutMs: POLL_REQUEST_TIMEOUT_MS }) }
  } catch (error) {
    if (!isPusharyValidationError(error)) throw error
    if (error.code === 'invalid_api_key') {
      return {
        problem:
          process.env.PUSHARY_API_KEY === undefined || process.env.PUSHARY_API_KEY.trim() === ''
            ? 'no API key: set PUSHARY_API_KEY (the local service prints its key: pushary-mastra dev)'
            : 'PUSHARY_API_KEY is malformed: use the full key (pk_xxx.sk_xxx)',
      }
    }
    if (error.code === 'invalid_base_url') return { problem: `PUSHARY_BASE_URL: ${error.message}` }
    throw error
  }
}

/** Why a call failed, in words that name what to check. */
function describeFailure(error: unknown): string {
  if (isPusharyApiError(error) && error.isAuthError) {
    return `the service refused the API key (HTTP ${error.status}): check PUSHARY_API_KEY and PUSHARY_BASE_URL`
  }
  return error instanceof Error ? error.message : String(error)
}

/** A 4xx other than 429 will not change by asking again; anything else may. */
function isFinal(error: unknown): boolean {
  return isPusharyApiError(error) && error.status < 500 && error.status !== 429
}

async function printQr(io: CommandIo, link: string): Promise<void> {
  // Only an http(s) link is drawn: the code is scanned on a phone, so a
  // service that sent anything else gets its text shown (escaped), no code.
  if (!/^https?:\/\/[^\s]+$/.test(link)) return
  const qrcode = (await import('qrcode-terminal')).default
  await new Promise<void>((done) => {
    qrcode.generate(link, { small: true }, (code) => {
      io.stdout.write(`${code}\n`)
      done()
    })
  })
}

function reachLine(reach: DecisionReach): string {
  const deliverability =
    reach.deliverability === 'unknown' ? `unknown (${reach.rawDeliverability})` : reach.deliverability
  const devices = `${reach.deviceCount} device${reach.deviceCount === 1 ? '' : 's'}`
  const line = `Reachability: ${deliverability}, ${devices}, ${reach.reachable ? 'reachable' : 'not reachable'}`
  return reach.hint ? `${terminalSafe(line)}\n  ${terminalSafe(reach.hint)}` : terminalSafe(line)
}

function enrollmentJson(enrollment: EnrollResult): string {
  const { token: _token, ...shown } = enrollment
  return terminalSafe(JSON.stringify({ type: 'enrollment', ...shown }))
}

/** A phone counts as linked once the device count grew, or the customer turned reachable. */
function isNewlyLinked(before: DecisionReach, now: DecisionReach): boolean {
  return now.deviceCount > before.deviceCount || (!before.reachable && now.reachable)
}

async function waitForPhone(
  client: PusharyClient,
  externalId: string,
  before: DecisionReach,
  deadline: number,
): Promise<{ linked: boolean; reach: DecisionReach }> {
  let last = before
  let lastError: unknown
  for (;;) {
    try {
      last = await client.reachability(externalId)
      lastError = undefined
      if (isNewlyLinked(before, last)) return { linked: true, reach: last }
    } catch (error) {
      if (isFinal(error)) throw error
      lastError = error
    }
    if (Date.now() + POLL_INTERVAL_MS > deadline) break
    await new Promise((done) => setTimeout(done, POLL_INTERVAL_MS))
  }
  if (lastError !== undefined) throw lastError
  return { linked: false, reach: last }
}

/**
 * Runs `pushary-mastra connect <customerId>`; resolves 0 once a phone is
 * linked (or the link is printed, with `--no-wait`), 1 when none was linked
 * in time or the service refused, 2 for bad arguments or configuration.
 *
 * @example
 * process.exitCode = await runConnectCommand(['customer_1'], { stdout: process.stdout, stderr: process.stderr })
 */
export function runConnectCommand(argv: readonly string[], io: CommandIo): Promise<number> {
  return runParsedCommand('connect', USAGE, parseArgs(argv), io, async (args) => {
    const configured = clientFromEnvironment()
    if ('problem' in configured) {
      io.stderr.write(`pushary-mastra connect: ${configured.problem}\n\n${USAGE}`)
      return 2
    }
    const { client } = configured
    const who = terminalSafe(JSON.stringify(args.externalId))
    try {
      // Read before minting: a phone linked from now on is the one this link enrolled.
      const before = args.wait ? await client.reachability(args.externalId) : null
      const enrollment = await client.enroll(args.externalId)
      const startedAt = Date.now()
      if (args.json) io.stdout.write(`${enrollmentJson(enrollment)}\n`)
      else {
        const minutes =
          typeof enrollment.expiresInSeconds === 'number'
            ? `, valid ${Math.max(1, Math.round(enrollment.expiresInSeconds / 60))} min`
            : ''
        io.stdout.write(
          `Enrolment link for ${who} (single use${minutes}):\n  ${terminalSafe(enrollment.universalLink)}\n`,
        )
        await printQr(io, enrollment.universalLink)
        io.stdout.write(
          `Open it on the phone (or scan the code) and confirm there to link the phone to ${who}.\n`,
        )
      }
      if (before === null) return 0

      const expiresInMs =
        typeof enrollment.expiresInSeconds === 'number' && enrollment.expiresInSeconds > 0
          ? enrollment.expiresInSeconds * 1000
          : Number.POSITIVE_INFINITY
      const waitMs = Math.min(args.timeoutSeconds * 1000, expiresInMs)
      if (!args.json) {
        io.stdout.write(
          `Waiting up to ${Math.round(waitMs / 1000)} s for the phone to be linked (Ctrl-C stops waiting)...\n`,
        )
      }
      const { linked, reach } = await waitForPhone(client, args.externalId, before, startedAt + waitMs)
      if (args.json) {
        io.stdout.write(`${terminalSafe(JSON.stringify({ type: 'reachability', linked, ...reach }))}\n`)
      } else {
        io.stdout.write(
          linked
            ? `Linked: a phone is enrolled for ${who}.\n`
            : `No phone was linked for ${who} within ${Math.round(waitMs / 1000)} s.\n`,
        )
        io.stdout.write(`${reachLine(reach)}\n`)
      }
      return linked ? 0 : 1
    } catch (error) {
      io.stderr.write(`pushary-mastra connect: ${terminalSafe(describeFailure(error))}\n`)
      return 1
    }
  })
}
