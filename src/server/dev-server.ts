/**
 * The local Pushary-compatible decision service: one Hono app on Node serving
 * the `/api/v1/server` contract and the reviewer page, persisted in a SQLite
 * file, with a callback outbox and an expiry sweeper.
 */
import { randomBytes } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import { z } from 'zod/v4'
import { generateDevApiKey } from './api-auth.js'
import { apiErrorBody } from './api-errors.js'
import { createApiRoutes } from './api-routes.js'
import { createBoundKeys } from './bound-keys.js'
import { type CallbackAddressPolicy, createCallbackAddressCheck } from './callback-address.js'
import { type CallbackRetryOptions, createCallbackOutbox } from './callbacks-outbox.js'
import {
  createLongPollBudget,
  createSlotLimiter,
  limitConnectionsPerClient,
  type PusharyDevServerLimits,
  resolveLimits,
} from './connection-limits.js'
import { DEFAULT_DB_PATH, ensureSetting, openServiceDatabase, writeSetting } from './database.js'
import { createDecisionEvents } from './decision-events.js'
import { createDecisionService } from './decision-service.js'
import { PusharyDevServerError } from './dev-server-error.js'
import { startExpirySweeper } from './expiry-sweeper.js'
import { createPermitService } from './permits.js'
import { loadPolicyFile, type PolicyFile } from './policy.js'
import { createApprovalLinkApp, createApprovalLinks } from './reviewer/approval-link.js'
import { createReviewerApp } from './reviewer/index.js'

/** Request bodies above this size get 413. */
export const MAX_BODY_BYTES = 64 * 1024

/**
 * Options of {@link createPusharyDevServer}. Every field is optional.
 *
 * @example
 * const options: PusharyDevServerOptions = { dbPath: '.pushary/dev.db', port: 0, sandbox: true }
 */
export interface PusharyDevServerOptions {
  /** Interface to bind (default `127.0.0.1`). */
  host?: string
  /** Port to bind; `0` (default) picks a free one. */
  port?: number
  /** SQLite file (default `.pushary/dev.db` under the working directory). */
  dbPath?: string
  /** Base URL used in printed links, e.g. `http://192.168.1.20:4000` for a phone on the LAN. */
  publicUrl?: string
  /** API key to require; by default one is generated on first start and kept in the database. */
  apiKey?: string
  /** JSON policy file for `POST /authorize`. */
  policyPath?: string
  /** Answer decisions carrying `sandboxOutcome` automatically. */
  sandbox?: boolean
  /** Callback retry policy. */
  callbackRetry?: CallbackRetryOptions
  /**
   * Non-public callback addresses the service may call. By default loopback,
   * private and link-local addresses (and names resolving there) are refused
   * as `callbackUrl`; `{ allowLoopback: true }` is for local development.
   */
  callbackAddresses?: CallbackAddressPolicy
  /** Socket timeouts, the connection cap and the long-poll and event-stream caps. */
  limits?: PusharyDevServerLimits
  /** How often overdue decisions are expired (default 1 000 ms). */
  sweepIntervalMs?: number
  /** Clock in milliseconds (default `Date.now`). */
  now?: () => number
  /** `fetch` used for callbacks (default the global one). */
  fetch?: typeof fetch
  /** Called for every enrolment link created, e.g. to print a QR code. */
  onEnrollmentLink?: (link: { externalId: string; universalLink: string; expiresInSeconds: number }) => void
  /** Called for unexpected internal errors (default `console.error`). */
  onError?: (error: unknown) => void
  /**
   * Fetch handlers served beside the service, each for every method under
   * its path (e.g. the `dev` command's review board at `/board`). Each
   * handler sets its own headers and checks its own credentials.
   */
  mounts?: readonly { path: string; fetch: (request: Request) => Promise<Response> }[]
}

/**
 * A running dev server.
 *
 * @example
 * const server: PusharyDevServer = await createPusharyDevServer({ port: 0 })
 * const client = createPusharyClient({ baseUrl: server.baseUrl, apiKey: server.apiKey })
 * await server.close()
 */
export interface PusharyDevServer {
  /** `http://127.0.0.1:PORT` (loopback even when bound to all interfaces). */
  readonly url: string
  /** `url + '/api/v1/server'`: pass as the client's `baseUrl`. */
  readonly baseUrl: string
  /** Base of printed links (enrolment, reviewer page). */
  readonly publicUrl: string
  readonly apiKey: string
  /** The current webhook secret (changes after a rotation). */
  readonly webhookSecret: string
  /**
   * Which secrets this start created (first start on a new database, or a
   * rotation of a missing one): the `dev` command prints secrets only then,
   * or when asked.
   */
  readonly created: { readonly apiKey: boolean; readonly webhookSecret: boolean }
  readonly dbPath: string
  /** Stops listening, releases long-polls, stops timers and closes the database. */
  close(): Promise<void>
}

