/**
 * `pushary-mastra reviews`: the operator's view of the review store, and the
 * one sanctioned way to settle an `uncertain` (or crash-left `resuming`)
 * review from a shell. Arguments are checked first; the stores, Mastra and
 * the worker check load only for accepted arguments (`reviews-actions.ts`).
 */
import { type CommandIo, runParsedCommand } from './command-io.js'
import { parseReviewsArgs, REVIEWS_USAGE } from './reviews-args.js'

/**
 * Runs `pushary-mastra reviews`. Exit code 0 when done, 1 when the store
 * refused (an unknown decision, a recovery the lifecycle forbids) or failed,
 * 2 on bad arguments (checked before any database is opened).
 *
 * @example
 * ```ts
 * const code = await runReviewsCommand(['list', '--state', 'uncertain', '--db', 'reviews.db'], { stdout: process.stdout, stderr: process.stderr })
 * ```
 */
export function runReviewsCommand(argv: readonly string[], io: CommandIo): Promise<number> {
  return runParsedCommand('reviews', REVIEWS_USAGE, parseReviewsArgs(argv), io, async (parsed) => {
    const { runReviewsAction } = await import('./reviews-actions.js')
    return runReviewsAction(parsed, io)
  })
}
