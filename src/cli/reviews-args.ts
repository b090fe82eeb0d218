/**
 * Argument parsing of `pushary-mastra reviews`. Kept apart from the command
 * so every refusal (a missing store, an unknown state, a recovery without a
 * reason) happens before any database is opened.
 */
import { isReviewState, REVIEW_STATES, type ReviewState } from '../machines/review-lifecycle.js'
import { DEFAULT_CLAIM_LEASE_MS } from '../resume/claim-lease.js'
import { type FlagValues, parseCommandArgv } from './args.js'
import { type ParsedCommand, parsedCommand } from './command-io.js'

export const REVIEWS_USAGE = `Usage: pushary-mastra reviews <list|show|stats|check|recover> [options]

  reviews list [--state <state>]... [--limit <n>]
      Reviews in the given states (default: every state), longest in their state first.
  reviews show <decisionId> [--mastra-db <file> | --mastra-pg <url> [--mastra-pg-schema <name>]]
      The binding, every transition with its reason, the recorded callbacks and,
      when Mastra's storage is given, the status of the run and of its approval step.
      --mastra-pg-schema is the schemaName your app gives PostgresStore (default
      public); a run not found says where it was looked for.
  reviews stats [--since <ISO time>] [--now <ISO time>]
      The numbers an operator alerts on (readPusharyReviewStats): reviews per
      state and the oldest one's age, answered reviews not yet resumed,
      misconfigured and uncertain counts; in the window (default: the last 24
      hours before --now, default the current time) answered-to-resumed latency,
      endings by reason, action outcomes and callbacks received.
  reviews check --app <module>
      Startup self-check of a worker: imports <module> (it exports the worker's
      \`mastra\`), and lists every pending review that worker could not resume and
      why (workflow, child_workflow, parent_workflow, auto_restart, agent, tool,
      storage, run). Exit code 1 when it found any.
  reviews recover <decisionId> completed|stale|pending --reason <text> [--lease-ms <n>]
      Operator recovery of an uncertain (or crash-left resuming) review, with the
      same rules as store.recover: completed = the action ran, stale = it did not
      run and never will, pending = nothing ran and the run still waits (reopen).
      A resuming claim still kept alive within the lease (--lease-ms, the
      dispatcher's claimLeaseMs, default 30000) is refused: it is live work.

Review store (one is required):
  --db <file>          SQLite review store file (createSqliteReviewStore)
  --pg <url>           PostgreSQL connection string (createPostgresReviewStore)
  --schema <name>      PostgreSQL schema of the review tables (default public)

  --json               Print JSON instead of text
  --help, -h           Show this message

States: ${REVIEW_STATES.join(', ')}. Exit codes: 0 done, 1 refused or failed, 2 bad arguments.
`

export const RECOVERY_OUTCOMES = ['completed', 'stale', 'pending'] as const

/** Where the review store lives. */
export type StoreLocation = { kind: 'sqlite'; file: string } | { kind: 'pg'; url: string; schema?: string }

/** Where Mastra's workflow storage lives, for the run status in `show`. */
export type MastraLocation =
  | { kind: 'libsql'; url: string }
  | { kind: 'pg'; url: string; schema: string; schemaGiven: boolean }

/** What PostgreSQL (and `@mastra/pg`'s `schemaName`) accepts unquoted: 63 bytes at most. */
const PG_SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/

export type ReviewsCommand =
  | { action: 'list'; states: readonly ReviewState[]; limit: number }
  | { action: 'show'; decisionId: string; mastra: MastraLocation | null }
  | { action: 'check'; app: string }
  | { action: 'stats'; since: Date | undefined; now: Date | undefined }
  | {
      action: 'recover'
      decisionId: string
      outcome: (typeof RECOVERY_OUTCOMES)[number]
      reason: string
      /** The dispatcher's claim lease: a `resuming` claim kept alive within it is live. */
      leaseMs: number
    }

export type ParsedReviewsArgs = ParsedCommand<{
  command: ReviewsCommand
  store: StoreLocation
  json: boolean
}>

