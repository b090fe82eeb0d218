/**
 * The local decision service for one test file: the package's own
 * `createPusharyDevServer` on a free loopback port and a SQLite file in a
 * fresh temporary directory, a client for it, and simulated phones.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  createPusharyClient,
  createPusharyDevServer,
  type PusharyClient,
  type PusharyDevServer,
  type PusharyDevServerOptions,
} from '@pushary/mastra'
import { linkSimulatedPhone, type SimulatedPhone } from './simulated-phone.js'
import { PusharyTestingError } from './testing-error.js'

/**
 * Options of {@link startPusharyTestService}: the dev server's options
 * except where it binds and stores (always loopback, port 0, a temp file),
 * plus `dir`.
 *
 * @example
 * const service = await startPusharyTestService({ sandbox: true, sweepIntervalMs: 100 })
 */
export interface PusharyTestServiceOptions
  extends Omit<PusharyDevServerOptions, 'host' | 'port' | 'dbPath' | 'publicUrl'> {
  /** Directory for the service's SQLite file; default a new temporary directory, removed by `close`. */
  dir?: string
}

/**
 * A running test service. Pass `client` to the code under test (or
 * `baseUrl` and `apiKey` to a process you start), and answer with a phone.
 *
 * @example
 * const service = await startPusharyTestService()
 * const phone = await service.phone('customer_1')
 * await service.close()
 */
export interface PusharyTestService {
  /** `http://127.0.0.1:PORT`: the reviewer page's origin. */
  readonly url: string
  /** The client's `baseUrl` (`url + '/api/v1/server'`). */
  readonly baseUrl: string
  readonly apiKey: string
  /** The secret callbacks are signed with: the dispatcher's `webhookSecret`. */
  readonly webhookSecret: string
  /** The service's SQLite file. */
  readonly dbPath: string
  /** A client of this service. */
  readonly client: PusharyClient
  /** The underlying dev server. */
  readonly server: PusharyDevServer
  /** Links a new simulated phone to `externalId` (tapping an enrollment link). */
  phone(externalId: string): Promise<SimulatedPhone>
  /** Stops the service and removes the temporary directory it created. */
  close(): Promise<void>
}

/**
 * Starts the local decision service for a test: port 0 on 127.0.0.1, a
 * SQLite file in a fresh temporary directory, loopback callback URLs
 * allowed (the test's own callback server), expiries swept every 100 ms.
 *
 * @example
 * let service: PusharyTestService
 * beforeAll(async () => { service = await startPusharyTestService() })
 * afterAll(() => service.close())
 */
export async function startPusharyTestService(
  options: PusharyTestServiceOptions = {},
): Promise<PusharyTestService> {
  const { dir: givenDir, ...serverOptions } = options
  if (givenDir !== undefined && (typeof givenDir !== 'string' || givenDir.trim() === '')) {
    throw new PusharyTestingError({
      code: 'invalid_input',
      operation: 'startPusharyTestService',
      field: 'dir',
      message: 'dir must be a non-empty path',
    })
  }
  const dir = givenDir ?? (await mkdtemp(join(tmpdir(), 'pushary-test-service-')))
  const removeDir = async () => {
    if (givenDir === undefined) await rm(dir, { recursive: true, force: true })
  }
  let server: PusharyDevServer
  try {
    server = await createPusharyDevServer({
      callbackAddresses: { allowLoopback: true },
      sweepIntervalMs: 100,
      ...serverOptions,
      host: '127.0.0.1',
      port: 0,
      dbPath: join(dir, 'pushary-service.db'),
    })
  } catch (error) {
    await removeDir()
    throw error
  }
  const client = createPusharyClient({ baseUrl: server.baseUrl, apiKey: server.apiKey })
  let closing: Promise<void> | null = null
  return {
    url: server.url,
    baseUrl: server.baseUrl,
    apiKey: server.apiKey,
    get webhookSecret() {
      return server.webhookSecret
    },
    dbPath: server.dbPath,
    client,
    server,
    phone: (externalId) => linkSimulatedPhone(client, externalId),
    close() {
      closing ??= server.close().then(removeDir)
      return closing
    },
  }
}
