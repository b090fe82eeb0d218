/**
 * The callback endpoint for servers built on `node:http` (plain Node, Express,
 * Connect): a Node request becomes a Fetch `Request`, goes to the same Fetch
 * handler as everywhere else (`dispatcher.handleCallback`), and its `Response`
 * is written back. Nothing is verified here: the handler caps the body,
 * checks the signature and parses, exactly as it does for a Fetch server.
 *
 * The one thing only this layer can know is whether the raw bytes still
 * exist. The signature is an HMAC of the exact body, so a body that a JSON
 * parser already consumed can never be verified; that is refused with a typed
 * error naming the fix, instead of a 401 that would read as a forgery.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { PusharyError, PusharyValidationError } from './errors.js'

/**
 * A Fetch handler for the callback route, such as `dispatcher.handleCallback`.
 *
 * @example
 * const handler: PusharyFetchHandler = (request) => dispatcher.handleCallback(request)
 */
export type PusharyFetchHandler = (request: Request) => Promise<Response>

/**
 * The Node request the adapters accept: a plain `IncomingMessage`, or one a
 * framework decorated (`body` from a body parser, Express's `originalUrl`).
 *
 * @example
 * const listener = (req: PusharyNodeRequest, res: ServerResponse) => callback(req, res)
 */
export type PusharyNodeRequest = IncomingMessage & { body?: unknown; originalUrl?: string }

/**
 * The callback's raw body was read and parsed by other middleware before the
 * adapter ran (`req.body` is an object), so the bytes the signature covers are
 * gone. Configuration, not a forgery: mount `express.raw({ type: '*\/*' })`
 * on the callback route, or register the route before any JSON parser.
 *
 * @example
 * app.use((error, req, res, next) => {
 *   if (error instanceof PusharyRawBodyError) logger.error(error.message)
 *   next(error)
 * })
 */
export class PusharyRawBodyError extends PusharyError {
  override name = 'PusharyRawBodyError'
  declare readonly code: 'raw_body_unavailable'
  readonly operation: string
  readonly field = 'req.body'

  constructor(operation: string, found: string) {
    super(
      'raw_body_unavailable',
      `Pushary ${operation}: the callback body was already read and parsed by another middleware (req.body is ${found}), and the signature covers the raw bytes; mount express.raw({ type: '*/*' }) on this route (app.post(path, express.raw({ type: '*/*' }), handler)) or register the route before express.json() (field "req.body")`,
    )
    this.operation = operation
  }
}

/**
 * True for a {@link PusharyRawBodyError}.
 *
 * @example
 * if (isPusharyRawBodyError(error)) console.error(error.field) // 'req.body'
 */
export function isPusharyRawBodyError(value: unknown): value is PusharyRawBodyError {
  return value instanceof PusharyRawBodyError
}

/**
 * Serves the callback with `node:http` (or any server handing out Node's
 * `req`/`res`). Never rejects: a handler that throws gets a 500
 * `callback_handler_failed`, a consumed body a 500 `raw_body_unavailable`, so
 * the sender retries and nothing is approved.
 *
 * @example
 * createServer(pusharyNodeCallback(dispatcher.handleCallback)).listen(3000)
 */
export function pusharyNodeCallback(
  handler: PusharyFetchHandler,
): (req: PusharyNodeRequest, res: ServerResponse) => Promise<void> {
  const handle = checkedHandler(handler, 'pusharyNodeCallback')
  return async (req, res) => {
    const failure = await serve(handle, req, res, 'pusharyNodeCallback')
    if (failure === undefined) return
    if (res.headersSent) {
      res.destroy()
      return
    }
    const body = isPusharyRawBodyError(failure.error)
      ? { error: 'raw_body_unavailable', message: failure.error.message }
      : { error: 'callback_handler_failed' }
    res.writeHead(500, { 'content-type': 'application/json', connection: 'close' })
    res.end(JSON.stringify(body))
  }
}

/**
 * Serves the callback as an Express (4 or 5) route handler. The body may be
 * unread, or read raw by `express.raw()` / `express.text()` (a Buffer or a
 * string); a body `express.json()` already parsed is passed to `next` as a
 * {@link PusharyRawBodyError}, as is anything the handler throws.
 *
 * @example
 * app.post('/pushary/callback', pusharyExpressCallback(dispatcher.handleCallback))
 */
export function pusharyExpressCallback(
  handler: PusharyFetchHandler,
): (req: PusharyNodeRequest, res: ServerResponse, next: (error?: unknown) => void) => Promise<void> {
  const handle = checkedHandler(handler, 'pusharyExpressCallback')
  return async (req, res, next) => {
    const failure = await serve(handle, req, res, 'pusharyExpressCallback')
    if (failure !== undefined) next(failure.error)
  }
}

function checkedHandler(handler: unknown, operation: string): PusharyFetchHandler {
  if (typeof handler !== 'function') {
    throw new PusharyValidationError({
      code: 'invalid_options',
      operation,
      field: 'handler',
      message: 'pass the Fetch handler, e.g. dispatcher.handleCallback',
    })
  }
  return handler as PusharyFetchHandler
}

