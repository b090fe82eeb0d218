/**
 * The durable-agent example: an agent asks, the process exits, and a fresh
 * process resumes it exactly once after the answer. See `--help` (USAGE).
 */
import { mkdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import {
  connect,
  createPusharyClient,
  createPusharyDevServer,
  createPusharyDispatcher,
  openPusharyAgentReview,
  PUSHARY_DEFAULT_BASE_URL,
  type PusharyClient,
  type PusharyDevServer,
  resumePusharyAgentReview,
} from '@pushary/mastra'
import { linkSimulatedPhone } from '../shared/local-phone.js'
import {
  ACTION_VERSION,
  AGENT_ID,
  type AppDatabase,
  buildAgentApp,
  crashAt,
  credentialFingerprint,
  openAppDatabase,
  type PinnedIdentity,
  SCENARIOS,
  type Scenario,
} from './app.js'

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

class ExitError extends Error {
  constructor(
    message: string,
    readonly code: 1 | 2,
  ) {
    super(message)
  }
}

const out = (line = '') => process.stdout.write(`${line}\n`)
const report = (value: Record<string, unknown>) => out(JSON.stringify(value))

interface Service {
  client: PusharyClient
  identity: PinnedIdentity
  embedded: PusharyDevServer | null
  close(): Promise<void>
}

/** Live: the configured API. Default: the embedded local service on DIR/service.sqlite. */
async function openService(live: boolean, dir: string | null): Promise<Service> {
  if (live) {
    const apiKey = process.env.PUSHARY_API_KEY ?? ''
    const externalId = process.env.PUSHARY_EXTERNAL_ID ?? ''
    if (apiKey.trim() === '') throw new ExitError('--live needs PUSHARY_API_KEY', 2)
    if (externalId.trim() === '') throw new ExitError('--live needs PUSHARY_EXTERNAL_ID (the customer ID)', 2)
    const baseUrl = process.env.PUSHARY_BASE_URL || PUSHARY_DEFAULT_BASE_URL
    return {
      client: createPusharyClient({ apiKey, baseUrl }),
      identity: { mode: 'live', externalId, service: baseUrl, credential: credentialFingerprint(apiKey) },
      embedded: null,
      close: async () => {},
    }
  }
  if (!dir) throw new ExitError('connecting a phone requires --live', 2)
  const server = await createPusharyDevServer({
    dbPath: join(dir, 'service.sqlite'),
    port: 0,
    onError: () => {},
  })
  return {
    client: createPusharyClient({ apiKey: server.apiKey, baseUrl: server.baseUrl }),
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
async function linkPhoneIfEmbedded(service: Service, externalId: string): Promise<void> {
  if (service.embedded && (await linkSimulatedPhone(service.client, externalId))) {
    out(`linked a simulated phone for ${JSON.stringify(externalId)} on the embedded service`)
  }
}

async function start(ctx: PhaseContext): Promise<number> {
  const { scenario, db, app, identity } = ctx
  const saved = await db.action()
  if (saved) {
    const review = await app.store.get(saved.decisionId)
    if (review?.state !== 'pending') {
      throw new ExitError(
        `This action is ${review?.state ?? 'missing its review'}: it is never restarted. Run answer to inspect it; use a new directory for a new action.`,
        1,
      )
    }
  }
  let { runs } = await app.agent.listSuspendedRuns({ resourceId: identity.externalId })
  if (runs.length === 0) {
    if (saved) throw new ExitError('A saved review has no suspended run; inspect the databases first.', 1)
    const output = await app.agent.generate('Handle this customer request', {
      maxSteps: 3,
      memory: { thread: `thread-${scenario}`, resource: identity.externalId },
    })
    if (output.finishReason !== 'suspended') {
      throw new ExitError(`the agent finished without asking (${output.finishReason})`, 1)
    }
    crashAt('after-suspend')
    runs = (await app.agent.listSuspendedRuns({ resourceId: identity.externalId })).runs
  }
  const run = runs.length === 1 ? runs[0] : undefined
  const call = run?.toolCalls[0]
  if (!run || !call?.toolCallId) throw new ExitError(`expected one suspended run, found ${runs.length}`, 1)
  await linkPhoneIfEmbedded(ctx.service, identity.externalId)
  const confirmQuestion =
    scenario === 'deny'
      ? 'Pushary denial test: please decline this simulated refund. No money will move.'
      : 'Pushary integration test: approve a simulated refund? No money will move.'
  // Idempotent: a repeated start lands on the same decision and review.
  const review = await openPusharyAgentReview(
    { client: ctx.service.client },
    {
      agent: app.agent,
      agentId: AGENT_ID,
      runId: run.runId,
      toolCallId: call.toolCallId,
      externalId: identity.externalId,
      actionVersion: ACTION_VERSION,
      store: app.store,
      question: confirmQuestion,
      expiresInSeconds: 3600,
      // Refuse a customer with no linked phone instead of asking into the void.
      requireReachable: true,
    },
  )
  await db.saveAction(review.decisionId, run.runId)
  const refunds = await db.refunds()
  if (refunds !== 0) throw new ExitError(`a refund ran before any answer (${refunds})`, 1)
  out(`${scenario}: paused before process exit (decision ${review.decisionId}, run ${run.runId})`)
  if (identity.mode === 'live') {
    out('Answer it in the Pushary app, then run the same command with "answer" instead of "start".')
  }
  report({
    phase: 'start',
    scenario,
    status: 'pending',
    decisionId: review.decisionId,
    runId: run.runId,
    refunds,
  })
  return 0
}

interface PhaseContext {
  dir: string
  scenario: Scenario
  db: AppDatabase
  service: Service
  identity: PinnedIdentity
  app: ReturnType<typeof buildAgentApp>
  flags: { value?: string | undefined; check: boolean; recover: boolean }
}

const DEFAULT_TAP: Record<Scenario, string> = { approve: 'yes', deny: 'no', select: 'yes', input: 'yes' }

/** Every tool result of an agent output, by tool call ID (Mastra's chunk shape). */
function toolResults(output: unknown): Record<string, unknown> {
  const results: Record<string, unknown> = {}
  for (const entry of ((output as { toolResults?: unknown[] })?.toolResults ?? []) as Record<
    string,
    unknown
  >[]) {
    const payload = (entry.payload ?? entry) as Record<string, unknown>
    results[String(payload.toolCallId)] = payload.result ?? payload.output
  }
  return results
}

async function answer(ctx: PhaseContext): Promise<number> {
  const { scenario, db, app, identity, service } = ctx
  const saved = await db.action()
  if (!saved) throw new ExitError('Run start before answer, using this directory and scenario.', 1)
  const { decisionId } = saved
  if (ctx.flags.recover) return recover(ctx, decisionId)

  if (service.embedded && !ctx.flags.check) {
    const decision = await service.client.decisions.get(decisionId)
    if (decision.status === 'pending') {
      const value = ctx.flags.value ?? DEFAULT_TAP[scenario]
      await service.client.decisions.answer(decisionId, value)
      out(`tapped ${JSON.stringify(value)} on the local service`)
    }
  }
  const resume = () =>
    resumePusharyAgentReview(
      { client: service.client },
      {
        agent: app.agent,
        agentId: AGENT_ID,
        externalId: identity.externalId,
        decisionId,
        store: app.store,
        currentActionVersion: () => ACTION_VERSION,
      },
    )
  const result = await resume()
  const refunds = () => db.refunds()
  if (result.status !== 'resumed') {
    const outputSaved = (await db.output(decisionId)) !== null
    report({
      phase: 'answer',
      scenario,
      status: result.status,
      reason: result.reason ?? null,
      outputSaved,
      refunds: await refunds(),
    })
    switch (result.status) {
      case 'pending':
        out(`${scenario}: pending; nobody answered yet. Run answer again later.`)
        return 0
      case 'duplicate':
        if (outputSaved) {
          out(`${scenario}: duplicate; this action was already resumed and its output saved.`)
          return 0
        }
        out(
          `${scenario}: duplicate with no saved output: the process that resumed it died before saving. ` +
            'Manual recovery: inspect the agent run; the refund is never executed again.',
        )
        return 1
      case 'busy':
        out(
          `${scenario}: busy; another process holds this resume. If none is running (it died midway), ` +
            'recovery is needed: run answer with --recover. Retrying will not help.',
        )
        return 1
      default:
        out(
          `${scenario}: ${result.status}; this action needs recovery and is never restarted (${result.reason ?? ''}).`,
        )
        return 1
    }
  }

  crashAt('before-output-saved')
  const output = result.output as { text?: string; finishReason?: string }
  const tools = toolResults(output)
  await db.saveOutput(decisionId, {
    text: output.text,
    finishReason: output.finishReason,
    toolResults: tools,
    answer: result.answer,
  })
  const problems: string[] = []
  if (output.finishReason !== 'stop' || output.text !== 'Finished')
    problems.push(`output ${output.finishReason}: ${output.text}`)
  const approvalAction = result.review.kind === 'approval'
  if (!approvalAction) {
    const asked = tools.call_1 as { value?: unknown; approved?: unknown } | undefined
    if (asked?.value !== result.answer.value || asked?.approved !== false) {
      problems.push(`the question tool returned ${JSON.stringify(asked)}`)
    }
  }
  const expected = approvalAction && result.answer.approved ? 1 : 0
  const executed = await refunds()
  if (executed !== expected) problems.push(`refunds executed ${executed}, expected ${expected}`)
  const again = await resume()
  if (again.status !== 'duplicate') problems.push(`a second resume returned ${again.status}`)
  if ((await refunds()) !== executed) problems.push('a second resume executed the refund again')
  report({
    phase: 'answer',
    scenario,
    status: 'resumed',
    answer: result.answer,
    refunds: executed,
    secondResume: again.status,
    problems,
  })
  if (problems.length > 0) {
    out(`${scenario}: FAILED: ${problems.join('; ')}`)
    return 1
  }
  out(`${scenario}: recovered in a fresh process, answered, duplicate ignored`)
  return 0
}

/**
 * The operator's path after a crash mid-resume: the dispatcher settles what
 * it can prove; otherwise the business receipt (the refunds table) decides.
 */
async function recover(ctx: PhaseContext, decisionId: string): Promise<number> {
  const { db, app, service, scenario } = ctx
  const dispatcher = createPusharyDispatcher({ mastra: app.mastra, client: service.client, store: app.store })
  const result = await dispatcher.recover(decisionId)
  let outcome: string = result.status
  if (result.status === 'uncertain') {
    const review = await app.store.get(decisionId)
    const executed = await db.refunds()
    if (review?.state === 'resuming' || review?.state === 'uncertain') {
      if (executed > 0) {
        await app.store.recover(
          decisionId,
          'completed',
          `refund receipt found (${executed}) after a crash mid-resume`,
        )
        outcome = 'completed'
      } else {
        await app.store.recover(
          decisionId,
          'stale',
          'no refund receipt: not executed; start a new action to retry',
        )
        outcome = 'stale'
      }
      await db.saveOutput(decisionId, { recovered: outcome, reason: result.reason })
    }
  }
  const review = await app.store.get(decisionId)
  report({
    phase: 'recover',
    scenario,
    status: result.status,
    outcome,
    state: review?.state ?? null,
    refunds: await db.refunds(),
  })
  out(
    `${scenario}: recovery ${outcome}; the review is ${review?.state}. The refund was never executed again.`,
  )
  return review?.state === 'completed' || review?.state === 'stale' ? 0 : 1
}

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
