/**
 * The package's entry to the local decision service. Hono, its Node adapter
 * and the service modules load on the first call: most applications talk to
 * the hosted API and should not pay for a server at import time.
 */
import type { PusharyDevServer, PusharyDevServerOptions } from './dev-server.js'

/**
 * Starts the local decision service and resolves once it is listening. Bad
 * options reject with a `PusharyDevServerError` naming the field, before
 * anything is opened or bound.
 *
 * @example
 * const server = await createPusharyDevServer({ dbPath: '/tmp/pushary.db', port: 0 })
 * const client = createPusharyClient({ apiKey: server.apiKey, baseUrl: server.baseUrl })
 * await server.close()
 */
export async function createPusharyDevServer(
  options: PusharyDevServerOptions = {},
): Promise<PusharyDevServer> {
  const { createPusharyDevServer: start } = await import('./dev-server.js')
  return start(options)
}
