/**
 * The cold path, issue 12 target 6: a fresh application process (the built
 * package, plain node) resumes one suspended, answered review; measured from
 * spawning the process to the protected step done. Beside it, a fresh
 * process resuming the same shape of bare Mastra run with `run.resume({ label })`.
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { createPusharyClient } from '../../src/pushary/client.js'
import { createPusharyDevServer } from '../../src/server/dev-server.js'
import type { Row } from '../lib/report.js'
import { summarize } from '../lib/stats.js'

const run = promisify(execFile)
const APP = join(import.meta.dirname, '../fixtures/cold-app.mjs')
const ROOT = join(import.meta.dirname, '../..')

async function phase<T>(pkg: string, dir: string, args: string[]): Promise<{ wallMs: number; output: T }> {
  const started = performance.now()
  const { stdout } = await run(process.execPath, [APP, pkg, dir, ...args], { cwd: ROOT })
  const wallMs = performance.now() - started
  return { wallMs, output: JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as T }
}

export async function benchColdResume(options: { pkg: string; samples: number }): Promise<Row> {
  const dir = mkdtempSync(join(tmpdir(), 'pushary-bench-cold-'))
  const service = await createPusharyDevServer({
    callbackAddresses: { allowLoopback: true },
    dbPath: join(dir, 'service.db'),
    port: 0,
    onError: () => {},
  })
  try {
    writeFileSync(
      join(dir, 'env.json'),
      JSON.stringify({
        baseUrl: service.baseUrl,
        apiKey: service.apiKey,
        webhookSecret: service.webhookSecret,
      }),
    )
    const client = createPusharyClient({ baseUrl: service.baseUrl, apiKey: service.apiKey })
    const count = String(options.samples + 1)
    const ours = (await phase<{ decisionId: string }[]>(options.pkg, dir, ['start-ours', count])).output
    const bare = (await phase<{ runId: string; label: string }[]>(options.pkg, dir, ['start-bare', count]))
      .output
    for (const started of ours) await client.decisions.answer(started.decisionId, 'yes')
    const oursMs: number[] = []
    const bareMs: number[] = []
    // The first pair warms the file system cache and is not kept.
    for (let index = 0; index < ours.length; index++) {
      const a = await phase(options.pkg, dir, ['resume-ours', ours[index]?.decisionId ?? ''])
      const b = await phase(options.pkg, dir, [
        'resume-bare',
        bare[index]?.runId ?? '',
        bare[index]?.label ?? '',
      ])
      if (index === 0) continue
      oursMs.push(a.wallMs)
      bareMs.push(b.wallMs)
    }
    const summary = summarize(oursMs)
    return {
      group: '6. Load and cold path',
      scenario: 'fresh process resumes one answered review: spawn → protected step done',
      params: `${options.samples} processes, built package, dispatcher.resumeDecision`,
      unit: 'ms',
      median: summary.median,
      p95: summary.p95,
      baseline: {
        label: 'fresh process, bare Mastra `run.resume({ label })`',
        value: summarize(bareMs).median,
      },
      target: 'reported',
    }
  } finally {
    await service.close()
  }
}
