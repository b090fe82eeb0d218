/**
 * Builds the package the way it ships (tsup, ESM, same externals) into a
 * scratch directory under node_modules, so child processes import exactly
 * what users import, resolving @mastra/core, hono and pg from this install.
 */
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { build } from 'tsup'

const ROOT = join(import.meta.dirname, '../..')

/**
 * Returns the file URL of the built ESM entry. Beside it: `dev-server.js`,
 * the module `pushary-mastra dev` runs (a service process without Mastra),
 * and `claim-worker.js`, the store bench's worker.
 */
export async function buildPackage(): Promise<string> {
  const outDir = join(ROOT, 'node_modules/.cache/pushary-bench/dist')
  rmSync(outDir, { recursive: true, force: true })
  await build({
    entry: {
      index: join(ROOT, 'src/index.ts'),
      'dev-server': join(ROOT, 'src/server/dev-server.ts'),
      'claim-worker': join(ROOT, 'bench/fixtures/claim-worker.ts'),
    },
    format: ['esm'],
    outDir,
    target: 'node20',
    dts: false,
    sourcemap: false,
    silent: true,
    config: false,
    external: [/^@mastra\//, 'zod', /^zod\//],
  })
  return pathToFileURL(join(outDir, 'index.js')).href
}
