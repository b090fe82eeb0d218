/**
 * PostgreSQL for the store tests. The team's server runs on 127.0.0.1:5432
 * (trust auth, database `test`). When nothing answers there, the tests start
 * a server themselves from the Debian package rather than skip: first the
 * packaged cluster, else a throwaway cluster in a temp directory.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'

export interface TestPostgres {
  readonly connectionString: string
  /** Stops a server these helpers started; a no-op for the shared one. */
  stop(): Promise<void>
}

async function reachable(connectionString: string): Promise<boolean> {
  const client = new pg.Client({ connectionString, connectionTimeoutMillis: 2000 })
  try {
    await client.connect()
    await client.query('SELECT 1')
    return true
  } catch {
    return false
  } finally {
    await client.end().catch(() => undefined)
  }
}

async function ensureDatabase(host: string, port: number, database: string): Promise<void> {
  const admin = new pg.Client({ host, port, user: 'postgres', database: 'postgres' })
  await admin.connect()
  try {
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [database])
    if (exists.rowCount === 0) {
      await admin.query(`CREATE DATABASE "${database}"`).catch((error: { code?: string }) => {
        if (error.code !== '42P04') throw error // created concurrently by another test file
      })
    }
  } finally {
    await admin.end()
  }
}

async function waitFor(connectionString: string, seconds: number): Promise<boolean> {
  for (let i = 0; i < seconds * 4; i += 1) {
    if (await reachable(connectionString)) return true
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  return false
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      )
    })
  })
}

function debianBin(): string | null {
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return null
  const version = readdirSync(root).sort().at(-1)
  return version ? join(root, version, 'bin') : null
}

function asPostgres(command: string, args: readonly string[]): void {
  const isRoot = process.getuid?.() === 0
  if (isRoot) execFileSync('runuser', ['-u', 'postgres', '--', command, ...args], { stdio: 'pipe' })
  else execFileSync(command, args, { stdio: 'pipe' })
}

async function startThrowawayCluster(bin: string): Promise<TestPostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'pushary-pg-'))
  if (process.getuid?.() === 0) execFileSync('chown', ['postgres:postgres', dir])
  const data = join(dir, 'data')
  const port = await freePort()
  asPostgres(join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres'])
  asPostgres(join(bin, 'pg_ctl'), [
    '-D',
    data,
    '-w',
    '-o',
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`,
    '-l',
    join(dir, 'log'),
    'start',
  ])
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`
  if (!(await waitFor(url, 30))) throw new Error(`the throwaway PostgreSQL in ${dir} did not start`)
  await ensureDatabase('127.0.0.1', port, 'test')
  return {
    connectionString: `postgres://postgres@127.0.0.1:${port}/test`,
    async stop() {
      asPostgres(join(bin, 'pg_ctl'), ['-D', data, '-m', 'fast', '-w', 'stop'])
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/**
 * Returns a reachable PostgreSQL with a `test` database on `port` (5432), or
 * starts one. Throws (never skips) when no server can be had.
 */
export async function ensurePostgres(port = 5432): Promise<TestPostgres> {
  const shared = `postgres://postgres@127.0.0.1:${port}/test`
  const none = { connectionString: shared, stop: async () => undefined }
  if (await reachable(`postgres://postgres@127.0.0.1:${port}/postgres`)) {
    await ensureDatabase('127.0.0.1', port, 'test')
    return none
  }
  const clusters = existsSync('/etc/postgresql') ? readdirSync('/etc/postgresql') : []
  if (port === 5432 && clusters.length > 0 && process.getuid?.() === 0) {
    try {
      execFileSync('pg_ctlcluster', ['--skip-systemctl-redirect', clusters.sort().at(-1)!, 'main', 'start'], {
        stdio: 'pipe',
      })
    } catch {
      // already starting, or no `main` cluster: fall through to a throwaway one
    }
    if (await waitFor(`postgres://postgres@127.0.0.1:${port}/postgres`, 30)) {
      await ensureDatabase('127.0.0.1', port, 'test')
      return none
    }
  }
  const bin = debianBin()
  if (bin !== null) return startThrowawayCluster(bin)
  throw new Error(
    `No PostgreSQL answers on 127.0.0.1:${port} and none can be started: install the Debian package ` +
      '(`apt-get install -y postgresql`) and re-run the tests.',
  )
}

/** A schema name unique to one test file run. */
export function uniqueSchema(label: string): string {
  return `pushary_${label}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
}

/** Drops a test schema and everything in it. */
export async function dropSchema(connectionString: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString })
  await client.connect()
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  } finally {
    await client.end()
  }
}
