/**
 * What `pushary-mastra reviews` does once its arguments were accepted: open
 * the review store and list, show, check or recover. `recover` is
 * `store.recover` itself, so the command can never allow a transition the
 * lifecycle machine refuses.
 */
import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { createClient } from '@libsql/client'
import type { Mastra } from '@mastra/core/mastra'
import { checkWorkerConfiguration } from '../agents/dispatcher.js'
import { recoverAsOperator } from '../resume/operator-recovery.js'
import { createPostgresReviewStore } from '../store/postgres-store.js'
import type { PusharyReview, ReviewPermit } from '../store/review-schema.js'
import type { PusharyReviewStore } from '../store/review-store.js'
import { createSqliteReviewStore } from '../store/sqlite-store.js'
import { isPusharyStoreError } from '../store/store-error.js'
import { type CommandIo, terminalSafe } from './command-io.js'
import type { ParsedReviewsArgs, ReviewsCommand, StoreLocation } from './reviews-args.js'
import { absentHint, CommandRefused, readRun } from './reviews-run.js'
import { printReviewStats } from './reviews-stats.js'

/**
 * Opens the review store an operator named, refusing a missing file or a
 * file that holds no review tables (nothing is created). The `dev` command's
 * review board opens its store through this too.
 *
 * @example
 * const store = await openStore({ kind: 'sqlite', file: 'reviews.db' })
 */
export async function openStore(location: StoreLocation): Promise<PusharyReviewStore> {
  if (location.kind === 'pg') {
    return createPostgresReviewStore({
      connectionString: location.url,
      ...(location.schema === undefined ? {} : { schema: location.schema }),
    })
  }
  const file = location.file.replace(/^file:/, '')
  // An operator's typo must not create (and then list) an empty database.
  if (!existsSync(file)) throw new CommandRefused(`no review store at ${file}`)
  // Nor may a command add review tables to a file that is something else
  // (the decision service's database, Mastra's storage): the store creates
  // its tables on first use, so look before opening it.
  const probe = createClient({ url: pathToFileURL(resolve(file)).href })
  try {
    const found = await probe.execute(
      "SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'pushary_reviews'",
    )
    if (Number(found.rows[0]?.n ?? 0) === 0) {
      throw new CommandRefused(
        `${file} is not a review store (it has no pushary_reviews table); nothing was changed`,
      )
    }
  } catch (error) {
    if (error instanceof CommandRefused) throw error
    throw new CommandRefused(`${file} is not a readable SQLite review store`)
  } finally {
    probe.close()
  }
  return createSqliteReviewStore({ url: `file:${file}` })
}

function where(review: PusharyReview): string {
  switch (review.target) {
    case 'workflow-step':
      return `${review.workflowId}/${review.runId} step ${review.stepId} op ${review.operationId}`
    case 'batch-parent':
      return `${review.workflowId}/${review.runId} batch ${review.stepId} (${review.count} items)`
    case 'agent':
      return `agent ${review.agentId}/${review.runId} tool ${review.toolName} call ${review.toolCallId}`
    default: {
      const unreachable: never = review
      return unreachable
    }
  }
}

async function list(
  store: PusharyReviewStore,
  command: Extract<ReviewsCommand, { action: 'list' }>,
  json: boolean,
  io: CommandIo,
): Promise<number> {
  const rows: PusharyReview[] = []
  for (const state of command.states) {
    rows.push(...(await store.listByState(state, { limit: command.limit })))
  }
  if (json) {
    const listed = []
    for (const review of rows) listed.push({ ...review, action: await store.actionOf(review.decisionId) })
    io.stdout.write(`${terminalSafe(JSON.stringify(listed))}\n`)
    return 0
  }
  if (rows.length === 0) io.stdout.write(`no reviews in ${command.states.join(', ')}\n`)
  for (const review of rows) {
    // Why it is in this state (e.g. a multi-item parent claimed while fanning out).
    const reason = (await store.history(review.decisionId)).at(-1)?.reason
    const action = (await store.actionOf(review.decisionId))?.outcome ?? '-'
    const row = `${review.decisionId}  ${review.state.padEnd(9)}  action ${action.padEnd(7)}  ${review.target}  ${where(review)}${reason ? `  "${reason}"` : ''}`
    io.stdout.write(`${terminalSafe(row)}\n`)
  }
  return 0
}

