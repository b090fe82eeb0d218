/**
 * `npm run test:restart`: the durable-agent CLI in default mode (embedded
 * local service, no account, key or model), a fresh OS process per phase.
 * Every scenario starts, exits, and is answered and resumed in a new
 * process; deny never refunds, a repeated answer never resumes twice, select
 * and input keep "yes" as data; a kill between start and answer and a kill
 * mid-resume recover without a second refund. The SQLite files stay in a
 * temporary directory, printed at the end.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type CliRun, expect, inPool, runCli } from './check-support.js'

const root = mkdtempSync(join(tmpdir(), 'pushary-mastra-restart-'))
const log = (line: string) => process.stdout.write(`${line}\n`)
const ok = (run: CliRun) => expect(run.code === 0, 'exit code 0', run)
const field = (run: CliRun, name: string) => run.result?.[name]

async function scenario(name: 'approve' | 'deny' | 'select' | 'input'): Promise<void> {
  const dir = join(root, name)
  const started = await runCli(['start', dir, name])
  ok(started)
  expect(field(started, 'status') === 'pending' && field(started, 'refunds') === 0, 'start pauses', started)
  if (name === 'approve') {
    const again = await runCli(['start', dir, name])
    ok(again)
    expect(
      field(again, 'decisionId') === field(started, 'decisionId') &&
        field(again, 'runId') === field(started, 'runId'),
      'a repeated start reuses the saved run and decision',
      again,
    )
    const looked = await runCli(['answer', dir, name, '--check'])
    ok(looked)
    expect(field(looked, 'status') === 'pending', 'answer prints pending before anyone answered', looked)
  }
  const answered = await runCli(['answer', dir, name])
  ok(answered)
  const answer = field(answered, 'answer') as { value?: unknown; approved?: unknown } | undefined
  const refunds = name === 'approve' ? 1 : 0
  expect(field(answered, 'status') === 'resumed', 'answer resumes in a fresh process', answered)
  expect(field(answered, 'refunds') === refunds, `${refunds} refund(s) after ${name}`, answered)
  expect(answer?.approved === (name === 'approve'), 'only a confirm answered yes approves', answered)
  if (name === 'select' || name === 'input') {
    expect(answer?.value === 'yes', `${name} keeps "yes" as data`, answered)
  }
  const repeated = await runCli(['answer', dir, name])
  ok(repeated)
  expect(
    field(repeated, 'status') === 'duplicate' && field(repeated, 'refunds') === refunds,
    'a repeated answer never resumes twice',
    repeated,
  )
  if (name === 'approve') {
    const restarted = await runCli(['start', dir, name])
    expect(restarted.code === 1, 'a completed action is never restarted', restarted)
    const other = await runCli(['answer', dir, name], { PUSHARY_EXTERNAL_ID: 'customer_2' })
    expect(
      other.code === 2 && other.stderr.includes('Restore'),
      'another customer is refused with how to restore',
      other,
    )
  }
  log(`${name}: started, exited, answered in a fresh process; duplicate ignored (refunds ${refunds})`)
}

/** Killed after the agent suspended, before the review was opened: the next start reuses the run. */
async function killBetweenStartAndAnswer(): Promise<void> {
  const dir = join(root, 'kill-after-suspend')
  const killed = await runCli(['start', dir, 'approve'], { DURABLE_AGENT_CRASH: 'after-suspend' })
  expect(killed.signal === 'SIGKILL', 'the start process was killed', killed)
  const started = await runCli(['start', dir, 'approve'])
  ok(started)
  const answered = await runCli(['answer', dir, 'approve'])
  ok(answered)
  expect(field(answered, 'refunds') === 1, 'one refund after the killed start', answered)
  log('kill between start and answer: the next start reused the suspended run; one refund')
}

/** Killed inside the refund: busy (recovery needed), the operator recovers, never a second refund. */
async function killMidResume(): Promise<void> {
  const dir = join(root, 'kill-mid-resume')
  ok(await runCli(['start', dir, 'approve']))
  const killed = await runCli(['answer', dir, 'approve'], { DURABLE_AGENT_CRASH: 'in-refund' })
  expect(killed.signal === 'SIGKILL', 'the answer process was killed inside the refund', killed)
  const busy = await runCli(['answer', dir, 'approve'])
  expect(
    busy.code === 1 && field(busy, 'status') === 'busy' && busy.stdout.includes('--recover'),
    'a crash-left resume is reported as needing recovery',
    busy,
  )
  const recovered = await runCli(['answer', dir, 'approve', '--recover'])
  ok(recovered)
  expect(
    field(recovered, 'state') === 'completed',
    'recovery settles it completed from the receipt',
    recovered,
  )
  const after = await runCli(['answer', dir, 'approve'])
  ok(after)
  expect(
    field(after, 'status') === 'duplicate' && field(after, 'refunds') === 1,
    'no second refund after recovery',
    after,
  )
  log('kill mid-resume: busy until recovered from the refund receipt; one refund')
}

/** Killed after Mastra finished, before the output was saved: an error for manual recovery, no re-run. */
async function killBeforeOutputSaved(): Promise<void> {
  const dir = join(root, 'kill-before-output-saved')
  ok(await runCli(['start', dir, 'approve']))
  const killed = await runCli(['answer', dir, 'approve'], { DURABLE_AGENT_CRASH: 'before-output-saved' })
  expect(killed.signal === 'SIGKILL', 'the answer process was killed before saving', killed)
  const after = await runCli(['answer', dir, 'approve'])
  expect(
    after.code === 1 && field(after, 'status') === 'duplicate' && field(after, 'outputSaved') === false,
    'a duplicate with missing output exits with an error for manual recovery',
    after,
  )
  expect(field(after, 'refunds') === 1, 'the refund never runs again', after)
  log('kill after Mastra finished: duplicate with missing output is an error; one refund')
}

async function main(): Promise<void> {
  log(`Restart checks (fresh OS processes per phase); SQLite evidence in ${root}`)
  await inPool(2, [
    () => scenario('approve'),
    () => scenario('deny'),
    () => scenario('select'),
    () => scenario('input'),
    killBetweenStartAndAnswer,
    killMidResume,
    killBeforeOutputSaved,
  ])
  log(`Real Mastra restart checks passed. SQLite evidence: ${root}`)
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`)
  process.stderr.write(`SQLite evidence: ${root}\n`)
  process.exit(1)
})
