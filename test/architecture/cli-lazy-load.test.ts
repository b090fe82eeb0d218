import { execFile } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

const run = promisify(execFile)

/** Runs one command line in a fresh process and lists what it loaded. */
async function loadedBy(...command: string[]): Promise<{ packages: string[]; modules: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'pushary-cli-lazy-'))
  const child = await run(
    process.execPath,
    ['--import', 'tsx', 'test/architecture/fixtures/cli-loaded.ts', dir, ...command],
    { cwd: join(import.meta.dirname, '../..') },
  ).catch((error: { stdout: string; stderr: string }) => error)
  const line = child.stderr.trim().split('\n').at(-1) ?? ''
  return JSON.parse(line) as { packages: string[]; modules: string[] }
}

describe('what each pushary-mastra command loads', () => {
  it('machine prints the diagram without opening any database or loading the other commands', async () => {
    const { packages, modules } = await loadedBy('machine', '--format', 'mermaid')
    expect(packages).toContain('xstate')
    for (const heavy of ['@libsql/client', 'pg', 'hono', '@mastra/core', '@xstate/graph']) {
      expect(packages).not.toContain(heavy)
    }
    expect(modules.filter((module) => module.startsWith('cli/')).sort()).toEqual([
      'cli/args.ts',
      'cli/command-io.ts',
      'cli/machine-command.ts',
      'cli/main.ts',
    ])
  })

  it('dev --help loads neither the lifecycle diagram nor XState graph tooling', async () => {
    const { packages, modules } = await loadedBy('dev', '--help')
    expect(packages).not.toContain('@xstate/graph')
    expect(modules).not.toContain('machines/mermaid.ts')
    expect(modules).not.toContain('cli/reviews-command.ts')
  })

  it('connect --help loads no database driver, service, Mastra or QR code library', async () => {
    const { packages, modules } = await loadedBy('connect', '--help')
    for (const heavy of ['@libsql/client', 'pg', 'hono', '@mastra/core', 'xstate', 'qrcode-terminal']) {
      expect(packages).not.toContain(heavy)
    }
    expect(modules.filter((module) => module.startsWith('cli/')).sort()).toEqual([
      'cli/args.ts',
      'cli/command-io.ts',
      'cli/connect-command.ts',
      'cli/main.ts',
    ])
  })

  it('reviews refuses bad arguments before loading a store, Mastra or a database driver', async () => {
    const { packages, modules } = await loadedBy('reviews', 'list')
    for (const heavy of ['@libsql/client', 'pg', '@mastra/core']) expect(packages).not.toContain(heavy)
    expect(modules).not.toContain('cli/reviews-actions.ts')
  })
})
