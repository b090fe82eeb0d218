/**
 * The one implementation of the store rules. Each database supplies only a
 * {@link ReviewStoreDriver} (SQL, locking, retries); the claim rule, the
 * binding comparison and every transition come from here and from the
 * lifecycle machine, so all stores behave identically.
 */
import { isTerminalReviewState, nextReviewState, type ReviewEventType } from '../machines/review-lifecycle.js'
import { idSchema } from '../pushary/identity.js'
import { forgetClaimTime, rememberClaimTime } from './claim-times.js'
import { actionCalls, storedActionOf } from './review-actions.js'
import { permitCalls } from './review-permits.js'
import { pusharyReviewSchema, reviewReceiptSchema, reviewStateSchema } from './review-schema.js'
import { statsCalls } from './review-stats.js'
import type { PusharyReviewStore, ReviewClaimResult } from './review-store.js'
import {
  CLAIMABLE,
  checked,
  claimTimeSchema,
  FINISH_EVENTS,
  finishStateSchema,
  guarded,
  listLimitSchema,
  MOVES,
  optionalIdSchema,
  optionalTextSchema,
  optionalTimeSchema,
  RECOVERY_EVENTS,
  recoveryOutcomeSchema,
  refuseUnclaimable,
} from './store-checks.js'
import { ActiveRunConflict, type ReviewStoreDriver } from './store-driver.js'
import { PusharyStoreError } from './store-error.js'
import {
  bindingOf,
  firstDifference,
  laterThan,
  parseRow,
  parseTransition,
  sameBinding,
} from './store-rows.js'

/**
 * Builds a {@link PusharyReviewStore} over a database driver. Internal: the
 * public factories are `createSqliteReviewStore` and `createPostgresReviewStore`.
 * `now` times the writes that are not leases (save, finish, recover); a
 * lease (claim, keepAlive, reclaim) is timed by the database's own clock, and
 * `claimState` reports that clock beside the claim's time, so a lease is never
 * judged by one host's clock against another host's write.
 */
