/**
 * `pushary-mastra deliveries list`: the local service's callback deliveries
 * and every attempt's answer (status code, time, error), read straight from
 * its database file. A receiver that refuses every callback (a wrong
 * `PUSHARY_WEBHOOK_SECRET` answers 401) is visible here instead of silent.
 */
import type { Client } from '@libsql/client'
import { idSchema } from '../pushary/identity.js'
import { type CallbackDelivery, redactUrl } from '../server/callbacks-outbox.js'
import { DEFAULT_DB_PATH } from '../server/database.js'
import { parseCommandArgv } from './args.js'
import { type CommandIo, type ParsedCommand, parsedCommand, terminalIo, terminalSafe } from './command-io.js'
import { runServiceDbCommand } from './service-db-command.js'

const USAGE = `Usage:
  pushary-mastra deliveries list [--decision <decisionId>] [--limit <n>] [--db <path>] [--json]

Every callback the local service sent or is still retrying, newest first, with
each attempt: when, the receiver's HTTP status (or the network error) and
whether it counted as delivered. A run of 401s means the receiver's
PUSHARY_WEBHOOK_SECRET is not this service's webhook secret.
Default database: ${DEFAULT_DB_PATH}

  --json          Print JSON instead of text
  --help, -h      Show this message

Exit codes: 0 done, 1 no database, 2 bad arguments.
`

interface DeliveriesArgs {
  dbPath: string
  decisionId?: string
  limit: number
  json: boolean
}

/** One delivery as listed: the outbox's view plus the decision it belongs to. */
export type ListedDelivery = CallbackDelivery & { decisionId: string }

const FLAGS = {
  db: { type: 'string' },
  decision: { type: 'string' },
  limit: { type: 'string' },
  json: { type: 'boolean' },
} as const

function parseArgs(argv: readonly string[]): ParsedCommand<DeliveriesArgs> {
  return parsedCommand<DeliveriesArgs>(() => {
    const parsed = parseCommandArgv(argv, FLAGS)
    if (parsed.help) return { status: 'help' }
    const { values, positionals } = parsed
    const [action, ...rest] = positionals
    if (action === 'help') return { status: 'help' }
    if (action === undefined) return { status: 'invalid', message: 'name an action: list' }
    if (action !== 'list') return { status: 'invalid', message: `unknown action "${action}" (list)` }
    if (rest.length > 0) return { status: 'invalid', message: `unexpected argument "${rest[0]}"` }
    const args: DeliveriesArgs = {
      dbPath: values.db ?? DEFAULT_DB_PATH,
      limit: 50,
      json: values.json === true,
    }
    if (values.decision !== undefined) {
      const decision = idSchema.safeParse(values.decision)
      if (!decision.success) return { status: 'invalid', message: '--decision must be a decision ID' }
      args.decisionId = decision.data
    }
    if (values.limit !== undefined) {
      const limit = Number(values.limit)
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
        return { status: 'invalid', message: '--limit must be an integer from 1 to 1000' }
      }
      args.limit = limit
    }
    return { status: 'run', ...args }
  })
}

const text = (value: unknown): string | null => (value === null || value === undefined ? null : String(value))
const num = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value))

async function listDeliveries(db: Client, args: DeliveriesArgs): Promise<ListedDelivery[]> {
  const rows = await db.execute({
    sql:
      args.decisionId === undefined
        ? 'SELECT * FROM callback_deliveries ORDER BY delivery_id DESC LIMIT ?'
        : 'SELECT * FROM callback_deliveries WHERE decision_id = ? ORDER BY delivery_id DESC LIMIT ?',
    args: args.decisionId === undefined ? [args.limit] : [args.decisionId, args.limit],
  })
  const listed: ListedDelivery[] = []
  for (const row of rows.rows) {
    const deliveryId = Number(row.delivery_id)
    const attempts = await db.execute({
      sql: 'SELECT * FROM callback_attempts WHERE delivery_id = ? ORDER BY attempt ASC',
      args: [deliveryId],
    })
    const state = String(row.state) as CallbackDelivery['state']
    listed.push({
      deliveryId,
      decisionId: String(row.decision_id),
      event: String(row.event),
      url: redactUrl(String(row.url)),
      state,
      attempts: Number(row.attempts),
      nextAttemptAt: state === 'pending' ? new Date(Number(row.next_attempt_ms)).toISOString() : null,
      lastAttemptAt: text(row.last_attempt_at),
      lastStatusCode: num(row.last_status_code),
      lastError: text(row.last_error),
      deliveredAt: text(row.delivered_at),
      history: attempts.rows.map((attempt) => ({
        attempt: Number(attempt.attempt),
        at: String(attempt.at),
        statusCode: num(attempt.status_code),
        error: text(attempt.error),
        ok: Number(attempt.ok) === 1,
      })),
    })
  }
  return listed
}

function printText(deliveries: readonly ListedDelivery[], io: CommandIo): void {
  if (deliveries.length === 0) {
    io.stdout.write('No callback deliveries.\n')
    return
  }
  for (const delivery of deliveries) {
    // Each stored value is escaped on its own, so a newline in one cannot start a forged line.
    const row = [
      delivery.decisionId,
      delivery.event,
      delivery.state,
      `${delivery.attempts} attempt(s)`,
      delivery.url,
    ]
    io.stdout.write(`${row.map(terminalSafe).join('  ')}\n`)
    for (const attempt of delivery.history) {
      const answer = attempt.statusCode === null ? 'no response' : `HTTP ${attempt.statusCode}`
      io.stdout.write(
        `  #${attempt.attempt}  ${terminalSafe(attempt.at)}  ${answer}${attempt.ok ? '  delivered' : ''}${attempt.error ? `  ${terminalSafe(JSON.stringify(attempt.error))}` : ''}\n`,
      )
    }
    if (delivery.history.some((attempt) => attempt.statusCode === 401)) {
      io.stdout.write(
        "  401: the receiver refused the signature; its PUSHARY_WEBHOOK_SECRET is not this service's webhook secret\n",
      )
    }
    if (delivery.nextAttemptAt) io.stdout.write(`  next attempt ${terminalSafe(delivery.nextAttemptAt)}\n`)
  }
}

/**
 * Runs `pushary-mastra deliveries list`; resolves 0 on success, 1 when the
 * database is missing, 2 for bad arguments.
 *
 * @example
 * process.exitCode = await runDeliveriesCommand(['list', '--db', '.pushary/dev.db'], { stdout: process.stdout, stderr: process.stderr })
 */
export async function runDeliveriesCommand(argv: readonly string[], terminal: CommandIo): Promise<number> {
  // Every row is read from a database file that may have been written by anyone.
  const io = terminalIo(terminal)
  return runServiceDbCommand('deliveries', USAGE, parseArgs(argv), io, async (db, args) => {
    const deliveries = await listDeliveries(db, args)
    if (args.json) io.stdout.write(`${JSON.stringify(deliveries)}\n`)
    else printText(deliveries, io)
    return 0
  })
}