const FLAGS = {
  state: { type: 'string', multiple: true },
  limit: { type: 'string' },
  db: { type: 'string' },
  pg: { type: 'string' },
  schema: { type: 'string' },
  'mastra-db': { type: 'string' },
  'mastra-pg': { type: 'string' },
  'mastra-pg-schema': { type: 'string' },
  reason: { type: 'string' },
  'lease-ms': { type: 'string' },
  app: { type: 'string' },
  since: { type: 'string' },
  now: { type: 'string' },
  json: { type: 'boolean' },
} as const

type Flags = FlagValues<typeof FLAGS>

function storeLocation(flags: Flags): StoreLocation | string {
  const { db, pg, schema } = flags
  if (db !== undefined && pg !== undefined) return 'give either --db or --pg, not both'
  if (db !== undefined) {
    if (schema !== undefined) return '--schema applies to --pg only'
    return { kind: 'sqlite', file: db }
  }
  if (pg !== undefined) return { kind: 'pg', url: pg, ...(schema === undefined ? {} : { schema }) }
  return 'a review store is required: --db <file> or --pg <url>'
}

function mastraLocation(flags: Flags): MastraLocation | null | string {
  const libsql = flags['mastra-db']
  const pg = flags['mastra-pg']
  if (libsql !== undefined && pg !== undefined) return 'give either --mastra-db or --mastra-pg, not both'
  if (libsql !== undefined) {
    return { kind: 'libsql', url: /^[a-z]+:/.test(libsql) ? libsql : `file:${libsql}` }
  }
  const schema = flags['mastra-pg-schema']
  if (schema !== undefined) {
    if (pg === undefined) return '--mastra-pg-schema applies to --mastra-pg only'
    if (!PG_SCHEMA_NAME.test(schema)) {
      return `--mastra-pg-schema must be a PostgreSQL schema name (a letter or _, then letters, digits or _; at most 63), got "${schema}"`
    }
  }
  if (pg !== undefined) {
    return { kind: 'pg', url: pg, schema: schema ?? 'public', schemaGiven: schema !== undefined }
  }
  return null
}

/** Options each action accepts besides the store options and --json. */
const ACTION_FLAGS: Record<ReviewsCommand['action'], readonly (keyof typeof FLAGS)[]> = {
  list: ['state', 'limit'],
  show: ['mastra-db', 'mastra-pg', 'mastra-pg-schema'],
  recover: ['reason', 'lease-ms'],
  check: ['app'],
  stats: ['since', 'now'],
}

function isReviewsAction(action: string): action is ReviewsCommand['action'] {
  return Object.hasOwn(ACTION_FLAGS, action)
}

/** An ISO time flag as a Date, `undefined` when absent, or the refusal naming the flag. */
function isoFlag(value: string | undefined, name: string): Date | undefined | string {
  if (value === undefined) return undefined
  const time = Date.parse(value)
  if (!/^\d{4}-\d{2}-\d{2}T/.test(value) || Number.isNaN(time)) {
    return `--${name} must be an ISO time such as 2026-12-01T08:00:00Z, got "${value}"`
  }
  return new Date(time)
}

/**
 * Parses `reviews` arguments. Never touches a database.
 *
 * @example
 * parseReviewsArgs(['list', '--state', 'uncertain', '--db', 'reviews.db'])
 */
export function parseReviewsArgs(argv: readonly string[]): ParsedReviewsArgs {
  return parsedCommand(() => {
    const parsed = parseCommandArgv(argv, FLAGS)
    if (parsed.help) return { status: 'help' }
    return parseAction(parsed.values, parsed.positionals)
  })
}

