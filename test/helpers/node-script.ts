/**
 * The TypeScript programs the tests run as their own OS processes (fixtures,
 * workers, the CLI), bundled once per test run by esbuild into plain ES
 * modules. A child then starts with `node <bundle>` instead of
 * `node --import tsx <file>`: tsx's loader hooks sit on every module a
 * process loads, Mastra's included, and cost about 1.5 s of CPU per process,
 * which on a 2-core machine was most of the crash, race and restart tests'
 * time. Packages stay external (the child loads the same node_modules); the
 * package's own name maps to the sources, as in vitest.config.ts.
 *
 * The bundles are built by the vitest global setup (`buildTestScripts`), which
 * names their directory in PUSHARY_TEST_SCRIPTS for the test workers; without
 * it (a runner that skips the global setup) a child runs through tsx.
 */
import { mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../../', import.meta.url))

/** Every program a test starts as a process; `nodeScript` refuses any other. */
export const TEST_SCRIPTS = [
  'src/cli/main.ts',
  'test/workflows/fixtures/run.ts',
  'test/agents/fixtures/agent-run.ts',
  'test/agents/fixtures/approver-set-run.ts',
  'test/reliability/fixtures/permit-host.ts',
  'test/reliability/fixtures/pg-worker.ts',
  'test/reliability/fixtures/approver-set-host.ts',
  'test/reliability/fixtures/approver-set-pg-host.ts',
  'test/store/fixtures/claim-worker.ts',
  'test/store/fixtures/claim-answers-worker.ts',
  'test/store/fixtures/lease-process.ts',
  'test/observability/fixtures/span-app.ts',
] as const

export type TestScript = (typeof TEST_SCRIPTS)[number]

const ENV = 'PUSHARY_TEST_SCRIPTS'

/**
 * The node arguments that run `script`: its bundle when the global setup
 * built one, else the TypeScript file through tsx. `tsx: true` keeps tsx
 * loaded in front of the bundle, for a child that itself imports TypeScript
 * (the CLI's `reviews check --app module.ts`).
 *
 * @example
 * spawn(process.execPath, [...nodeScript('src/cli/main.ts'), 'reviews', 'list'])
 */
export function nodeScript(script: string, options: { tsx?: boolean } = {}): string[] {
  const known = TEST_SCRIPTS.find((entry) => entry === script || join(root, entry) === script)
  if (!known) throw new Error(`${script} is not in TEST_SCRIPTS (test/helpers/node-script.ts): add it there`)
  const dir = process.env[ENV]
  if (!dir) return ['--import', 'tsx', join(root, known)]
  const bundle = join(dir, known.replace(/\.ts$/, '.mjs'))
  return options.tsx ? ['--import', 'tsx', bundle] : [bundle]
}

/**
 * Bundles every test script into a fresh directory under node_modules/.cache
 * and names it in PUSHARY_TEST_SCRIPTS; returns a function that removes it.
 * The vitest global setup.
 *
 * @example
 * export default async function setup() { return buildTestScripts() }
 */
export async function buildTestScripts(): Promise<() => void> {
  const { build } = await import('esbuild')
  const cache = join(root, 'node_modules/.cache/pushary-test-scripts')
  mkdirSync(cache, { recursive: true })
  const building = mkdtempSync(join(cache, 'build-'))
  await build({
    absWorkingDir: root,
    entryPoints: Object.fromEntries(TEST_SCRIPTS.map((script) => [script.replace(/\.ts$/, ''), script])),
    outdir: building,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    alias: {
      '@pushary/mastra/testing': './src/testing/index.ts',
      '@pushary/mastra': './src/index.ts',
    },
    logLevel: 'error',
  })
  const dir = `${building}-ready`
  renameSync(building, dir)
  process.env[ENV] = dir
  return () => rmSync(dir, { recursive: true, force: true })
}
