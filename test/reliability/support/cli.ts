/**
 * Runs the `pushary-mastra` command as a real OS process (the sources,
 * bundled: see node-script.ts), the way an operator runs it from a shell. A
 * command that imports the application's TypeScript module (`--app`) runs
 * with tsx loaded, as an operator runs it on a TypeScript app.
 */
import { spawn } from 'node:child_process'
import { nodeScript } from '../../helpers/node-script.js'

export interface CliResult {
  code: number | null
  stdout: string
  stderr: string
}

/**
 * @example
 * const { code, stdout } = await runCli(['reviews', 'list', '--db', file, '--json'])
 */
export function runCli(
  args: readonly string[],
  timeoutMs = 120_000,
  env: Record<string, string> = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [...nodeScript('src/cli/main.ts', { tsx: args.includes('--app') }), ...args],
      {
        cwd: process.cwd(),
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, ...env },
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
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
}

/** The JSON a `--json` invocation printed (its last stdout line). */
export function jsonOf<T>(result: CliResult): T {
  const line = result.stdout.trim().split('\n').at(-1) ?? ''
  try {
    return JSON.parse(line) as T
  } catch {
    throw new Error(`the command printed no JSON (exit ${result.code}): ${result.stdout} ${result.stderr}`)
  }
}
