/**
 * The rules every `pushary-mastra` command follows: `--help` / `-h` prints
 * the usage on stdout with exit 0, bad arguments print the message and the
 * usage on stderr with exit 2, a failure at run time exits 1, and listing
 * or showing commands take `--json`. The commands run in process on real
 * files; the routing of the entry runs as its own process.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import type { CommandIo } from '../../src/cli/command-io.js'
import { runConnectCommand } from '../../src/cli/connect-command.js'
import { runDeliveriesCommand } from '../../src/cli/deliveries-command.js'
import { runDevCommand } from '../../src/cli/dev-command.js'
import { runDevicesCommand } from '../../src/cli/devices-command.js'
import { runMachineCommand } from '../../src/cli/machine-command.js'
import { runReviewsCommand } from '../../src/cli/reviews-command.js'
import { openServiceDatabase } from '../../src/server/database.js'
import { createSqliteReviewStore } from '../../src/store/sqlite-store.js'
import { nodeScript } from '../helpers/node-script.js'

type Run = (argv: readonly string[], io: CommandIo) => Promise<number>

interface Outcome {
  code: number
  stdout: string
  stderr: string
}

async function run(command: Run, argv: readonly string[]): Promise<Outcome> {
  const out: string[] = []
  const err: string[] = []
  const sink = (chunks: string[]) =>
    new Writable({
      write(chunk, _encoding, done) {
        chunks.push(String(chunk))
        done()
      },
    })
  const code = await command(argv, { stdout: sink(out), stderr: sink(err) })
  return { code, stdout: out.join(''), stderr: err.join('') }
}

const COMMANDS: Record<string, Run> = {
  connect: runConnectCommand,
  dev: runDevCommand,
  devices: runDevicesCommand,
  deliveries: runDeliveriesCommand,
  machine: runMachineCommand,
  reviews: runReviewsCommand,
}

/** Every command and subcommand, as argv after the command name. */
const INVOCATIONS: [string, string[]][] = [
  ['connect', ['customer_1']],
  ['dev', []],
  ['devices', ['list']],
  ['devices', ['revoke', 'dev_1']],
  ['deliveries', ['list']],
  ['machine', []],
  ['reviews', ['list', '--db', 'r.db']],
  ['reviews', ['show', 'dec_1', '--db', 'r.db']],
  ['reviews', ['check', '--app', 'w.js', '--db', 'r.db']],
  ['reviews', ['recover', 'dec_1', 'stale', '--reason', 'r', '--db', 'r.db']],
]

const label = (name: string, argv: readonly string[]) => [name, ...argv].join(' ')