async function show(
  store: PusharyReviewStore,
  command: Extract<ReviewsCommand, { action: 'show' }>,
  json: boolean,
  io: CommandIo,
): Promise<number> {
  const review = await store.get(command.decisionId)
  if (!review) throw new CommandRefused(`no review for decision ${command.decisionId}`)
  const history = await store.history(command.decisionId)
  const receipts = await store.listReceipts(command.decisionId)
  // For a `resuming` review this moves while its holder is alive (keep-alive);
  // a time that stopped moving is what tells an operator the holder is gone.
  const claim = await store.claimState(command.decisionId)
  const mastra = command.mastra
  const run = mastra ? await readRun(mastra, review) : null
  // What happened to the approved action, as the ending read it from the evidence.
  const action = await store.actionOf(command.decisionId)
  // The permit a protected step spent on this decision (withPusharyPermit).
  const permit = await store.permitOf(command.decisionId)
  if (json) {
    const shown = { review, action, permit, claim, history, receipts, run }
    io.stdout.write(`${terminalSafe(JSON.stringify(shown))}\n`)
    return 0
  }
  const lines = [
    `decision   ${review.decisionId}`,
    `state      ${review.state} since ${claim?.since ?? '?'}${review.state === 'resuming' ? ' (a live holder keeps this time moving)' : ''}`,
    `action     ${action ? `${action.outcome} (${action.at}): ${action.reason}` : 'not recorded'}`,
    `permit     ${permit ? describePermit(review, permit) : review.target === 'workflow-step' && review.approverSet ? 'none on this decision (the set spends one, on the approval that settled it: see approvers)' : 'none'}`,
    `target     ${review.target}: ${where(review)}`,
    `binding    ${JSON.stringify(review)}`,
    'history',
    ...history.map(
      (entry) =>
        `  ${entry.at}  ${entry.from ?? '(saved)'} -> ${entry.to}${entry.event ? `  ${entry.event}` : ''}${entry.reason ? `  "${entry.reason}"` : ''}`,
    ),
    `receipts   ${receipts.length}`,
    ...receipts.map((receipt) => `  ${receipt.receivedAt}  ${receipt.body.slice(0, 200)}`),
  ]
  lines.push(...(await approverLines(store, review)))
  if (run && mastra) {
    lines.push(
      run.status === 'absent'
        ? `run        ${run.workflowId}/${run.runId}: absent from ${run.lookedIn}${absentHint(mastra)}`
        : `run        ${run.workflowId}/${run.runId}: ${run.status}${run.approval ? `, approval step ${run.approval}` : ''} (in ${run.lookedIn})`,
    )
  }
  io.stdout.write(`${lines.map(terminalSafe).join('\n')}\n`)
  return 0
}

/** Which permit was spent on which decision, for what, and (several approvers) on which set. */
function describePermit(review: PusharyReview, permit: ReviewPermit): string {
  const set = review.target === 'workflow-step' ? review.approverSet : undefined
  const who = (decisionId: string) => {
    const index = set?.decisionIds.indexOf(decisionId) ?? -1
    return index === -1 ? decisionId : `${decisionId} (${set?.externalIds[index]})`
  }
  const { toolName, toolTarget, externalId } = permit.action
  const spentOn = set ? who(review.decisionId) : `${review.decisionId}${externalId ? ` (${externalId})` : ''}`
  const settled = permit.settledBy
    ? `; the approvers' set was settled by ${permit.settledBy.map(who).join(', ')}`
    : ''
  return `${permit.permitId} spent on decision ${spentOn} for ${toolName}${toolTarget ? ` ${toolTarget}` : ''} at ${permit.consumedAt}${settled}`
}

/**
 * Several approvers: every member's review, its state and how it ended (the
 * set's record), and the permit on the member whose approval settled it.
 */
async function approverLines(store: PusharyReviewStore, review: PusharyReview): Promise<string[]> {
  if (review.target !== 'workflow-step' || !review.approverSet) return []
  const set = review.approverSet
  const lines = [
    `approvers  ${set.required} of ${set.externalIds.length} required${set.veto ? ', one denial declines' : ''}`,
  ]
  if (set.escalation) {
    lines.push(
      `escalation ${set.escalation
        .map((tier) => `then ${tier.externalIds.join(', ')} after ${tier.afterSeconds} s undecided`)
        .join('; ')}`,
    )
  }
  for (const [index, decisionId] of set.decisionIds.entries()) {
    const member = decisionId === review.decisionId ? review : await store.get(decisionId)
    const last = (await store.history(decisionId)).at(-1)
    const permit = await store.permitOf(decisionId)
    const who = member?.target === 'workflow-step' ? member.externalId : (set.externalIds[index] ?? '?')
    lines.push(
      `  ${who}  ${decisionId}  ${member?.state ?? 'missing'}${last?.reason ? `  "${last.reason}"` : ''}${permit ? `  permit ${permit.permitId}` : ''}`,
    )
  }
  if (set.escalation && set.decisionIds.length < set.externalIds.length) {
    // This member was asked before the last tier: it knows the members asked
    // until then; a later member's review lists every one asked before it.
    lines.push('  (members asked later, if any, are listed by their own reviews and in the run)')
  }
  return lines
}

