/**
 * Real collaborators for workflow tests: the local decision service over
 * loopback HTTP on a SQLite file, a client, and a scratch directory that the
 * per-process apps (`test/workflows/fixtures/app.ts`) share: Mastra's LibSQL
 * file, the review store file and a side-effect table.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createClient } from '@libsql/client'
import { createPusharyClient, type PusharyClient } from '../../src/pushary/client.js'
import { createPusharyDevServer, type PusharyDevServer } from '../../src/server/dev-server.js'
import { nodeScript } from './node-script.js'

/** What a child process needs to reach the same service and files. */
export interface TestEnvFile {
  dir: string
  baseUrl: string
  apiKey: string
  webhookSecret: string
  callbackUrl?: string
}

export interface TestEnv extends TestEnvFile {
  server: PusharyDevServer
  client: PusharyClient
  close(): Promise<void>
}

/**
 * Starts the decision service on a fresh temp dir and writes `env.json` there.
 *
 * @example
 * const env = await createTestEnv('foreach')
 */
export async function createTestEnv(
  name: string,
  options: { sweepIntervalMs?: number; sandbox?: boolean; callbackDelayMs?: number } = {},
): Promise<TestEnv> {
  const dir = mkdtempSync(join(tmpdir(), `pushary-${name}-`))
  const server = await createPusharyDevServer({
    callbackAddresses: { allowLoopback: true },
    dbPath: join(dir, 'service.db'),
    port: 0,
    sweepIntervalMs: options.sweepIntervalMs ?? 200,
    sandbox: options.sandbox ?? false,
    callbackRetry: { baseDelayMs: options.callbackDelayMs ?? 100, maxDelayMs: 1000, maxAttempts: 8 },
    onError: () => {},
  })
  const client = createPusharyClient({ baseUrl: server.baseUrl, apiKey: server.apiKey })
  const file: TestEnvFile = {
    dir,
    baseUrl: server.baseUrl,
    apiKey: server.apiKey,
    webhookSecret: server.webhookSecret,
  }
  writeEnvFile(file)
  return { ...file, server, client, close: () => server.close() }
}

export function writeEnvFile(file: TestEnvFile): void {
  writeFileSync(join(file.dir, 'env.json'), JSON.stringify(file))
}

export function readEnvFile(dir: string): TestEnvFile {
  return JSON.parse(readFileSync(join(dir, 'env.json'), 'utf8')) as TestEnvFile
}

/**
 * Rows of the protected side-effect table, counted across processes.
 *
 * @example
 * expect(await countEffects(env.dir, 'refund')).toBe(1)
 */
export async function countEffects(dir: string, kind?: string): Promise<number> {
  const db = createClient({ url: `file:${join(dir, 'effects.db')}` })
  try {
    await db.execute(
      'CREATE TABLE IF NOT EXISTS effects (kind TEXT NOT NULL, key TEXT NOT NULL, at TEXT NOT NULL)',
    )
    const rows =
      kind === undefined
        ? await db.execute('SELECT COUNT(*) AS n FROM effects')
        : await db.execute({ sql: 'SELECT COUNT(*) AS n FROM effects WHERE kind = ?', args: [kind] })
    return Number(rows.rows[0]?.n ?? 0)
  } finally {
    db.close()
  }
}

/** Keys of the side effects, in insertion order. */
export async function listEffects(dir: string): Promise<{ kind: string; key: string }[]> {
  const db = createClient({ url: `file:${join(dir, 'effects.db')}` })
  try {
    await db.execute(
      'CREATE TABLE IF NOT EXISTS effects (kind TEXT NOT NULL, key TEXT NOT NULL, at TEXT NOT NULL)',
    )
    const rows = await db.execute('SELECT kind, key FROM effects ORDER BY rowid')
    return rows.rows.map((row) => ({ kind: String(row.kind), key: String(row.key) }))
  } finally {
    db.close()
  }
}

/**
 * Runs `test/workflows/fixtures/run.ts <args>` as its own process (see
 * node-script.ts) and parses
 * the last stdout line as JSON.
 *
 * @example
 * const started = await runFixture(['start-single', env.dir, JSON.stringify(input)])
 */
export function runFixture<T = unknown>(
  args: readonly string[],
  options: { timeoutMs?: number; env?: Record<string, string>; script?: string } = {},
): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [...nodeScript(options.script ?? 'test/workflows/fixtures/run.ts'), ...args],
      {
        cwd: process.cwd(),
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, ...options.env },
      },
    )
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => {
      stdout += chunk
    })
    child.stderr.on('data', (chunk) => {
      stderr += chunk
    })
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      if (code !== 0) {
        reject(new Error(`fixture ${args[0]} exited with ${code ?? signal}: ${stderr.slice(-2000)}`))
        return
      }
      const line = stdout.trim().split('\n').at(-1) ?? ''
      try {
        resolve(JSON.parse(line) as T)
      } catch {
        reject(new Error(`fixture ${args[0]} printed no JSON: ${stdout.slice(-2000)} ${stderr.slice(-2000)}`))
      }
    })
  })
}

/**
 * A loopback HTTP server that hands every request to `handle` as a Fetch
 * `Request`, used as the decision service's callback URL.
 *
 * @example
 * const callbacks = await startFetchServer((request) => dispatcher.handleCallback(request))
 */
export async function startFetchServer(
  handle: (request: Request) => Promise<Response>,
): Promise<{ url: string; server: Server; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const headers = new Headers()
      for (const [key, value] of Object.entries(req.headers)) {
        if (typeof value === 'string') headers.set(key, value)
      }
      const request = new Request(`http://127.0.0.1${req.url ?? '/'}`, {
        method: req.method ?? 'POST',
        headers,
        ...(req.method === 'GET' || req.method === 'HEAD' ? {} : { body: Buffer.concat(chunks) }),
      })
      handle(request)
        .then(async (response) => {
          res.writeHead(response.status, {
            'content-type': response.headers.get('content-type') ?? 'text/plain',
          })
          res.end(await response.text())
        })
        .catch((error: unknown) => {
          res.writeHead(500)
          res.end(String(error))
        })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : 0
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}

/** Polls `check` until it returns a non-undefined value or the time runs out. */
export async function waitFor<T>(
  check: () => Promise<T | undefined>,
  timeoutMs = 20_000,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error('waitFor timed out')
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
}
