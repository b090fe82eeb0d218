/**
 * The phases of the durable-agent CLI: start (ask and exit), answer (resume
 * in a fresh process), and the operator's recover after a crash mid-resume.
 */
import {
  createPusharyDispatcher,
  openPusharyAgentReview,
  type PusharyClient,
  type PusharyDevServer,
  resumePusharyAgentReview,
} from '@pushary/mastra'
import { linkSimulatedPhone } from '../shared/local-phone.js'
import {
  ACTION_VERSION,
  AGENT_ID,
  type AppDatabase,
  type buildAgentApp,
  CLAIM_LEASE_MS,
  crashAt,
  type PinnedIdentity,
  type Scenario,
} from './app.js'

export class ExitError extends Error {
  constructor(
    message: string,
    readonly code: 1 | 2,
  ) {
    super(message)
  }
}

export const out = (line = '') => process.stdout.write(`${line}\n`)
export const report = (value: Record<string, unknown>) => out(JSON.stringify(value))

export interface Service {
  client: PusharyClient
  identity: PinnedIdentity
  embedded: PusharyDevServer | null
  close(): Promise<void>
}

export interface PhaseContext {
  dir: string
  scenario: Scenario
  db: AppDatabase
  service: Service
  identity: PinnedIdentity
  app: ReturnType<typeof buildAgentApp>
  flags: { value?: string | undefined; check: boolean; recover: boolean }
}

async function linkPhoneIfEmbedded(service: Service, externalId: string): Promise<void> {
  if (service.embedded && (await linkSimulatedPhone(service.client, externalId))) {
    out(`linked a simulated phone for ${JSON.stringify(externalId)} on the embedded service`)
  }
}

export async function start(ctx: PhaseContext): Promise<number> {
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

export async function answer(ctx: PhaseContext): Promise<number> {
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
        claimLeaseMs: CLAIM_LEASE_MS,
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
      recoveryNeeded: result.status === 'busy' && result.recoveryNeeded === true,
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
        if (result.recoveryNeeded) {
          out(
            `${scenario}: busy; the process that held this resume died midway (its claim stopped moving). ` +
              'Recovery is needed: run answer with --recover. Retrying will not help.',
          )
          return 1
        }
        out(
          `${scenario}: busy; another process holds this resume. If none is running (it died midway), ` +
            `its claim counts as abandoned ${CLAIM_LEASE_MS / 1000} s after its last sign of life: run answer with --recover.`,
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
  const dispatcher = createPusharyDispatcher({
    mastra: app.mastra,
    client: service.client,
    store: app.store,
    claimLeaseMs: CLAIM_LEASE_MS,
  })
  // Recovery never takes over a claim whose holder may still be alive: wait
  // until it stopped moving for a whole lease (bounded, in case it is alive).
  let result = await dispatcher.recover(decisionId)
  for (
    let waited = 0;
    result.status === 'busy' && /alive/.test(result.reason ?? '') && waited < 3;
    waited++
  ) {
    out(`the claim may still be held by a live process; waiting ${CLAIM_LEASE_MS / 1000} s`)
    await new Promise((resolve) => setTimeout(resolve, CLAIM_LEASE_MS))
    result = await dispatcher.recover(decisionId)
  }
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
