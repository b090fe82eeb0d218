/**
 * Runs an example program as its own OS process, the way a user runs it
 * (`npx tsx examples/...`), and returns its exit code and printed output.
 */
import { spawn } from 'node:child_process'

export function runExample(
  script: string,
  args: readonly string[] = [],
): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
      cwd: process.cwd(),
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    child.stdout.on('data', (chunk) => {
      stdout += chunk
    })
    child.stderr.on('data', (chunk) => {
      stdout += chunk
    })
    const timer = setTimeout(() => child.kill('SIGKILL'), 170_000)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout })
    })
  })
}