const optionsSchema = z.object({
  host: z.string().trim().min(1).optional(),
  port: z.number().int().min(0).max(65_535).optional(),
  dbPath: z.string().trim().min(1).optional(),
  publicUrl: z.url({ protocol: /^https?$/ }).optional(),
  // Printable ASCII only: the key is compared as UTF-8 bytes, where unpaired
  // surrogates would collapse into one value.
  apiKey: z
    .string()
    .regex(
      /^[\x21-\x2d\x2f-\x7e]+\.[\x21-\x7e]+$/,
      'apiKey must look like pk_….sk_… (printable ASCII, no spaces)',
    )
    .max(200)
    .optional(),
  policyPath: z.string().trim().min(1).optional(),
  sandbox: z.boolean().optional(),
  sweepIntervalMs: z.number().int().min(10).max(3_600_000).optional(),
})

function hostForUrl(host: string): string {
  if (host === '0.0.0.0' || host === '::' || host === '') return '127.0.0.1'
  return host.includes(':') ? `[${host}]` : host
}

/**
 * Starts the local decision service and resolves once it is listening.
 *
 * @example
 * const server = await createPusharyDevServer({ dbPath: '/tmp/pushary.db' })
 * const client = createPusharyClient({ apiKey: server.apiKey, baseUrl: server.baseUrl })
 * await server.close()
 */
