/**
 * The claim a multi-item parent holds while its batch step fans out. Until
 * the parent's suspension is persisted, nothing else marks the run as ours:
 * a process killed mid fan-out would leave the run `running` with no review,
 * and nothing would ever resume it. So the first pass saves the parent's
 * `batch-parent` review and claims it before asking anything, keeps the
 * claim alive while it starts the children, and releases it (`pending`)
 * just before it suspends. A crash leaves the claim `resuming` with a holder
 * that stopped proving it is alive, which `dispatcher.recover` takes over
 * (one winner) and restarts; a slow, live fan-out keeps its claim fresh and
 * is never taken over.
 */
import type { PusharyAnswer } from '../pushary/question.js'
import { whileHoldingClaim } from '../resume/claim-lease.js'
import type { PusharyBatchParentReview } from '../store/review-schema.js'
import type { PusharyReviewStore } from '../store/review-store.js'

/** What the first pass found: every answer, or `null` while an item is still open. */
type FanOutAnswers = PusharyAnswer[] | null

/**
 * Runs the batch step's first pass under the parent's claim. Returns the
 * answers or `null` (suspend), or `'held_elsewhere'` when another live
 * process holds this very parent's claim (a concurrent start of the same run,
 * or a recoverer): this pass then asks nothing and only suspends, so at most
 * one execution can continue past the batch step.
 *
 * @example
 * const outcome = await fanOutUnderClaim({ store, review, recovering: false, claimLeaseMs: 30_000, fanOut })
 */
export async function fanOutUnderClaim(input: {
  store: PusharyReviewStore
  review: PusharyBatchParentReview
  /** The run is a `dispatcher.recover` restart: the recoverer holds the parent's claim. */
  recovering: boolean
  claimLeaseMs: number
  fanOut: () => Promise<FanOutAnswers>
}): Promise<FanOutAnswers | 'held_elsewhere'> {
  const { store, review } = input
  const id = review.decisionId
  await store.save(review)
  const reason = `fanning out ${review.count} item(s); the process keeps this claim alive until the parent suspends`
  switch (await store.claim(id, review.runId, reason)) {
    case 'claimed':
      break
    case 'busy': {
      // Either this parent's claim is held (refuse to fan out twice, unless
      // the holder is the recoverer that restarted us), or another review of
      // the run is being resumed and this pass runs inside that resume, whose
      // claim then governs the run.
      const claim = await store.claimState(id)
      if (claim?.state === 'resuming' && !input.recovering) return 'held_elsewhere'
      return input.fanOut()
    }
    case 'settled':
      // A parent review that already ended (a re-run of an old run ID): as
      // before the claim existed, the pass reads its children and goes on.
      return input.fanOut()
  }
  return whileHoldingClaim(store, id, input.claimLeaseMs, async () => {
    let answers: FanOutAnswers
    try {
      answers = await input.fanOut()
    } catch (error) {
      // Nothing past the batch step ran: release the claim with the reason.
      const why = error instanceof Error ? error.message : String(error)
      await store.finish(id, 'pending', `the fan-out failed; nothing past the batch step ran: ${why}`)
      throw error
    }
    if (answers === null) {
      // Released before Mastra persists the suspension. A crash in between
      // leaves this review `pending` on a `running` run: `recover` claims it
      // and restarts the run; a restarted pass continues past the batch step
      // only under that claim, so a late suspension write changes nothing.
      await store.finish(
        id,
        'pending',
        'fanned out; the parent waits on its batch step until every item settled',
      )
      return null
    }
    // Every item settled while the children were being started: the run goes
    // on in this process, past the batch step, exactly as before the claim.
    await store.finish(
      id,
      'completed',
      'every item settled during the fan-out; the run continued without suspending',
    )
    return answers
  })
}
