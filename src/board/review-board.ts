/**
 * The live review board as something an application mounts, like the
 * callback route: one Fetch handler, and the same handler for `node:http`
 * and Express. The routes (and Hono) load on the first request.
 */
import type { ServerResponse } from 'node:http'
import { PusharyValidationError } from '../pushary/errors.js'
import {
  type PusharyNodeRequest,
  pusharyExpressCallback,
  pusharyNodeCallback,
} from '../pushary/node-callback.js'
import { DEFAULT_CLAIM_LEASE_MS } from '../resume/claim-lease.js'
import type { PusharyReviewStore } from '../store/review-store.js'
import type { BoardConfig, BoardLogLevel } from './board-session.js'

/**
 * Where the board logs sign-ins, refusals and every recovery: the Mastra
 * instance's logger (`mastra.getLogger()`) or any object with these methods.
 *
 * @example
 * const logger: PusharyBoardLogger = mastra.getLogger()
 */
export interface PusharyBoardLogger {
  info(message: string, ...args: unknown[]): void
  warn(message: string, ...args: unknown[]): void
  error(message: string, ...args: unknown[]): void
}

/**
 * Options of {@link createPusharyReviewBoard}.
 *
 * @example
 * const options: PusharyReviewBoardOptions = { store, operatorKey: process.env.BOARD_OPERATOR_KEY ?? '', mastra }
 */
export interface PusharyReviewBoardOptions {
  /** The app's review store (the one its dispatcher uses). */
  store: PusharyReviewStore
  /**
   * The secret an operator types to sign in; at least 24 printable ASCII
   * characters. Keep it apart from the Pushary API key: it unlocks changing reviews.
   */
  operatorKey: string
  /** The Mastra instance whose logger records the board's actions (or pass `logger`). */
  mastra?: { getLogger(): PusharyBoardLogger }
  /** A logger instead of `mastra`'s. One of the two is required: recoveries are always logged. */
  logger?: PusharyBoardLogger
  /** Path the board is served under (default `/pushary/board`); every page is below it. */
  basePath?: string
  /** The dispatcher's `claimLeaseMs` (default 30 000): a claim kept alive within it is live work. */
  claimLeaseMs?: number
  /** How long a sign-in lasts (default 12 hours). */
  sessionTtlMs?: number
  /** Rows shown per state (default 50). */
  pageSize?: number
  /** Reviews read per state before filtering (default 2 000). */
  scanLimit?: number
  /** Force the Secure cookie (behind a TLS-terminating proxy); default: when the request is https. */
  secureCookie?: boolean
  /** Clock in milliseconds (default `Date.now`). */
  now?: () => number
}

/**
 * A mounted review board.
 *
 * @example
 * const board: PusharyReviewBoard = createPusharyReviewBoard({ store, operatorKey, mastra })
 * app.all('/pushary/board/*', (c) => board.fetch(c.req.raw))
 */
export interface PusharyReviewBoard {
  /** The path every page lives under. */
  readonly basePath: string
  /** The Fetch handler (Hono, Bun, Deno, a Next.js route): answers every path under `basePath`, 404 elsewhere. */
  fetch(request: Request): Promise<Response>
  /** The handler for `node:http`. */
  node(req: PusharyNodeRequest, res: ServerResponse): Promise<void>
  /** The handler for Express (4 or 5); a body `express.urlencoded()` parsed is read from `req.body`. */
  express(req: PusharyNodeRequest, res: ServerResponse, next: (error?: unknown) => void): Promise<void>
}

const KEY_SHAPE = /^[\x21-\x7e]{24,256}$/
const BASE_SHAPE = /^(\/[A-Za-z0-9._~-]+)+$/

function invalid(field: string, message: string): never {
  throw new PusharyValidationError({
    code: 'invalid_options',
    operation: 'createPusharyReviewBoard',
    field,
    message,
  })
}

function whole(value: unknown, field: string, min: number, max: number, fallback: number): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    invalid(field, `must be an integer from ${min} to ${max}`)
  }
  return value
}

