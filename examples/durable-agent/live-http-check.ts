/**
 * `npm run test:live-http`: the durable-agent CLI in `--live` mode against
 * the decision service over HTTP (the package's local service stands in for
 * the hosted API on a loopback port), with separate processes for start and
 * answer. The person's answers go through the service API, as the app would
 * send them. Covers pending answers, start retries reusing the decision,
 * approve, deny, select, input, duplicate resumption and customer isolation.
 * Not evidence of phone notification delivery.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createPusharyClient, createPusharyDevServer } from '@pushary/mastra'
import { waitForPusharyService } from '@pushary/mastra/testing'
import { type CliRun, expect, inPool, runCli } from './check-support.js'

const root = mkdtempSync(join(tmpdir(), 'pushary-mastra-live-http-'))
const log = (line: string) => process.stdout.write(`${line}\n`)
const ok = (run: CliRun) => expect(run.code === 0, 'exit code 0', run)
const field = (run: CliRun, name: string) => run.result?.[name]

const ANSWERS = { approve: 'yes', deny: 'no', select: 'other', input: 'Use the corrected shipping address' }
type Scenario = keyof typeof ANSWERS

async function main(): Promise<void> {
  const hosted = await createPusharyDevServer({
    callbackAddresses: { allowLoopback: true },
    dbPath: join(root, 'hosted.sqlite'),
    port: 0,
    onError: () => {},
  })
  const person = createPusharyClient({ apiKey: hosted.apiKey, baseUrl: hosted.baseUrl })
  await waitForPusharyService(person, { timeoutMs: 30_000 })
  const env = {
    PUSHARY_API_KEY: hosted.apiKey,
    PUSHARY_BASE_URL: hosted.baseUrl,
    PUSHARY_EXTERNAL_ID: 'customer_1',
  }
  const otherCustomer = { ...env, PUSHARY_EXTERNAL_ID: 'customer_2' }
  const otherKey = { ...env, PUSHARY_API_KEY: 'pk_customer_b.sk_customer_b' }
  const live = (args: string[], extra = env) => runCli(['--live', ...args], extra)
  const decisions = async () => (await person.decisions.list({ limit: 100 })).decisions.length

  try {
    log(`Live CLI over HTTP against ${hosted.baseUrl}; SQLite evidence in ${root}`)
    // The customer links a phone once: the CLI prints the link, the "phone" taps it.
    const connected = await live(['connect'])
    ok(connected)
    const link = String(field(connected, 'universalLink'))
    const tapped = await fetch(link, { method: 'POST', redirect: 'manual' })
    expect(tapped.status === 303, `linking the phone (${tapped.status})`)

    const scenario = async (name: Scenario) => {
      const dir = join(root, name)
      const started = await live(['start', dir, name])
      ok(started)
      const decisionId = String(field(started, 'decisionId'))
      if (name === 'approve') {
        const retried = await live(['start', dir, name])
        ok(retried)
        expect(field(retried, 'decisionId') === decisionId, 'a start retry reuses the decision', retried)
        for (const [who, extra] of [
          ['customer', otherCustomer],
          ['key', otherKey],
        ] as const) {
          const refused = await live(['start', dir, name], extra)
          expect(refused.code === 2, `start with another ${who} is refused`, refused)
        }
      }
      const waiting = await live(['answer', dir, name])
      ok(waiting)
      expect(
        field(waiting, 'status') === 'pending',
        'answer prints pending until the person answers',
        waiting,
      )
      if (name === 'approve') {
        for (const [who, extra] of [
          ['customer', otherCustomer],
          ['key', otherKey],
        ] as const) {
          const refused = await live(['answer', dir, name], extra)
          expect(refused.code === 2, `answer with another ${who} is refused`, refused)
        }
        const decision = await person.decisions.get(decisionId)
        expect(decision.status === 'pending', "customer B's key or ID never resumed A's review")
      }
      await person.decisions.answer(decisionId, ANSWERS[name])
      const answered = await live(['answer', dir, name])
      ok(answered)
      const answer = field(answered, 'answer') as { value?: unknown; approved?: unknown }
      const refunds = name === 'approve' ? 1 : 0
      expect(field(answered, 'status') === 'resumed', 'resumed in a fresh process', answered)
      expect(
        answer.value === ANSWERS[name] && answer.approved === (name === 'approve'),
        'the answer',
        answered,
      )
      expect(field(answered, 'refunds') === refunds, `${refunds} refund(s)`, answered)
      const duplicate = await live(['answer', dir, name])
      ok(duplicate)
      expect(field(duplicate, 'status') === 'duplicate', 'a second answer reports duplicate', duplicate)
      expect(field(duplicate, 'refunds') === refunds, 'no second refund', duplicate)
      if (name === 'approve') {
        const restarted = await live(['start', dir, name])
        expect(restarted.code === 1, 'a settled action is not restarted', restarted)
        const other = await live(['answer', dir, name], otherCustomer)
        expect(other.code === 2, 'another customer is refused after settlement', other)
      }
      log(`${name}: pending, answered ${JSON.stringify(ANSWERS[name])}, resumed once, duplicate ignored`)
    }
    await inPool(
      2,
      (Object.keys(ANSWERS) as Scenario[]).map((name) => () => scenario(name)),
    )
    const total = await decisions()
    expect(total === 4, `one decision per action despite retries and refusals (found ${total})`)
    log(
      'Live CLI HTTP checks passed: retry, pending, approve, deny, select, input, duplicate and customer isolation. ' +
        'Phone delivery is not simulated by this check.',
    )
  } finally {
    await hosted.close()
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`)
  process.stderr.write(`SQLite evidence: ${root}\n`)
  process.exit(1)
})
