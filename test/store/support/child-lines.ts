/**
 * Reads a child process's stdout line by line, in order: `next()` waits for
 * the next line, and fails naming `label` and the child's stderr when the
 * process exited before printing it.
 */
import type { ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'

export function childLines(child: ChildProcess, label: string): { next(): Promise<string> } {
  let stderr = ''
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
  })
  const lines: string[] = []
  let wake: (() => void) | undefined
  let exited = false
  if (child.stdout) {
    createInterface({ input: child.stdout }).on('line', (line) => {
      lines.push(line)
      wake?.()
    })
  }
  child.on('exit', () => {
    exited = true
    wake?.()
  })
  return {
    async next() {
      while (lines.length === 0) {
        if (exited) throw new Error(`${label} exited: ${stderr}`)
        await new Promise<void>((resolve) => {
          wake = resolve
        })
      }
      return lines.shift() as string
    },
  }
}
