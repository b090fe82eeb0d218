/**
 * Limits that keep one client from starving the others: socket timeouts and a
 * connection cap for the HTTP server, and counted slots for the requests that
 * hold a connection open on purpose (long-polls per API key and per bound
 * customer, event streams per device).
 */

/**
 * Tunable limits of the local decision service. The defaults suit one
 * developer machine with the usual 1,024 open-file limit.
 *
 * @example
 * await createPusharyDevServer({ limits: { maxConnections: 128, maxStreamsPerDevice: 2 } })
 */
export interface PusharyDevServerLimits {
  /** Open sockets at once; further connections are closed on accept. Default 512. */
  maxConnections?: number
  /**
   * Open sockets at once from one client address; further ones are closed on
   * accept. Default three quarters of `maxConnections` (384), so one client
   * can never hold every slot.
   */
  maxConnectionsPerClient?: number
  /**
   * Sockets from one client address that are still without complete request
   * headers `slowAfterMs` after they connected (the slowloris shape); a socket
   * that becomes slow over this share is closed, and new ones are closed on
   * accept while the share is full. A burst of prompt requests never counts.
   * Default a quarter of `maxConnections`, at most 32.
   */
  maxSlowPerClient?: number
  /** How long a socket may take to send its request headers before it counts as slow. Default 1 000 ms (at most `headersTimeoutMs`). */
  slowAfterMs?: number
  /** Time a client has to send the request headers. Default 10 000 ms. */
  headersTimeoutMs?: number
  /** Time a client has to send the whole request (not the response, so long-polls are unaffected). Default 30 000 ms. */
  requestTimeoutMs?: number
  /** Idle keep-alive sockets are closed after this. Default 5 000 ms. */
  keepAliveTimeoutMs?: number
  /**
   * Long-polls (`GET /decisions/:id?wait=`, and creates with `wait: true`)
   * held at once per API key; more get 429. The site key and each bound key
   * have their own budget. Default 256.
   */
  maxLongPollsPerKey?: number
  /** Long-polls held at once by all the bound keys of one customer; more get 429. Default `maxLongPollsPerKey`. */
  maxLongPollsPerCustomer?: number
  /** Reviewer event streams open at once per device; more get 429. Default 4. */
  maxStreamsPerDevice?: number
}

/** {@link PusharyDevServerLimits} with every default applied. */
export type ResolvedLimits = Required<PusharyDevServerLimits>

/**
 * Applies defaults (and keeps the request timeout at least the header timeout, as Node requires).
 *
 * @example
 * const limits = resolveLimits({ headersTimeoutMs: 2_000 })
 */
export function resolveLimits(limits: PusharyDevServerLimits = {}): ResolvedLimits {
  const headersTimeoutMs = limits.headersTimeoutMs ?? 10_000
  const maxConnections = limits.maxConnections ?? 512
  return {
    maxConnections,
    maxConnectionsPerClient:
      limits.maxConnectionsPerClient ?? Math.max(1, Math.floor((maxConnections * 3) / 4)),
    maxSlowPerClient: limits.maxSlowPerClient ?? Math.max(1, Math.min(32, Math.floor(maxConnections / 4))),
    slowAfterMs: Math.min(headersTimeoutMs, limits.slowAfterMs ?? 1_000),
    headersTimeoutMs,
    requestTimeoutMs: Math.max(headersTimeoutMs, limits.requestTimeoutMs ?? 30_000),
    keepAliveTimeoutMs: limits.keepAliveTimeoutMs ?? 5_000,
    maxLongPollsPerKey: limits.maxLongPollsPerKey ?? 256,
    maxLongPollsPerCustomer: limits.maxLongPollsPerCustomer ?? limits.maxLongPollsPerKey ?? 256,
    maxStreamsPerDevice: limits.maxStreamsPerDevice ?? 4,
  }
}

/**
 * Counted slots per key. `acquire` returns a release function, or null when
 * the key already holds `max` slots.
 *
 * @example
 * const release = streams.acquire(deviceId)
 * if (release === null) return c.text('too many streams', 429)
 */
export interface SlotLimiter {
  acquire(key: string): (() => void) | null
  /** Slots currently held by `key`. */
  held(key: string): number
}

/**
 * Creates a {@link SlotLimiter} allowing `max` concurrent holders per key.
 *
 * @example
 * const longPolls = createSlotLimiter(256)
 */
export function createSlotLimiter(max: number): SlotLimiter {
  const counts = new Map<string, number>()
  return {
    acquire(key) {
      const current = counts.get(key) ?? 0
      if (current >= max) return null
      counts.set(key, current + 1)
      let released = false
      return () => {
        if (released) return
        released = true
        const left = (counts.get(key) ?? 1) - 1
        if (left <= 0) counts.delete(key)
        else counts.set(key, left)
      }
    },
    held: (key) => counts.get(key) ?? 0,
  }
}