describe('pushary-mastra command conventions', () => {
  it('prints the usage on stdout with exit 0 for --help and -h on every command and subcommand', async () => {
    for (const [name, argv] of INVOCATIONS) {
      for (const flag of ['--help', '-h']) {
        const result = await run(COMMANDS[name] as Run, [...argv, flag])
        expect(result, label(name, [...argv, flag])).toMatchObject({ code: 0, stderr: '' })
        expect(result.stdout, label(name, argv)).toContain(`pushary-mastra ${name}`)
        expect(result.stdout).toMatch(/^Usage:/)
      }
    }
  })

  it('refuses an unknown option, a missing value and a repeated option with the usage on stderr and exit 2', async () => {
    const bad: [string, string[], RegExp][] = [
      ...INVOCATIONS.map(([name, argv]): [string, string[], RegExp] => [
        name,
        [...argv, '--bogus'],
        /unknown option --bogus/,
      ]),
      ['connect', [], /name the customer/],
      ['connect', ['customer_1', '--timeout'], /--timeout needs a value/],
      ['connect', ['customer_1', '--no-wait=yes'], /--no-wait takes no value/],
      ['connect', ['customer_1', 'customer_2'], /unexpected argument "customer_2"/],
      ['dev', ['--port'], /--port needs a value/],
      ['dev', ['--db', '--sandbox'], /--db needs a value/],
      ['dev', ['--sandbox=yes'], /--sandbox takes no value/],
      ['dev', ['--host', 'a', '--host', 'b'], /--host may be given once/],
      ['devices', ['list', '--db'], /--db needs a value/],
      ['deliveries', ['list', '--limit', '0'], /--limit must be an integer/],
      ['machine', ['--format'], /--format needs a value/],
      ['machine', ['--format', 'mermaid', '--json'], /either --format or --json/],
      ['reviews', ['list', '--db', 'a.db', '--db', 'b.db'], /--db may be given once/],
    ]
    for (const [name, argv, message] of bad) {
      const result = await run(COMMANDS[name] as Run, argv)
      expect(result.code, label(name, argv)).toBe(2)
      expect(result.stdout, label(name, argv)).toBe('')
      expect(result.stderr, label(name, argv)).toMatch(message)
      expect(result.stderr, label(name, argv)).toContain(`Usage:`)
    }
  })

  it('asks for an action when a command that has subcommands gets none, and accepts `help` as one', async () => {
    for (const name of ['devices', 'deliveries', 'reviews']) {
      const missing = await run(COMMANDS[name] as Run, [])
      expect(missing.code, name).toBe(2)
      expect(missing.stderr, name).toMatch(/name an action/)
      const unknown = await run(COMMANDS[name] as Run, ['frobnicate'])
      expect(unknown.code, name).toBe(2)
      expect(unknown.stderr, name).toMatch(/unknown action "frobnicate"/)
      const help = await run(COMMANDS[name] as Run, ['help'])
      expect(help.code, name).toBe(0)
      expect(help.stdout, name).toContain(`pushary-mastra ${name}`)
    }
  })

  it('exits 1 when a command fails at run time (no database), creating nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pushary-cli-'))
    const missing = join(dir, 'missing.db')
    for (const [name, argv] of [
      ['devices', ['list', '--db', missing]],
      ['deliveries', ['list', '--db', missing]],
      ['reviews', ['list', '--db', missing]],
    ] as const) {
      const result = await run(COMMANDS[name] as Run, argv)
      expect(result.code, name).toBe(1)
      expect(result.stderr, name).toMatch(/no (service database|review store) at/)
    }
    expect(existsSync(missing)).toBe(false)
  })

  it('prints JSON with --json from every listing or showing command', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pushary-cli-'))
    const service = join(dir, 'service.db')
    ;(await openServiceDatabase(service)).close()
    const reviews = join(dir, 'reviews.db')
    const store = createSqliteReviewStore({ url: `file:${reviews}` })
    await store.listByState('pending', { limit: 1 })
    await store.close()

    const machine = await run(runMachineCommand, ['--json'])
    expect(machine.code).toBe(0)
    const lifecycle = JSON.parse(machine.stdout) as {
      initial: string
      states: { name: string; final: boolean }[]
      transitions: { from: string; event: string; to: string }[]
    }
    expect(lifecycle.initial).toBe('pending')
    expect(lifecycle.states.map((state) => state.name)).toEqual([
      'pending',
      'resuming',
      'uncertain',
      'completed',
      'stale',
    ])
    expect(lifecycle.transitions).toContainEqual({ from: 'pending', event: 'CLAIM', to: 'resuming' })

    for (const [command, argv] of [
      [runDevicesCommand, ['list', '--db', service, '--json']],
      [runDeliveriesCommand, ['list', '--db', service, '--json']],
      [runReviewsCommand, ['list', '--db', reviews, '--json']],
    ] as const) {
      const result = await run(command, argv)
      expect(result.code, argv.join(' ')).toBe(0)
      expect(JSON.parse(result.stdout), argv.join(' ')).toEqual([])
    }
  })
})

describe('the pushary-mastra entry', () => {
  const root = fileURLToPath(new URL('../../', import.meta.url))
  const cli = (args: readonly string[]) =>
    spawnSync(process.execPath, [...nodeScript('src/cli/main.ts'), ...args], {
      cwd: root,
      encoding: 'utf8',
    })

  it('prints its usage for help, and a command usage for help <command>', () => {
    const help = cli(['help'])
    expect(help.status).toBe(0)
    expect(help.stdout).toContain('Usage: pushary-mastra <command>')
    const machine = cli(['help', 'machine'])
    expect(machine.status).toBe(0)
    expect(machine.stdout).toContain('Usage: pushary-mastra machine')
  })

  it('refuses a missing or unknown command with exit 2 and the usage on stderr', () => {
    for (const args of [[], ['frobnicate'], ['help', 'frobnicate']]) {
      const result = cli(args)
      expect(result.status, args.join(' ')).toBe(2)
      expect(result.stdout).toBe('')
      expect(result.stderr).toContain('Usage: pushary-mastra <command>')
    }
  })
})
