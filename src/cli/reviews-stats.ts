/**
 * `pushary-mastra reviews stats`: the operator's numbers
 * (`readPusharyReviewStats`) as readable text or, with `--json`, the
 * function's object itself, so a script and a metrics endpoint read the same.
 */
import { REVIEW_STATES } from '../machines/review-lifecycle.js'
import { readPusharyReviewStats } from '../store/review-stats.js'
import type { PusharyReviewStats } from '../store/review-stats-shape.js'
import type { PusharyReviewStore } from '../store/review-store.js'
import { type CommandIo, terminalSafe } from './command-io.js'

/** A duration as an operator reads it: `850ms`, `42s`, `12m 5s`, `3h 4m`, `2d 5h`. */
export function readableDuration(ms: number | null): string {
  if (ms === null) return '-'
  if (ms < 1000) return `${Math.round(ms)}ms`
  const s = Math.floor(ms / 1000)
  if (s < 60) return `${s}s`
  const m = Math.floor(s / 60)
  if (m < 60) return `${m}m ${s % 60}s`
  const h = Math.floor(m / 60)
  if (h < 24) return `${h}h ${m % 60}m`
  return `${Math.floor(h / 24)}d ${h % 24}h`
}

function counts(record: Readonly<Record<string, number | undefined>>): string {
  const entries = Object.entries(record).filter(([, n]) => n !== undefined)
  return entries.length === 0 ? 'none' : entries.map(([key, n]) => `${key} ${n}`).join(', ')
}

/** The text report of {@link PusharyReviewStats}. */
export function statsText(stats: PusharyReviewStats): string[] {
  const lines = [`review numbers at ${stats.now} (window from ${stats.since})`, '', 'now:']
  for (const state of REVIEW_STATES) {
    const row = stats.states[state]
    const oldest =
      row.count === 0 ? '' : `  oldest ${readableDuration(row.oldestAgeMs)} (since ${row.oldestSince})`
    lines.push(`  ${state.padEnd(10)} ${String(row.count).padStart(6)}${oldest}`)
  }
  lines.push(
    `  answered, not resumed  ${stats.pending.answered}${stats.pending.answered === 0 ? '' : `  oldest answer ${readableDuration(stats.pending.oldestAnsweredAgeMs)} ago`}`,
    `  misconfigured          ${stats.misconfigured.count}${stats.misconfigured.count === 0 ? '' : `  (${counts(stats.misconfigured.byGap)})`}`,
    `  uncertain              ${stats.uncertain}${stats.uncertain === 0 ? '' : '  (pushary-mastra reviews list --state uncertain, then reviews recover)'}`,
    '',
    'in the window:',
  )
  const latency = stats.answeredToResumed
  lines.push(
    `  answered to resumed    ${latency.count} resumes, median ${readableDuration(latency.medianMs)}, p95 ${readableDuration(latency.p95Ms)}, max ${readableDuration(latency.maxMs)}`,
    `  endings                completed ${stats.endings.completed}, stale ${stats.endings.stale}, uncertain ${stats.endings.uncertain}`,
    `  by event               ${counts(stats.endings.byEvent)}`,
    `  action outcomes        ${counts(stats.actions)}`,
    `  callbacks received     ${stats.callbacksReceived}`,
  )
  return lines
}

/**
 * Prints the numbers of `store` (text, or JSON equal to the function's result).
 *
 * @example
 * await printReviewStats(store, { now: undefined, since: undefined }, false, io)
 */
export async function printReviewStats(
  store: PusharyReviewStore,
  window: { readonly now: Date | undefined; readonly since: Date | undefined },
  json: boolean,
  io: CommandIo,
): Promise<number> {
  const stats = await readPusharyReviewStats(store, {
    ...(window.now === undefined ? {} : { now: window.now }),
    ...(window.since === undefined ? {} : { since: window.since }),
  })
  if (json) {
    io.stdout.write(`${terminalSafe(JSON.stringify(stats))}\n`)
    return 0
  }
  for (const line of statsText(stats)) io.stdout.write(`${terminalSafe(line)}\n`)
  return 0
}