/**
 * Long-poll slots of the API: each key (the site key, each bound key) has
 * its own budget, and the bound keys of one customer share one more, so a
 * key holding all of its long-polls never makes another key (or another
 * customer's) get 429.
 *
 * @example
 * const release = budget.acquire(principalOf(c), boundExternalIdOf(c))
 * if (release === null) return tooManyWaits(c)
 */
export interface LongPollBudget {
  /** A release function, or null when the key or its customer is at its cap. `customer` is null for the site key. */
  acquire(principal: string, customer: string | null): (() => void) | null
}

/**
 * Creates the {@link LongPollBudget} of one service.
 *
 * @example
 * const longPolls = createLongPollBudget(resolveLimits())
 */
export function createLongPollBudget(
  limits: Pick<ResolvedLimits, 'maxLongPollsPerKey' | 'maxLongPollsPerCustomer'>,
): LongPollBudget {
  const perKey = createSlotLimiter(limits.maxLongPollsPerKey)
  const perCustomer = createSlotLimiter(limits.maxLongPollsPerCustomer)
  return {
    acquire(principal, customer) {
      const releaseKey = perKey.acquire(principal)
      if (releaseKey === null || customer === null) return releaseKey
      const releaseCustomer = perCustomer.acquire(customer)
      if (releaseCustomer === null) {
        releaseKey()
        return null
      }
      return () => {
        releaseCustomer()
        releaseKey()
      }
    },
  }
}

/** What {@link limitConnectionsPerClient} needs of a Node server. */
interface ConnectionSource {
  on(event: 'connection', listener: (socket: import('node:net').Socket) => void): unknown
  on(event: 'request', listener: (request: { socket: import('node:net').Socket }) => void): unknown
}

// `::ffff:10.0.0.5` and `10.0.0.5` are the same client.
function clientOf(socket: import('node:net').Socket): string {
  const address = socket.remoteAddress ?? ''
  return address.startsWith('::ffff:') ? address.slice(7) : address
}

/**
 * Caps what one client address may hold: open sockets, and sockets that are
 * still without their request headers a moment after they connected (the
 * slowloris shape). The server-wide cap alone lets one client fill every slot
 * with half-open sockets until the header timeout cuts them; with this, the
 * sockets over a client's share are closed and everyone else still gets in.
 * A socket counts as slow only after `slowAfterMs`, so a client opening many
 * connections at once for prompt requests (a batch of creates, many
 * long-polls) is never refused for it.
 *
 * @example
 * limitConnectionsPerClient(server, resolveLimits())
 */
export function limitConnectionsPerClient(
  server: ConnectionSource,
  limits: Pick<ResolvedLimits, 'maxConnectionsPerClient' | 'maxSlowPerClient' | 'slowAfterMs'>,
): void {
  const open = new Map<string, number>()
  const slow = new Map<string, number>()
  // Sockets still without headers: the timer that marks them slow, and whether it has.
  const waiting = new WeakMap<import('node:net').Socket, { timer: NodeJS.Timeout; slow: boolean }>()
  const add = (map: Map<string, number>, key: string, by: number) => {
    const next = (map.get(key) ?? 0) + by
    if (next <= 0) map.delete(key)
    else map.set(key, next)
  }
  const settle = (socket: import('node:net').Socket, client: string) => {
    const entry = waiting.get(socket)
    if (!entry) return
    waiting.delete(socket)
    clearTimeout(entry.timer)
    if (entry.slow) add(slow, client, -1)
  }
  server.on('connection', (socket) => {
    const client = clientOf(socket)
    if (
      (open.get(client) ?? 0) >= limits.maxConnectionsPerClient ||
      (slow.get(client) ?? 0) >= limits.maxSlowPerClient
    ) {
      socket.destroy()
      return
    }
    add(open, client, 1)
    const entry = {
      slow: false,
      timer: setTimeout(() => {
        if ((slow.get(client) ?? 0) >= limits.maxSlowPerClient) {
          socket.destroy()
          return
        }
        entry.slow = true
        add(slow, client, 1)
      }, limits.slowAfterMs),
    }
    entry.timer.unref()
    waiting.set(socket, entry)
    socket.once('close', () => {
      add(open, client, -1)
      settle(socket, client)
    })
  })
  // Headers complete: the socket is no longer a slow one (a keep-alive
  // socket's later requests are bounded by the keep-alive timeout).
  server.on('request', (request) => settle(request.socket, clientOf(request.socket)))
}
