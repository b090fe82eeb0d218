// `npm test`: every stage runs even when an earlier one failed (a slow or
// failing vitest run must not hide the restart and live-HTTP checks), and the
// command exits non-zero at the end if any stage failed, naming which.
import { spawnSync } from 'node:child_process'

const stages = [
  ['vitest', ['npx', 'vitest', 'run']],
  ['test:restart', ['npm', 'run', 'test:restart']],
  ['test:live-http', ['npm', 'run', 'test:live-http']],
]

const failed = []
for (const [name, [command, ...args]] of stages) {
  process.stdout.write(`\n==> npm test: ${name}\n`)
  const result = spawnSync(command, args, { stdio: 'inherit', shell: process.platform === 'win32' })
  if (result.status !== 0) failed.push(`${name} (exit ${result.status ?? result.signal})`)
}
if (failed.length > 0) {
  process.stderr.write(`\nnpm test failed: ${failed.join(', ')}\n`)
  process.exit(1)
}
process.stdout.write('\nnpm test: every stage passed\n')
