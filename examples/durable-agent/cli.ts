/**
 * The durable-agent example: an agent asks, the process exits, and a fresh
 * process resumes it exactly once after the answer. See `--help` (USAGE).
 */
import { mkdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { connect, createPusharyClient, createPusharyDevServer } from '@pushary/mastra'
import { waitForPusharyService } from '@pushary/mastra/testing'
import {
  buildAgentApp,
  credentialFingerprint,
  openAppDatabase,
  type PinnedIdentity,
  SCENARIOS,
  type Scenario,
} from './app.js'
import { answer, ExitError, out, type PhaseContext, report, type Service, start } from './phases.js'

export const USAGE = `Usage: node examples/durable-agent.mjs [--live] <phase> [DIR] [SCENARIO] [options]

Phases:
  start DIR SCENARIO    Run the agent until it asks, open the phone review, exit.
                        Repeating it while the review is pending reuses the same run and decision.
  answer DIR SCENARIO   Resume the saved agent in this fresh process once the person answered.
                        Prints "pending" until then (run it again later); "duplicate" after success.
  connect               --live only: print a single-use enrollment link for PUSHARY_EXTERNAL_ID.
Scenarios: approve | deny | select | input (default approve). One directory per business action.

Default mode (no --live): the local decision service runs embedded in each process on
DIR/service.sqlite; no account, key or network. A simulated phone is linked for the customer,
and "answer" first taps the scenario's answer on that service through its API, as the
reviewer's tap would (approve: yes, deny: no, select/input: yes, or --value TEXT).
Pass --check to only look (then "answer" prints pending until something answers).

--live: PUSHARY_API_KEY (required), PUSHARY_BASE_URL (optional, ends in /api/v1/server) and
PUSHARY_EXTERNAL_ID (the enrolled customer). The person answers in the app; "answer" only checks.

Options:
  --value TEXT   Default mode: the answer to tap (select option or typed text)
  --check        Default mode: do not tap; only check and resume when answered
  --recover      answer: recover an action whose resume died midway (an operator's step)
  --help

The directory pins the customer, the service and a fingerprint of the credential (never the key);
switching any of them is refused. Exit codes: 0 done or pending, 1 failure or recovery needed,
2 usage error or refused configuration.`

/** Live: the configured API. Default: the embedded local service on DIR/service.sqlite. */
async function openService(live: boolean, dir: string | null): Promise<Service> {
  if (live) {
    const apiKey = process.env.PUSHARY_API_KEY ?? ''
    const externalId = process.env.PUSHARY_EXTERNAL_ID ?? ''
    if (apiKey.trim() === '') throw new ExitError('--live needs PUSHARY_API_KEY', 2)
    if (externalId.trim() === '') throw new ExitError('--live needs PUSHARY_EXTERNAL_ID (the customer ID)', 2)
    // The client reads PUSHARY_BASE_URL itself and falls back to the hosted API.
    const client = createPusharyClient({ apiKey })
    return {
      client,
      identity: {
        mode: 'live',
        externalId,
        service: client.baseUrl,
        credential: credentialFingerprint(apiKey),
      },
      embedded: null,
      close: async () => {},
    }
  }
  if (!dir) throw new ExitError('connecting a phone requires --live', 2)
  const server = await createPusharyDevServer({
    callbackAddresses: { allowLoopback: true },
    dbPath: join(dir, 'service.sqlite'),
    port: 0,
    onError: () => {},
  })
  const client = createPusharyClient({ apiKey: server.apiKey, baseUrl: server.baseUrl })
  // Bounded wait until the embedded service answers, before the first request.
  await waitForPusharyService(client, { timeoutMs: 30_000 }).catch(async (error: unknown) => {
    await server.close()
    throw error
  })
  return {
    client,
    identity: {
      mode: 'local',
      externalId: process.env.PUSHARY_EXTERNAL_ID || 'customer_1',
      // The port changes with every process; the service is its database file.
      service: 'embedded:service.sqlite',
      credential: credentialFingerprint(server.apiKey),
    },
    embedded: server,
    close: () => server.close(),
  }
}

function checkPinned(pinned: PinnedIdentity, current: PinnedIdentity, dir: string): void {
  const changed = (['mode', 'externalId', 'service', 'credential'] as const).filter(
    (field) => pinned[field] !== current[field],
  )
  if (changed.length === 0) return
  const was = `customer ${JSON.stringify(pinned.externalId)}, service ${pinned.service}${pinned.mode === 'live' ? ' (--live)' : ''}`
  throw new ExitError(
    `The customer, service or credential changed (${changed.join(', ')}) for ${dir}. ` +
      `This action was started with ${was} and another API key fingerprint is refused. ` +
      'Restore PUSHARY_EXTERNAL_ID, PUSHARY_BASE_URL and PUSHARY_API_KEY (and --live) to the original values to finish it; use a new directory for a new action.',
    2,
  )
}

/** Default mode only: link a simulated phone once, so `requireReachable` holds like in production. */
export async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      live: { type: 'boolean', default: false },
      value: { type: 'string' },
      check: { type: 'boolean', default: false },
      recover: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  })
  if (values.help) {
    out(USAGE)
    return 0
  }
  const [phase, dirArg, scenarioArg = 'approve', ...extra] = positionals
  if (phase === 'connect') {
    if (!values.live)
      throw new ExitError('connecting a phone requires --live (the default mode links a simulated phone)', 2)
    const service = await openService(true, null)
    const { universalLink } = await connect({ client: service.client }, service.identity.externalId)
    out(`Open this private, single-use enrollment link on the test phone: ${universalLink}`)
    report({ phase: 'connect', universalLink })
    return 0
  }
  if ((phase !== 'start' && phase !== 'answer') || !dirArg || extra.length > 0) {
    throw new ExitError(
      `Pass start or answer and a persistent directory; reuse it after a restart.\n\n${USAGE}`,
      2,
    )
  }
  if (!(SCENARIOS as readonly string[]).includes(scenarioArg)) {
    throw new ExitError(`SCENARIO must be one of ${SCENARIOS.join(', ')}`, 2)
  }
  const scenario = scenarioArg as Scenario
  const dir = resolve(dirArg)
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const db = openAppDatabase(dir, scenario)
  let service: Service | null = null
  let app: ReturnType<typeof buildAgentApp> | null = null
  try {
    service = await openService(values.live, dir)
    checkPinned(await db.pin(service.identity), service.identity, dir)
    app = buildAgentApp({
      dir,
      scenario,
      client: service.client,
      externalId: service.identity.externalId,
      db,
    })
    const ctx: PhaseContext = {
      dir,
      scenario,
      db,
      service,
      identity: service.identity,
      app,
      flags: { value: values.value, check: values.check, recover: values.recover },
    }
    return phase === 'start' ? await start(ctx) : await answer(ctx)
  } finally {
    await app?.store.close()
    db.close()
    await service?.close()
  }
}

export function run(argv: string[]): void {
  main(argv).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`durable-agent: ${error instanceof Error ? error.message : String(error)}\n`)
      process.exit(error instanceof ExitError ? error.code : 1)
    },
  )
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) run(process.argv.slice(2))
