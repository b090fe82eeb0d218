/**
 * Shared by the restart and live-HTTP checks: run the durable-agent CLI as a
 * fresh OS process and read what it printed.
 */
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const LAUNCHER = fileURLToPath(new URL('../durable-agent.mjs', import.meta.url))

export interface CliRun {
  args: string[]
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
  /** The last JSON line the CLI printed (its result), or null. */
  result: Record<string, unknown> | null
}

/** One fresh process of `node examples/durable-agent.mjs ARGS`. */
export function runCli(args: string[], env: Record<string, string | undefined> = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [LAUNCHER, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, DURABLE_AGENT_CRASH: undefined, ...env },
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => {
      stdout += chunk
    })
    child.stderr.on('data', (chunk) => {
      stderr += chunk
    })
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000)
    child.on('error', reject)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      const line = stdout
        .trim()
        .split('\n')
        .reverse()
        .find((candidate) => candidate.startsWith('{'))
      resolve({ args, code, signal, stdout, stderr, result: line ? JSON.parse(line) : null })
    })
  })
}

/** Throws with the process's output when `ok` is false. */
export function expect(ok: boolean, what: string, run?: CliRun): void {
  if (ok) return
  const detail = run
    ? `\n  $ node examples/durable-agent.mjs ${run.args.join(' ')}\n  exit ${run.code ?? run.signal}\n  stdout: ${run.stdout.trim()}\n  stderr: ${run.stderr.trim().slice(-1500)}`
    : ''
  throw new Error(`check failed: ${what}${detail}`)
}

/** Runs `tasks` at most `width` at a time (the CI machine has few cores). */
export async function inPool(width: number, tasks: (() => Promise<void>)[]): Promise<void> {
  const queue = [...tasks]
  const workers = Array.from({ length: width }, async () => {
    for (let task = queue.shift(); task; task = queue.shift()) await task()
  })
  await Promise.all(workers)
}
