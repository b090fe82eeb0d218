/**
 * Import cost of the built package over @mastra/core alone, each sample a
 * fresh process (module caches are per process). Baseline and package runs
 * alternate so machine load hits both alike.
 */
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import type { Row } from '../lib/report.js'
import { median } from '../lib/stats.js'

const PROBE = join(import.meta.dirname, '../fixtures/import-probe.mjs')

function probe(pkg?: string, libsql = false): { mastraMs: number; packageMs: number } {
  const args = [PROBE, ...(libsql ? ['--libsql'] : []), ...(pkg ? [pkg] : [])]
  const out = execFileSync(process.execPath, args, {
    cwd: join(import.meta.dirname, '../..'),
    encoding: 'utf8',
  })
  return JSON.parse(out.trim().split('\n').at(-1) ?? '') as { mastraMs: number; packageMs: number }
}

export async function benchImportCost(options: { pkg: string; samples: number }): Promise<Row[]> {
  probe(options.pkg) // warm the file system cache
  const bare: number[] = []
  const over: number[] = []
  const total: number[] = []
  const overLibsql: number[] = []
  for (let index = 0; index < options.samples; index++) {
    bare.push(probe().mastraMs)
    const withPackage = probe(options.pkg)
    over.push(withPackage.packageMs)
    total.push(withPackage.mastraMs + withPackage.packageMs)
    overLibsql.push(probe(options.pkg, true).packageMs)
  }
  const added = median(over)
  return [
    {
      group: '6. Load and cold path',
      scenario: '`import` of the built package after `@mastra/core` (added time)',
      params: `fresh process each, ${options.samples} samples, ESM build`,
      unit: 'ms',
      median: added,
      target: 'adds < 100 ms',
      met: added < 100,
    },
    {
      group: '6. Load and cold path',
      scenario: '`import` of the built package after `@mastra/core` and `@mastra/libsql` (added time)',
      params: `fresh process each, ${options.samples} samples; @libsql/client is then already loaded`,
      unit: 'ms',
      median: median(overLibsql),
    },
    {
      group: '6. Load and cold path',
      scenario: '`@mastra/core` + the package, total import',
      params: `fresh process each, ${options.samples} samples`,
      unit: 'ms',
      median: median(total),
      baseline: { label: '`@mastra/core/mastra` + `/workflows` alone', value: median(bare) },
    },
  ]
}