export function createReviewStore(driver: ReviewStoreDriver, now: () => Date): PusharyReviewStore {
  const timestamp = () => now().toISOString()
  let closed = false

  function open<T>(operation: string, body: () => Promise<T>): Promise<T> {
    if (closed) {
      return Promise.reject(
        new PusharyStoreError({ code: 'closed', operation, message: 'the store was closed' }),
      )
    }
    return guarded(operation, body)
  }

  function notFound(operation: string, decisionId: string): PusharyStoreError {
    return new PusharyStoreError({
      code: 'not_found',
      operation,
      field: 'decisionId',
      message: `no review for decision ${JSON.stringify(decisionId)}`,
    })
  }

  function refused(operation: 'finish' | 'recover', decisionId: string, from: string, event: string) {
    return new PusharyStoreError({
      code: operation === 'finish' ? 'not_claimed' : 'not_recoverable',
      operation,
      field: 'decisionId',
      message: `review ${JSON.stringify(decisionId)} is ${from}; the lifecycle refuses ${event} there`,
    })
  }

  async function transition(
    operation: 'finish' | 'recover',
    decisionId: string,
    event: ReviewEventType,
    reason: string | null,
    action?: string,
  ): Promise<void> {
    const oneStatement = driver.transitionInOneStatement
    if (oneStatement !== undefined) {
      const at = timestamp()
      const moves = MOVES[event]
      const result = await oneStatement({
        operation,
        decisionId,
        moves,
        event,
        reason,
        at,
        ...(action === undefined ? {} : { action }),
      })
      if (result === null) throw notFound(operation, decisionId)
      if (!result.moved) throw refused(operation, decisionId, result.state, event)
      return
    }
    await driver.write(operation, null, async (tx) => {
      const row = await tx.selectForUpdate(decisionId)
      if (row === null) throw notFound(operation, decisionId)
      const from = reviewStateSchema.parse(row.state)
      const to = nextReviewState(from, event)
      const at = timestamp()
      if (to === null || !(await tx.setState(decisionId, from, to, reason, at))) {
        throw refused(operation, decisionId, from, event)
      }
      await tx.appendTransition({ decisionId, from, to, event, reason, at })
      if (action !== undefined) await tx.setAction(decisionId, action)
    })
  }

  const store: PusharyReviewStore = {
    save: (input) =>
      open('save', async () => {
        const parsed = pusharyReviewSchema.safeParse(input)
        if (!parsed.success) {
          throw PusharyStoreError.fromZod(parsed.error, { operation: 'save', code: 'invalid_review' })
        }
        const review = parsed.data
        if (review.state !== 'pending') {
          throw new PusharyStoreError({
            code: 'invalid_review',
            operation: 'save',
            field: 'state',
            message: `a review is saved as pending, got ${review.state}; saving never sets state`,
          })
        }
        const binding = bindingOf(review)
        await driver.write('save', review.runId, async (tx) => {
          const at = timestamp()
          const row = {
            decisionId: review.decisionId,
            runId: review.runId,
            binding,
            state: 'pending',
            stateChangedAt: at,
          }
          if (await tx.insertPending({ ...row, target: review.target, at })) {
            await tx.appendTransition({
              decisionId: review.decisionId,
              from: null,
              to: 'pending',
              event: null,
              reason: null,
              at,
            })
            return
          }
          const stored = await tx.selectForUpdate(review.decisionId)
          if (stored !== null && sameBinding(stored.binding, binding)) return
          const field = stored === null ? 'decisionId' : firstDifference(stored.binding, binding)
          throw new PusharyStoreError({
            code: 'conflicting_binding',
            operation: 'save',
            field,
            message: `decision ${JSON.stringify(review.decisionId)} is already bound to a different review`,
          })
        })
      }),

    get: (decisionId) =>
      open('get', async () => {
        const id = checked(idSchema, decisionId, 'get', 'decisionId')
        const row = await driver.selectReview(id)
        return row === null ? null : parseRow(row, 'get')
      }),

    claim: (decisionId, runId, reason, note) =>
      open('claim', async () => {
        const id = checked(idSchema, decisionId, 'claim', 'decisionId')
        const run = checked(idSchema, runId, 'claim', 'runId')
        const why = checked(optionalIdSchema, reason, 'claim', 'reason') ?? null
        const answeredAt = checked(optionalTimeSchema, note?.answeredAt, 'claim', 'note.answeredAt') ?? null
        try {
          const oneStatement = driver.claimInOneStatement
          const [claimable] = CLAIMABLE
          if (oneStatement !== undefined && claimable !== undefined && CLAIMABLE.length === 1) {
            const row = await oneStatement({
              decisionId: id,
              runId: run,
              ...claimable,
              reason: why,
              answeredAt,
            })
            refuseUnclaimable(id, run, row)
            if (row.claimed) {
              rememberClaimTime(store, id, row.at)
              return 'claimed'
            }
            // Not moved: a settled review stays settled; a claimable one lost
            // the compare-and-set or its run has an active review, and one
            // held by another resumer is busy.
            return isTerminalReviewState(reviewStateSchema.parse(row.state)) ? 'settled' : 'busy'
          }
          return await driver.write('claim', run, async (tx): Promise<ReviewClaimResult> => {
            const row = await tx.selectForUpdate(id)
            refuseUnclaimable(id, run, row)
            const from = reviewStateSchema.parse(row.state)
            const to = nextReviewState(from, 'CLAIM')
            if (to === null) return isTerminalReviewState(from) ? 'settled' : 'busy'
            if (await tx.runHasActiveReview(run)) return 'busy'
            const at = await tx.clock()
            if (!(await tx.setState(id, from, to, why, at))) return 'busy'
            await tx.appendTransition({ decisionId: id, from, to, event: 'CLAIM', reason: why, at })
            if (answeredAt !== null) await tx.noteAnswered(id, answeredAt)
            rememberClaimTime(store, id, at)
            return 'claimed'
          })
        } catch (error) {
          if (error instanceof ActiveRunConflict) return 'busy'
          throw error
        }
      }),

    finish: (decisionId, state, reason, action) =>
      open('finish', async () => {
        const id = checked(idSchema, decisionId, 'finish', 'decisionId')
        const target = checked(finishStateSchema, state, 'finish', 'state')
        const why = checked(optionalTextSchema, reason, 'finish', 'reason')
        const stored = action === undefined ? undefined : storedActionOf('finish', action, now())
        forgetClaimTime(store, id)
        await transition('finish', id, FINISH_EVENTS[target], why ?? null, stored)
      }),

    recover: (decisionId, outcome, reason) =>
      open('recover', async () => {
        const id = checked(idSchema, decisionId, 'recover', 'decisionId')
        const target = checked(recoveryOutcomeSchema, outcome, 'recover', 'outcome')
        const why = checked(idSchema, reason, 'recover', 'reason')
        forgetClaimTime(store, id)
        await transition('recover', id, RECOVERY_EVENTS[target], why)
      }),

    reclaim: (decisionId, since, reason) =>
      open('reclaim', async () => {
        const id = checked(idSchema, decisionId, 'reclaim', 'decisionId')
        const seen = checked(claimTimeSchema, since, 'reclaim', 'since')
        const why = checked(idSchema, reason, 'reclaim', 'reason')
        const oneStatement = driver.transitionInOneStatement
        if (oneStatement !== undefined) {
          const move = { operation: 'reclaim' as const, decisionId: id, moves: MOVES.RECLAIM, since: seen }
          const result = await oneStatement({ ...move, event: 'RECLAIM', reason: why, at: null })
          if (result === null) throw notFound('reclaim', id)
          if (result.moved) rememberClaimTime(store, id, result.at)
          return result.moved
        }
        return driver.write('reclaim', null, async (tx) => {
          const row = await tx.selectForUpdate(id)
          if (row === null) throw notFound('reclaim', id)
          // The row is locked for this transaction: comparing the claim we saw
          // with the stored one is the compare-and-set that lets exactly one
          // of several concurrent recoverers take the claim over.
          const from = reviewStateSchema.parse(row.state)
          const to = nextReviewState(from, 'RECLAIM')
          if (to === null || row.stateChangedAt !== seen) return false
          const at = laterThan(seen, await tx.clock())
          if (!(await tx.setState(id, from, to, why, at))) return false
          await tx.appendTransition({ decisionId: id, from, to, event: 'RECLAIM', reason: why, at })
          rememberClaimTime(store, id, at)
          return true
        })
      }),

    claimState: (decisionId) =>
      open('claimState', async () => {
        const id = checked(idSchema, decisionId, 'claimState', 'decisionId')
        const row = await driver.selectClaimState(id)
        if (row === null) return null
        return { state: reviewStateSchema.parse(row.state), since: row.stateChangedAt, now: row.now }
      }),

    keepAlive: (decisionId, since) =>
      open('keepAlive', async () => {
        const id = checked(idSchema, decisionId, 'keepAlive', 'decisionId')
        const seen = checked(claimTimeSchema, since, 'keepAlive', 'since')
        return driver.write('keepAlive', null, async (tx) => {
          const row = await tx.selectForUpdate(id)
          if (row?.state !== 'resuming' || row.stateChangedAt !== seen) return null
          // A heartbeat is not a transition: no history row, same state.
          const at = laterThan(seen, await tx.clock())
          return (await tx.setState(id, 'resuming', 'resuming', null, at)) ? at : null
        })
      }),

    listByState: (state, options) =>
      open('listByState', async () => {
        const wanted = checked(reviewStateSchema, state, 'listByState', 'state')
        const limit = checked(listLimitSchema, options?.limit, 'listByState', 'limit')
        const after =
          options?.after === undefined ? null : checked(idSchema, options.after, 'listByState', 'after')
        const rows = await driver.selectByState(wanted, limit, after)
        return rows.map((row) => parseRow(row, 'listByState'))
      }),

    history: (decisionId) =>
      open('history', async () => {
        const id = checked(idSchema, decisionId, 'history', 'decisionId')
        return (await driver.selectHistory(id)).map(parseTransition)
      }),

    recordReceipt: (receipt) =>
      open('recordReceipt', async () => {
        const parsed = reviewReceiptSchema.safeParse(receipt)
        if (!parsed.success) {
          throw PusharyStoreError.fromZod(parsed.error, {
            operation: 'recordReceipt',
            code: 'invalid_argument',
          })
        }
        await driver.insertReceipt(parsed.data)
      }),

    listReceipts: (decisionId) =>
      open('listReceipts', async () => {
        const id = checked(idSchema, decisionId, 'listReceipts', 'decisionId')
        return driver.selectReceipts(id)
      }),

    ...permitCalls(driver, open),
    ...actionCalls(driver, open, now),
    ...statsCalls(driver, open, now),

    close: () => {
      if (closed) return Promise.resolve()
      closed = true
      return guarded('close', () => driver.close())
    },
  }
  return store
}
