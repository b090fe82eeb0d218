import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { parseDevArgs } from '../../src/cli/dev-command.js'
import { createPusharyClient } from '../../src/pushary/client.js'
import { PusharyDevServerError } from '../../src/server/dev-server-error.js'
import { nodeScript } from '../helpers/node-script.js'
import { tempDir } from './service-harness.js'

const ROOT = resolve(import.meta.dirname, '../..')
const children: ChildProcessWithoutNullStreams[] = []

afterEach(() => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  }
})

interface Running {
  child: ChildProcessWithoutNullStreams
  output: () => string
  url: string
  /** Null when the command kept the key hidden. */
  apiKey: string | null
  webhookSecret: string | null
  exit: Promise<number | null>
}

function spawnDev(args: string[]): ChildProcessWithoutNullStreams {
  const child = spawn(process.execPath, [...nodeScript('src/cli/main.ts'), 'dev', ...args], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: '1' },
  })
  children.push(child)
  return child
}

async function startDev(args: string[]): Promise<Running> {
  const child = spawnDev(args)
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8')
  })
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8')
  })
  const exit = new Promise<number | null>((resolveExit) => child.once('exit', (code) => resolveExit(code)))
  await new Promise<void>((resolveReady, reject) => {
    const timer = setTimeout(() => reject(new Error(`dev did not start:\n${stdout}\n${stderr}`)), 45_000)
    const check = () => {
      if (stdout.includes('Press Ctrl-C to stop.')) {
        clearTimeout(timer)
        resolveReady()
      }
    }
    child.stdout.on('data', check)
    child.once('exit', () => {
      clearTimeout(timer)
      reject(new Error(`dev exited early:\n${stdout}\n${stderr}`))
    })
  })
  const pick = (pattern: RegExp) => {
    const match = pattern.exec(stdout)
    if (!match?.[1]) throw new Error(`missing ${pattern} in:\n${stdout}`)
    return match[1]
  }
  return {
    child,
    output: () => stdout + stderr,
    url: pick(/listening on (http:\/\/127\.0\.0\.1:\d+)/),
    apiKey: /API key\s+(pk_\S+)/.exec(stdout)?.[1] ?? null,
    webhookSecret: /Webhook secret\s+(whsec_\S+)/.exec(stdout)?.[1] ?? null,
    exit,
  }
}

async function portClosed(url: string): Promise<boolean> {
  try {
    await fetch(url, { signal: AbortSignal.timeout(2_000) })
    return false
  } catch {
    return true
  }
}