function resolveConfig(options: PusharyReviewBoardOptions): BoardConfig {
  const store = options?.store as Partial<PusharyReviewStore> | undefined
  for (const method of ['listByState', 'get', 'history', 'claimState', 'recover', 'recordAction'] as const) {
    if (typeof store?.[method] !== 'function')
      invalid('store', `pass the app's review store (it has no ${method})`)
  }
  if (typeof options.operatorKey !== 'string' || !KEY_SHAPE.test(options.operatorKey)) {
    invalid('operatorKey', 'must be 24 to 256 printable ASCII characters (no spaces)')
  }
  const logger = options.logger ?? options.mastra?.getLogger()
  if (
    typeof logger?.info !== 'function' ||
    typeof logger.warn !== 'function' ||
    typeof logger.error !== 'function'
  ) {
    invalid(
      'logger',
      'pass `mastra` (its logger records every recovery) or a `logger` with info, warn and error',
    )
  }
  const basePath = options.basePath ?? '/pushary/board'
  if (typeof basePath !== 'string' || !BASE_SHAPE.test(basePath)) {
    invalid('basePath', 'must be a path like /pushary/board (no trailing slash, no query)')
  }
  if (options.secureCookie !== undefined && typeof options.secureCookie !== 'boolean') {
    invalid('secureCookie', 'must be a boolean')
  }
  if (options.now !== undefined && typeof options.now !== 'function') invalid('now', 'must be a function')
  return {
    store: store as PusharyReviewStore,
    operatorKey: options.operatorKey,
    basePath,
    claimLeaseMs: whole(options.claimLeaseMs, 'claimLeaseMs', 100, 86_400_000, DEFAULT_CLAIM_LEASE_MS),
    sessionTtlMs: whole(options.sessionTtlMs, 'sessionTtlMs', 60_000, 7 * 86_400_000, 12 * 3_600_000),
    pageSize: whole(options.pageSize, 'pageSize', 1, 1000, 50),
    scanLimit: whole(options.scanLimit, 'scanLimit', 1, 100_000, 2000),
    secureCookie: options.secureCookie ?? null,
    now: options.now ?? Date.now,
    log: (level: BoardLogLevel, message: string, details: Record<string, unknown>) => {
      try {
        logger[level](`[pushary] ${message}`, details)
      } catch {
        // A logger that throws must not turn an operator's page into an error.
      }
    },
  }
}

/** Express's urlencoded parser consumed the form: the same fields, encoded again. */
function reencodedForm(req: PusharyNodeRequest): void {
  const body = req.body
  if (body === null || typeof body !== 'object' || body instanceof Uint8Array) return
  const form = new URLSearchParams()
  for (const [name, value] of Object.entries(body)) if (typeof value === 'string') form.append(name, value)
  req.body = form.toString()
  req.headers['content-type'] = 'application/x-www-form-urlencoded'
}

/**
 * The live review board: reviews by state with filters, one review's
 * history as a timeline beside the lifecycle diagram with its state
 * highlighted, and the operator's recover action (confirmed, logged, with
 * exactly the refusals of `pushary-mastra reviews recover`). Behind the
 * operator key: a login form sets an HttpOnly, SameSite=Strict session
 * cookie; every form carries a session token. Mount it like the callback
 * route, before any body parser if you can.
 *
 * @example
 * const board = createPusharyReviewBoard({ store, operatorKey: process.env.BOARD_OPERATOR_KEY!, mastra })
 * honoApp.all('/pushary/board/*', (c) => board.fetch(c.req.raw)) // Hono (and Mastra's server)
 * expressApp.use('/pushary/board', board.express)                 // Express
 * createServer(board.node).listen(3001)                            // node:http
 */
export function createPusharyReviewBoard(options: PusharyReviewBoardOptions): PusharyReviewBoard {
  const config = resolveConfig(options)
  let app: Promise<{ fetch(request: Request): Response | Promise<Response> }> | null = null
  const fetchHandler = async (request: Request): Promise<Response> => {
    app ??= import('./board-app.js').then(({ createBoardApp }) => createBoardApp(config))
    return (await app).fetch(request)
  }
  const node = pusharyNodeCallback(fetchHandler)
  const express = pusharyExpressCallback(fetchHandler)
  return {
    basePath: config.basePath,
    fetch: fetchHandler,
    node,
    express: (req, res, next) => {
      reencodedForm(req)
      return express(req, res, next)
    },
  }
}