function parseAction(flags: Flags, positionals: readonly string[]): ParsedReviewsArgs {
  const json = flags.json === true
  const [action, ...rest] = positionals
  if (action === 'help') return { status: 'help' }
  if (action === undefined)
    return { status: 'invalid', message: 'name an action: list, show, stats, check or recover' }
  if (!isReviewsAction(action)) {
    return { status: 'invalid', message: `unknown action "${action}" (list, show, stats, check, recover)` }
  }
  const allowed = new Set<string>(['db', 'pg', 'schema', 'json', ...ACTION_FLAGS[action]])
  for (const flag of Object.keys(flags)) {
    if (!allowed.has(flag))
      return { status: 'invalid', message: `--${flag} does not apply to reviews ${action}` }
  }
  const store = storeLocation(flags)
  if (typeof store === 'string') return { status: 'invalid', message: store }

  if (action === 'list') {
    if (rest.length > 0) return { status: 'invalid', message: `unexpected argument "${rest[0]}"` }
    const states = (flags.state ?? []).flatMap((value) => value.split(','))
    const unknown = states.find((state) => !isReviewState(state))
    if (unknown !== undefined) {
      return { status: 'invalid', message: `unknown --state "${unknown}" (${REVIEW_STATES.join(', ')})` }
    }
    const limitText = flags.limit
    const limit = limitText === undefined ? 100 : Number(limitText)
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
      return { status: 'invalid', message: '--limit must be an integer from 1 to 1000' }
    }
    const chosen = states.length === 0 ? [...REVIEW_STATES] : [...new Set(states as ReviewState[])]
    return { status: 'run', store, json, command: { action, states: chosen, limit } }
  }

  if (action === 'stats') {
    if (rest.length > 0) return { status: 'invalid', message: `unexpected argument "${rest[0]}"` }
    const since = isoFlag(flags.since, 'since')
    if (typeof since === 'string') return { status: 'invalid', message: since }
    const now = isoFlag(flags.now, 'now')
    if (typeof now === 'string') return { status: 'invalid', message: now }
    if (since !== undefined && now !== undefined && since.getTime() > now.getTime()) {
      return { status: 'invalid', message: '--since must not be after --now' }
    }
    return {
      status: 'run',
      store,
      json,
      command: { action, since: since ?? undefined, now: now ?? undefined },
    }
  }

  if (action === 'check') {
    if (rest.length > 0) return { status: 'invalid', message: `unexpected argument "${rest[0]}"` }
    const app = flags.app
    if (app === undefined) {
      return {
        status: 'invalid',
        message: "reviews check needs --app <module> (a module exporting the worker's mastra)",
      }
    }
    return { status: 'run', store, json, command: { action, app } }
  }

  const [decisionId, outcome, ...extra] = rest
  if (decisionId === undefined) return { status: 'invalid', message: `reviews ${action} needs a decision ID` }
  if (action === 'show') {
    if (outcome !== undefined) return { status: 'invalid', message: `unexpected argument "${outcome}"` }
    const mastra = mastraLocation(flags)
    if (typeof mastra === 'string') return { status: 'invalid', message: mastra }
    return { status: 'run', store, json, command: { action, decisionId, mastra } }
  }
  if (extra.length > 0) return { status: 'invalid', message: `unexpected argument "${extra[0]}"` }
  if (outcome === undefined || !(RECOVERY_OUTCOMES as readonly string[]).includes(outcome)) {
    return {
      status: 'invalid',
      message: `reviews recover needs an outcome: ${RECOVERY_OUTCOMES.join(', ')}${outcome === undefined ? '' : ` (got "${outcome}")`}`,
    }
  }
  const reason = flags.reason
  if (reason === undefined || reason.trim() === '') {
    return { status: 'invalid', message: 'reviews recover needs --reason <text>: it is kept in the history' }
  }
  const leaseText = flags['lease-ms']
  const leaseMs = leaseText === undefined ? DEFAULT_CLAIM_LEASE_MS : Number(leaseText)
  if (!Number.isInteger(leaseMs) || leaseMs < 100) {
    return { status: 'invalid', message: '--lease-ms must be an integer of at least 100 (milliseconds)' }
  }
  return {
    status: 'run',
    store,
    json,
    command: {
      action,
      decisionId,
      outcome: outcome as (typeof RECOVERY_OUTCOMES)[number],
      reason,
      leaseMs,
    },
  }
}
