/**
 * `@pushary/mastra/testing` as it ships: the package's own tsup entries (the
 * project config, without declarations) built into a scratch package beside
 * this install's node_modules, then imported by a separate Node process, in
 * ESM and in CommonJS, through the package's exports map. The entry reaches
 * the main entry by the package's name, so this also proves both load one
 * copy of the error classes.
 */
import { execFile } from 'node:child_process'
import { copyFileSync, mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { build, type Options } from 'tsup'
import { beforeAll, describe, expect, it } from 'vitest'
import config from '../../tsup.config.js'

const ROOT = join(import.meta.dirname, '../..')
const PACKAGE = join(ROOT, 'node_modules/.cache/pushary-testing-entry/@pushary/mastra')
const run = promisify(execFile)

beforeAll(async () => {
  rmSync(PACKAGE, { recursive: true, force: true })
  mkdirSync(PACKAGE, { recursive: true })
  copyFileSync(join(ROOT, 'package.json'), join(PACKAGE, 'package.json'))
  const entries = (config as Options[]).filter((options) => {
    const names = Object.keys(options.entry as Record<string, string>)
    return names.includes('index') || names.includes('testing')
  })
  expect(entries).toHaveLength(2)
  for (const options of entries) {
    const entry = Object.fromEntries(
      Object.entries(options.entry as Record<string, string>).map(([name, path]) => [name, join(ROOT, path)]),
    )
    await build({
      ...options,
      entry,
      outDir: join(PACKAGE, 'dist'),
      dts: false,
      sourcemap: false,
      silent: true,
      config: false,
    })
  }
}, 120_000)

/** Runs `node -e script` in the scratch package (so `@pushary/mastra` resolves by its exports map). */
async function node(flag: '--input-type=module' | '--input-type=commonjs', script: string): Promise<string> {
  const { stdout } = await run(process.execPath, [flag, '-e', script], { cwd: PACKAGE, timeout: 60_000 })
  return stdout.trim().split('\n').at(-1) ?? ''
}

const SCENARIO = `
  const service = await testing.startPusharyTestService()
  try {
    const phone = await service.phone('c1')
    const created = await service.client.decisions.create({ question: 'Refund EUR 48?', externalId: 'c1' })
    const question = await phone.nextQuestion()
    const tap = await phone.approve(question.decisionId)
    const decision = await service.client.decisions.get(created.decisionId)
    const error = await testing.linkSimulatedPhone(service.client, ' ').catch((e) => e)
    console.log(JSON.stringify({
      same: question.decisionId === created.decisionId,
      tap: tap.status,
      status: decision.status,
      value: decision.value,
      errorIsPushary: error instanceof main.PusharyError && error.code === 'invalid_input',
    }))
  } finally {
    await service.close()
  }
`

describe('the built testing entry in a separate process', () => {
  const expected = { same: true, tap: 'answered', status: 'answered', value: 'yes', errorIsPushary: true }

  it('imports dist/testing.js (ESM) and answers a question on a simulated phone', async () => {
    const line = await node(
      '--input-type=module',
      `const testing = await import('@pushary/mastra/testing')
       const main = await import('@pushary/mastra')
       ${SCENARIO}`,
    )
    expect(JSON.parse(line)).toEqual(expected)
  })

  it('requires dist/testing.cjs (CommonJS) and does the same', async () => {
    const line = await node(
      '--input-type=commonjs',
      `const testing = require('@pushary/mastra/testing')
       const main = require('@pushary/mastra')
       ;(async () => { ${SCENARIO} })().catch((error) => { console.error(error); process.exit(1) })`,
    )
    expect(JSON.parse(line)).toEqual(expected)
  })
})
