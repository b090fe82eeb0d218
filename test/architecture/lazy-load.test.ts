import { execFile } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

const run = promisify(execFile)

/** Imports the package in a fresh process (one phase) and lists the heavy dependencies it loaded. */
async function loadedBy(phase: Phase): Promise<string[]> {
  return (await load(phase)).loaded
}

type Phase = 'import' | 'dev-server' | 'postgres-store' | 'testing-import'

/** What one fresh process loaded: the watched packages, and whether any module of the testing entry. */
async function load(phase: Phase): Promise<{ loaded: string[]; testing: boolean }> {
  const dir = mkdtempSync(join(tmpdir(), 'pushary-lazy-'))
  const { stdout } = await run(
    process.execPath,
    ['--import', 'tsx', 'test/architecture/fixtures/loaded-packages.ts', phase, dir],
    { cwd: join(import.meta.dirname, '../..') },
  )
  const line = stdout.trim().split('\n').at(-1) ?? ''
  return JSON.parse(line) as { loaded: string[]; testing: boolean }
}

describe('what importing the package loads', () => {
  it('loads neither the local service (hono, @hono/node-server), pg nor the CLI parts on import', async () => {
    expect(await loadedBy('import')).toEqual([])
  })

  it('loads hono and its Node adapter once the local service is started', async () => {
    expect(await loadedBy('dev-server')).toEqual(['hono', '@hono/node-server'])
  })

  it('loads pg once a PostgreSQL store is first used', async () => {
    expect(await loadedBy('postgres-store')).toEqual(['pg'])
  })

  it('never loads the testing entry from the main entry, and loads neither the service nor pg for it', async () => {
    expect((await load('import')).testing).toBe(false)
    expect(await load('testing-import')).toEqual({ loaded: [], testing: true })
  })
})
