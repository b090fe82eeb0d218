// Loads the built package the way consumers do: CommonJS require and ESM
// import through the package's own name (Node's self-reference), plus the bin.
import { execFileSync } from 'node:child_process'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const cjs = require('@pushary/mastra')
const esm = await import('@pushary/mastra')

const cjsNames = Object.keys(cjs).sort()
const esmNames = Object.keys(esm)
  .filter((name) => name !== 'default' && name !== 'module.exports')
  .sort()
if (cjsNames.length === 0) throw new Error('CJS entry exports nothing')
if (JSON.stringify(cjsNames) !== JSON.stringify(esmNames)) {
  throw new Error(`ESM and CJS entries differ:\n cjs: ${cjsNames}\n esm: ${esmNames}`)
}
for (const name of ['createPusharyClient', 'resolvePusharyCallback', 'createPusharyDispatcher']) {
  if (typeof cjs[name] !== 'function') throw new Error(`missing export ${name}`)
}
const help = execFileSync(process.execPath, ['dist/cli.js', 'help'], { encoding: 'utf8' })
if (!help.includes('pushary-mastra')) throw new Error('the CLI did not print its usage')
console.log(`dist OK: ${cjsNames.length} exports from ESM and CJS, CLI runs`)