describe('pushary-mastra dev', () => {
  it('prints the URL, API key and webhook secret, serves, and exits 0 with the port closed on Ctrl-C', async () => {
    const dbPath = join(tempDir('cli'), 'dev.db')
    const first = await startDev(['--port', '0', '--db', dbPath])
    const apiKey = first.apiKey ?? ''
    expect(apiKey).toMatch(/^pk_dev_[0-9a-f]+\.sk_[0-9a-f]+$/)
    expect(first.webhookSecret).toMatch(/^whsec_[0-9a-f]+$/)
    expect(first.output()).toContain(`export PUSHARY_API_KEY=${apiKey}\n`)
    expect(first.output()).toContain(`export PUSHARY_WEBHOOK_SECRET=${first.webhookSecret}\n`)
    expect(first.output()).toContain(`${first.url}/api/v1/server`)
    expect(first.output()).toContain('POST /enroll')

    const client = createPusharyClient({ apiKey, baseUrl: `${first.url}/api/v1/server` })
    expect((await client.webhookSecret.get()).webhookSecret).toBe(first.webhookSecret)
    const { decisionId } = await client.decisions.create({ question: 'Survive a restart?' })
    const enrolment = await client.enroll('customer-cli')
    expect(first.output()).toContain(enrolment.universalLink)

    first.child.kill('SIGINT')
    expect(await first.exit).toBe(0)
    expect(await portClosed(first.url)).toBe(true)

    // A second process on the same file keeps the key and the pending decision,
    // and prints the secrets only when asked.
    const hidden = await startDev(['--port', '0', '--db', dbPath])
    expect(hidden.output()).not.toContain(apiKey)
    expect(hidden.output()).not.toContain(String(first.webhookSecret))
    expect(hidden.output()).toContain('--show-secrets')
    hidden.child.kill('SIGINT')
    expect(await hidden.exit, hidden.output()).toBe(0)

    const second = await startDev(['--port', '0', '--db', dbPath, '--show-secrets'])
    expect(second.apiKey).toBe(apiKey)
    expect(second.webhookSecret).toBe(first.webhookSecret)
    expect(second.output()).toContain(`export PUSHARY_WEBHOOK_SECRET=${first.webhookSecret}\n`)
    const again = createPusharyClient({ apiKey, baseUrl: `${second.url}/api/v1/server` })
    expect(await again.decisions.answer(decisionId, 'yes')).toMatchObject({ status: 'answered' })
    second.child.kill('SIGTERM')
    expect(await second.exit).toBe(0)
  })

  it('reads the API key from --api-key-file so it never appears in the process listing', async () => {
    const dir = tempDir('cli-keyfile')
    const keyFile = join(dir, 'api-key')
    writeFileSync(keyFile, 'pk_file.sk_file_secret\n', { mode: 0o600 })
    const dev = await startDev(['--port=0', `--db=${join(dir, 'dev.db')}`, '--api-key-file', keyFile])
    expect(dev.output()).not.toContain('sk_file_secret')
    expect(readFileSync(`/proc/${dev.child.pid}/cmdline`, 'utf8')).not.toContain('sk_file_secret')
    const client = createPusharyClient({
      apiKey: 'pk_file.sk_file_secret',
      baseUrl: `${dev.url}/api/v1/server`,
    })
    expect((await client.decisions.create({ question: 'Keyed from a file?' })).status).toBe('pending')
    dev.child.kill('SIGINT')
    expect(await dev.exit).toBe(0)
  })

  it('uses --api-key, --public-url and --sandbox', async () => {
    const dbPath = join(tempDir('cli-flags'), 'dev.db')
    const dev = await startDev([
      '--port=0',
      `--db=${dbPath}`,
      '--api-key',
      'pk_cli.sk_cli',
      '--public-url',
      'http://192.0.2.10:4100/',
      '--sandbox',
    ])
    expect(dev.output()).toContain('visible to every local user in process listings')
    expect(dev.output()).toContain('http://192.0.2.10:4100/review')
    const client = createPusharyClient({ apiKey: 'pk_cli.sk_cli', baseUrl: `${dev.url}/api/v1/server` })
    const created = await client.decisions.create({ question: 'Auto?', sandboxOutcome: 'approve' })
    expect(created.decisionPageUrl).toBe(`http://192.0.2.10:4100/review/${created.decisionId}`)
    expect(await client.decisions.get(created.decisionId, { wait: 10 })).toMatchObject({ value: 'yes' })
    dev.child.kill('SIGINT')
    expect(await dev.exit).toBe(0)
  })

  it('exits 2 naming the flag for a bad option', async () => {
    const child = spawnDev(['--port', 'eighty'])
    let stderr = ''
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8')
    })
    const code = await new Promise<number | null>((resolveExit) => child.once('exit', (c) => resolveExit(c)))
    expect(code).toBe(2)
    expect(stderr).toContain('--port')
  })
})

describe('parseDevArgs', () => {
  it('reads every flag in both spellings', () => {
    expect(
      parseDevArgs([
        '--host',
        '0.0.0.0',
        '--port=0',
        '--db',
        'x.db',
        '--public-url=http://h:1',
        '--api-key',
        'a.b',
        '--policy',
        'p.json',
        '--sandbox',
      ]),
    ).toEqual({
      help: false,
      options: {
        host: '0.0.0.0',
        port: 0,
        dbPath: 'x.db',
        publicUrl: 'http://h:1',
        apiKey: 'a.b',
        policyPath: 'p.json',
        sandbox: true,
      },
    })
    expect(parseDevArgs(['--help'])).toEqual({ help: true })
  })

  it('throws a typed error naming the flag for unknown flags, missing values and bad ports', () => {
    for (const [argv, field] of [
      [['--nope'], '--nope'],
      [['--port'], '--port'],
      [['--db', '--sandbox'], '--db'],
      [['--port', '99999'], '--port'],
      [['--host='], '--host'],
    ] as const) {
      let caught: unknown
      try {
        parseDevArgs(argv)
      } catch (error) {
        caught = error
      }
      expect(caught, argv.join(' ')).toBeInstanceOf(PusharyDevServerError)
      expect(caught).toMatchObject({ code: 'invalid_option', field })
    }
  })
})