async function recover(
  store: PusharyReviewStore,
  command: Extract<ReviewsCommand, { action: 'recover' }>,
  json: boolean,
  io: CommandIo,
): Promise<number> {
  // The same function the review board calls: one set of refusals.
  const result = await recoverAsOperator(store, { ...command, now: new Date() })
  if (result.status === 'refused') throw new CommandRefused(result.message)
  const { review, transition: last } = result
  const line = json
    ? JSON.stringify({ review, transition: last })
    : `${command.decisionId}: ${last?.from} -> ${last?.to} (${last?.event}) "${last?.reason}"`
  io.stdout.write(`${terminalSafe(line)}\n`)
  return 0
}

/**
 * Imports the worker's module and runs its startup self-check against the
 * review store: every pending review that worker could not resume, and why.
 */
async function check(
  store: PusharyReviewStore,
  command: Extract<ReviewsCommand, { action: 'check' }>,
  json: boolean,
  io: CommandIo,
): Promise<number> {
  const file = resolve(command.app)
  if (!existsSync(file)) throw new CommandRefused(`no module at ${file}`)
  const loaded = (await import(pathToFileURL(file).href)) as {
    mastra?: unknown
    default?: { mastra?: unknown }
  }
  const mastra = (loaded.mastra ?? loaded.default?.mastra ?? loaded.default) as Mastra | undefined
  if (!mastra || typeof (mastra as { getStorage?: unknown }).getStorage !== 'function') {
    throw new CommandRefused(
      `${command.app} exports no \`mastra\` (export const mastra = new Mastra({ ... }))`,
    )
  }
  const report = await checkWorkerConfiguration({ mastra, store })
  if (json) io.stdout.write(`${JSON.stringify(report)}\n`)
  else {
    io.stdout.write(
      `checked ${report.checked} pending review(s); ${report.problems.length} this worker cannot resume\n`,
    )
    for (const problem of report.problems) {
      io.stdout.write(`${problem.decisionId}  ${problem.target}  ${problem.missing}: ${problem.reason}\n`)
    }
  }
  return report.problems.length === 0 ? 0 : 1
}

async function execute(
  parsed: Extract<ParsedReviewsArgs, { status: 'run' }>,
  io: CommandIo,
): Promise<number> {
  const store = await openStore(parsed.store)
  try {
    switch (parsed.command.action) {
      case 'list':
        return await list(store, parsed.command, parsed.json, io)
      case 'show':
        return await show(store, parsed.command, parsed.json, io)
      case 'recover':
        return await recover(store, parsed.command, parsed.json, io)
      case 'check':
        return await check(store, parsed.command, parsed.json, io)
      case 'stats':
        return await printReviewStats(store, parsed.command, parsed.json, io)
      default: {
        const unreachable: never = parsed.command
        return unreachable
      }
    }
  } finally {
    await store.close()
  }
}

/**
 * Runs accepted `reviews` arguments. Exit code 0 when done, 1 when the store
 * refused (an unknown decision, a recovery the lifecycle forbids) or failed.
 *
 * @example
 * ```ts
 * const code = await runReviewsAction(parsed, { stdout: process.stdout, stderr: process.stderr })
 * ```
 */
export async function runReviewsAction(
  parsed: Extract<ParsedReviewsArgs, { status: 'run' }>,
  io: CommandIo,
): Promise<number> {
  try {
    return await execute(parsed, io)
  } catch (error) {
    if (error instanceof CommandRefused) {
      io.stderr.write(`pushary-mastra reviews: ${terminalSafe(error.message)}\n`)
      return 1
    }
    if (isPusharyStoreError(error)) {
      const payload = { error: error.code, message: error.message, field: error.field }
      if (parsed.json) io.stdout.write(`${terminalSafe(JSON.stringify(payload))}\n`)
      io.stderr.write(`pushary-mastra reviews: refused (${error.code}): ${terminalSafe(error.message)}\n`)
      return 1
    }
    throw error
  }
}