export async function createPusharyDevServer(
  options: PusharyDevServerOptions = {},
): Promise<PusharyDevServer> {
  const checked = optionsSchema.safeParse({
    host: options.host,
    port: options.port,
    dbPath: options.dbPath,
    publicUrl: options.publicUrl,
    apiKey: options.apiKey,
    policyPath: options.policyPath,
    sandbox: options.sandbox,
    sweepIntervalMs: options.sweepIntervalMs,
  })
  if (!checked.success) {
    const first = checked.error.issues[0]
    throw new PusharyDevServerError({
      code: 'invalid_option',
      field: first?.path.map(String).join('.') ?? '',
      message: first?.message ?? 'invalid option',
      issues: checked.error.issues.map((issue) => ({ path: [...issue.path], message: issue.message })),
      cause: checked.error,
    })
  }
  for (const mount of options.mounts ?? []) {
    if (
      !/^(\/[A-Za-z0-9._~-]+)+$/.test(mount.path) ||
      // The service's own paths: the API, the reviewer page, enrolment and approval links.
      ['/api', '/review', '/e', '/a'].some((own) => mount.path === own || mount.path.startsWith(`${own}/`))
    ) {
      throw new PusharyDevServerError({
        code: 'invalid_option',
        field: 'mounts.path',
        message: `cannot mount at "${mount.path}"`,
      })
    }
  }
  const host = checked.data.host ?? '127.0.0.1'
  const dbPath = checked.data.dbPath ?? DEFAULT_DB_PATH
  const now = options.now ?? Date.now
  const onError = options.onError ?? ((error: unknown) => console.error('Pushary dev server:', error))
  const policy: PolicyFile =
    checked.data.policyPath === undefined ? { rules: [] } : await loadPolicyFile(checked.data.policyPath)

  const limits = resolveLimits(options.limits)
  const db = await openServiceDatabase(dbPath)
  const storedKey =
    checked.data.apiKey === undefined ? await ensureSetting(db, 'api_key', generateDevApiKey) : null
  const apiKey = checked.data.apiKey ?? storedKey?.value ?? ''
  const newSecret = () => `whsec_${randomBytes(24).toString('hex')}`
  const storedSecret = await ensureSetting(db, 'webhook_secret', newSecret)
  let webhookSecret = storedSecret.value

  const events = createDecisionEvents()
  const checkCallbackUrl = createCallbackAddressCheck(options.callbackAddresses)
  const outbox = createCallbackOutbox({
    db,
    checkUrl: checkCallbackUrl,
    fetch: options.fetch ?? fetch,
    webhookSecret: async () => webhookSecret,
    now,
    ...(options.callbackRetry ? { retry: options.callbackRetry } : {}),
    onError,
  })

  // The public URL depends on the bound port, so the app is built after listening;
  // requests cannot arrive before `listen` resolves anyway.
  let handler: Hono | null = null
  const server = serve({
    fetch: (request, env) =>
      handler === null ? new Response('starting', { status: 503 }) : handler.fetch(request, env),
    port: checked.data.port ?? 0,
    hostname: host,
    // Half-sent requests are cut after the header/request timeouts; Node only
    // checks them every `connectionsCheckingInterval`, 30 s by default.
    serverOptions: {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(limits.headersTimeoutMs / 4))),
    },
  })
  // Below the usual 1,024 open-file limit, so the database and outgoing
  // callbacks always find a descriptor.
  server.maxConnections = limits.maxConnections
  limitConnectionsPerClient(server as unknown as Parameters<typeof limitConnectionsPerClient>[0], limits)
  try {
    await new Promise<void>((resolve, reject) => {
      if (server.listening) return resolve()
      server.once('listening', () => resolve())
      server.once('error', reject)
    })
  } catch (cause) {
    await outbox.close()
    db.close()
    throw new PusharyDevServerError({
      code: 'listen_failed',
      field: 'port',
      message: `cannot listen on ${host}:${checked.data.port ?? 0}`,
      cause,
    })
  }
  const port = (server.address() as AddressInfo).port
  const url = `http://${hostForUrl(host)}:${port}`
  const publicUrl = (checked.data.publicUrl ?? url).replace(/\/+$/, '')

  const service = createDecisionService({
    db,
    events,
    outbox,
    now,
    publicUrl,
    sandbox: checked.data.sandbox ?? false,
    onError,
  })
  const approvalLinks = createApprovalLinks(db, publicUrl, now)
  const app = new Hono()
  app.use(
    '*',
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: (c) =>
        c.json(
          apiErrorBody('payload_too_large', `Request bodies are limited to ${MAX_BODY_BYTES} bytes.`),
          413,
        ),
    }),
  )
  app.route(
    '/api/v1/server',
    createApiRoutes({
      service,
      outbox,
      events,
      policy,
      publicUrl,
      now,
      apiKey: () => apiKey,
      longPolls: createLongPollBudget(limits),
      checkCallbackUrl,
      webhookSecret: {
        get: async () => webhookSecret,
        async rotate() {
          const next = newSecret()
          await writeSetting(db, 'webhook_secret', next)
          webhookSecret = next
          return next
        },
      },
      keys: createBoundKeys(db, now),
      permits: createPermitService({ db, getDecision: (id) => service.get(id), now }),
      approvalLinks,
      ...(options.onEnrollmentLink ? { onEnrollmentLink: options.onEnrollmentLink } : {}),
    }),
  )
  app.route('/', createApprovalLinkApp(approvalLinks, service.reviewerDeps))
  app.route(
    '/',
    createReviewerApp(service.reviewerDeps, { streams: createSlotLimiter(limits.maxStreamsPerDevice) }),
  )
  for (const mount of options.mounts ?? []) {
    app.all(mount.path, (c) => mount.fetch(c.req.raw))
    app.all(`${mount.path}/*`, (c) => mount.fetch(c.req.raw))
  }
  app.get('/', (c) => c.redirect('/review'))
  app.notFound((c) => c.json(apiErrorBody('not_found', `No route ${c.req.method} ${c.req.path}.`), 404))
  app.onError((error, c) => {
    // Bad input is answered by the routes; reaching here is a bug, never the caller's fault.
    onError(error)
    return c.json(apiErrorBody('internal_error', 'The dev server hit an internal error.'), 500)
  })
  handler = app

  await service.resumeSandbox().catch(onError)
  const sweeper = startExpirySweeper({
    sweep: () => service.sweep(),
    intervalMs: checked.data.sweepIntervalMs ?? 1_000,
    onError,
  })

  let closing: Promise<void> | null = null
  const close = async (): Promise<void> => {
    // Release long-polls first so their responses go out before connections are cut.
    events.close()
    service.close()
    await new Promise<void>((resolve) => {
      server.close(() => resolve())
      if ('closeIdleConnections' in server) server.closeIdleConnections()
      // Streams (the reviewer page's live updates) never end by themselves.
      const force = setTimeout(() => {
        if ('closeAllConnections' in server) server.closeAllConnections()
      }, 200)
      force.unref()
    })
    await sweeper.stop()
    await outbox.close()
    db.close()
  }

  return {
    url,
    baseUrl: `${url}/api/v1/server`,
    publicUrl,
    apiKey,
    get webhookSecret() {
      return webhookSecret
    },
    created: { apiKey: storedKey?.created ?? false, webhookSecret: storedSecret.created },
    dbPath,
    close() {
      closing ??= close()
      return closing
    },
  }
}
