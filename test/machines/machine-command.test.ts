/**
 * The diagram as the command prints it, from a separate process: kept apart
 * from the in-process diagram tests so the mutation run (which cannot reach
 * a child process) leaves it out.
 */
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { reviewLifecycleMermaid } from '../../src/machines/mermaid.js'
import { nodeScript } from '../helpers/node-script.js'

const root = fileURLToPath(new URL('../../', import.meta.url))

function runCli(args: readonly string[]) {
  return spawnSync(process.execPath, [...nodeScript('src/cli/main.ts'), ...args], {
    cwd: root,
    encoding: 'utf8',
  })
}

describe('pushary-mastra machine', () => {
  it('prints the diagram from `pushary-mastra machine --format mermaid`', () => {
    const result = runCli(['machine', '--format', 'mermaid'])
    expect(result.status).toBe(0)
    expect(result.stdout).toBe(reviewLifecycleMermaid())
  })

  it('exits with code 2 and names the format when the format is unknown', () => {
    const result = runCli(['machine', '--format', 'graphviz'])
    expect(result.status).toBe(2)
    expect(result.stderr).toContain('unknown --format "graphviz"')
    expect(result.stdout).toBe('')
  })
})