/** Runs one request through the handler; resolves with the failure instead of throwing. */
async function serve(
  handle: PusharyFetchHandler,
  req: PusharyNodeRequest,
  res: ServerResponse,
  operation: string,
): Promise<{ error: unknown } | undefined> {
  let response: Response
  let unread: IncomingMessage | undefined
  try {
    const source = bodySource(req)
    if (source.kind === 'gone') return { error: new PusharyRawBodyError(operation, source.found) }
    if (source.kind === 'stream') unread = req
    response = await handle(toFetchRequest(req, source))
  } catch (error) {
    return { error }
  }
  // The handler may have stopped reading early (a body over the cap): close
  // the connection after answering, so Node does not drain the rest of an
  // attacker-sized body to keep the socket alive.
  const closeAfter = unread !== undefined && !unread.readableEnded
  try {
    await send(response, res, closeAfter)
  } catch (error) {
    return { error }
  }
  return undefined
}

type BodySource =
  | { kind: 'none' }
  | { kind: 'bytes'; bytes: Uint8Array<ArrayBuffer> }
  | { kind: 'stream' }
  | { kind: 'gone'; found: string }

function bodySource(req: PusharyNodeRequest): BodySource {
  if (req.method === 'GET' || req.method === 'HEAD') return { kind: 'none' }
  const { body } = req
  // express.raw() leaves a Buffer, express.text() a string: still the raw text.
  if (body instanceof Uint8Array) return { kind: 'bytes', bytes: new Uint8Array(body) }
  if (typeof body === 'string') return { kind: 'bytes', bytes: new TextEncoder().encode(body) }
  // body-parser 1.x sets `req.body = {}` even when its type did not match
  // and it left the stream alone: only a stream somebody read is lost.
  if (!req.readableDidRead && !req.readableEnded) return { kind: 'stream' }
  return { kind: 'gone', found: body === undefined ? 'undefined' : body === null ? 'null' : typeof body }
}

function toFetchRequest(req: PusharyNodeRequest, source: Exclude<BodySource, { kind: 'gone' }>): Request {
  const headers = new Headers()
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!
    if (name.startsWith(':')) continue // HTTP/2 pseudo-headers are not headers
    headers.append(name, req.rawHeaders[i + 1]!)
  }
  const init: RequestInit & { duplex?: 'half' } = { method: req.method ?? 'POST', headers }
  if (source.kind === 'bytes') {
    // These bytes are the decoded body (express.raw() inflates gzip): the
    // wire's length and encoding no longer describe them.
    headers.delete('content-encoding')
    headers.delete('transfer-encoding')
    headers.set('content-length', String(source.bytes.byteLength))
    init.body = source.bytes
  } else if (source.kind === 'stream') {
    init.body = streamOf(req)
    init.duplex = 'half'
  }
  return new Request(requestUrl(req), init)
}

function requestUrl(req: PusharyNodeRequest): string {
  const secure = (req.socket as { encrypted?: boolean } | null)?.encrypted === true
  const raw = req.originalUrl ?? req.url ?? '/'
  const path = raw.startsWith('/') ? raw : `/${raw}`
  for (const host of [req.headers.host, 'localhost']) {
    try {
      return new URL(`${secure ? 'https' : 'http'}://${host}${path}`).href
    } catch {
      // an unparseable Host header: the handler does not route by host
    }
  }
  return `${secure ? 'https' : 'http'}://localhost/`
}

/**
 * The request body as a pull-based stream: Node reads the socket only while
 * the handler reads, so a handler that stops at its cap stops the reading too
 * (cancel pauses the request instead of destroying the socket, which would
 * lose the 413 answer).
 */
function streamOf(req: IncomingMessage): ReadableStream<Uint8Array> {
  let detach = () => {}
  return new ReadableStream<Uint8Array>({
    start(controller) {
      const onData = (chunk: Buffer | string) => {
        const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk
        controller.enqueue(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength))
        if ((controller.desiredSize ?? 0) <= 0) req.pause()
      }
      const onEnd = () => {
        detach()
        controller.close()
      }
      const onError = (error: unknown) => {
        detach()
        controller.error(error)
      }
      const onClose = () => onError(new Error('the callback request closed before its body ended'))
      detach = () => {
        req.off('data', onData)
        req.off('end', onEnd)
        req.off('error', onError)
        req.off('close', onClose)
      }
      req.on('data', onData)
      req.on('end', onEnd)
      req.on('error', onError)
      req.on('close', onClose)
    },
    pull() {
      req.resume()
    },
    cancel() {
      detach()
      req.pause()
    },
  })
}

/**
 * Writes the Fetch response. A callback answer is a few hundred bytes of
 * JSON, so it is buffered whole rather than streamed.
 */
async function send(response: Response, res: ServerResponse, closeAfter: boolean): Promise<void> {
  const body = response.body === null ? null : Buffer.from(await response.arrayBuffer())
  res.statusCode = response.status
  if (response.statusText !== '') res.statusMessage = response.statusText
  response.headers.forEach((value, name) => {
    if (name === 'set-cookie' || name === 'content-length' || name === 'transfer-encoding') return
    res.setHeader(name, value)
  })
  const cookies = response.headers.getSetCookie()
  if (cookies.length > 0) res.setHeader('set-cookie', cookies)
  if (closeAfter) res.setHeader('connection', 'close')
  res.end(body ?? undefined)
}
