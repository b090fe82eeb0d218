// Typechecks a consumer of the built package the way a strict application
// does: `skipLibCheck: false`, without `pg` or `@types/pg` installed (the
// PostgreSQL store is optional, so its driver's types must not leak into the
// published declarations), through both the ESM and the CommonJS entries.
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const modules = join(root, 'node_modules')
const dir = mkdtempSync(join(tmpdir(), 'pushary-types-'))
const HIDDEN = new Set(['pg', '@types/pg', '@pushary/mastra'])

try {
  const target = join(dir, 'node_modules')
  mkdirSync(target)
  for (const entry of readdirSync(modules)) {
    if (entry.startsWith('.')) continue
    if (entry.startsWith('@')) {
      mkdirSync(join(target, entry))
      for (const inner of readdirSync(join(modules, entry))) {
        if (!HIDDEN.has(`${entry}/${inner}`))
          symlinkSync(join(modules, entry, inner), join(target, entry, inner))
      }
    } else if (!HIDDEN.has(entry)) {
      symlinkSync(join(modules, entry), join(target, entry))
    }
  }
  mkdirSync(join(target, '@pushary'), { recursive: true })
  symlinkSync(root, join(target, '@pushary', 'mastra'))

  const consumer = `
import {
  createPostgresReviewStore,
  createPusharyAskTool,
  createPusharyDispatcher,
  pusharyApprovalStep,
  type PostgresReviewStoreOptions,
  type PusharyPgPool,
} from '@pushary/mastra'

declare const pool: PusharyPgPool
const options: PostgresReviewStoreOptions = { pool, schema: 'approvals' }
export const store = createPostgresReviewStore(options)
export const parts = [createPusharyAskTool, createPusharyDispatcher, pusharyApprovalStep]
`
  writeFileSync(join(dir, 'consumer.mts'), consumer)
  writeFileSync(
    join(dir, 'consumer.cts'),
    consumer.replace("from '@pushary/mastra'", "from '@pushary/mastra'"),
  )
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        skipLibCheck: false,
        noEmit: true,
        module: 'nodenext',
        moduleResolution: 'nodenext',
        target: 'es2022',
        types: ['node'],
      },
      files: ['consumer.mts', 'consumer.cts'],
    }),
  )
  let output = ''
  try {
    execFileSync(process.execPath, [join(modules, 'typescript', 'bin', 'tsc'), '-p', dir], {
      encoding: 'utf8',
    })
  } catch (error) {
    if (typeof error.stdout !== 'string') throw error
    output = error.stdout
  }
  // Mastra's own declarations do not pass skipLibCheck: false (zod v3 names
  // under zod v4); only errors in the consumer or in our declarations count.
  const ours = output
    .split('\n')
    .filter((line) => /error TS/.test(line))
    .filter(
      (line) =>
        !line.split('(')[0].includes('node_modules/') ||
        line.includes('@pushary/mastra') ||
        /TS7016|'pg'/.test(line),
    )
  if (!output.includes('error TS') && output !== '')
    throw new Error(`tsc failed without diagnostics:\n${output}`)
  if (ours.length > 0) {
    console.error(ours.join('\n'))
    throw new Error(
      'the published declarations do not typecheck for a strict consumer without pg (see above)',
    )
  }
  console.log(
    'types OK: dist declarations typecheck with skipLibCheck false, ESM and CJS, without pg or @types/pg',
  )
} finally {
  rmSync(dir, { recursive: true, force: true })
}
