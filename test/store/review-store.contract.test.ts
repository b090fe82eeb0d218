import { getSimplePaths } from '@xstate/graph'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  isTerminalReviewState,
  nextReviewState,
  REVIEW_EVENTS,
  type ReviewEventType,
  type ReviewState,
  reviewLifecycleMachine,
} from '../../src/machines/review-lifecycle.js'
import type { PusharyReview } from '../../src/store/review-schema.js'
import type { PusharyReviewStore } from '../../src/store/review-store.js'
import { isPusharyStoreError, type PusharyStoreErrorCode } from '../../src/store/store-error.js'
import { agentReview, workflowReview } from './support/reviews.js'
import { STORE_KINDS, type StoreHarness, stopTestPostgres } from './support/stores.js'

async function storeError(
  promise: Promise<unknown>,
): Promise<{ code: PusharyStoreErrorCode; field: string }> {
  try {
    await promise
  } catch (error) {
    if (isPusharyStoreError(error)) return { code: error.code, field: error.field }
    throw error
  }
  throw new Error('expected a PusharyStoreError, but the call succeeded')
}

/** Performs the store operation that corresponds to a machine event; reports whether the store accepted it. */
async function apply(
  store: PusharyReviewStore,
  review: PusharyReview,
  event: ReviewEventType,
): Promise<boolean> {
  const id = review.decisionId
  const refusedWith = async (promise: Promise<unknown>, code: PusharyStoreErrorCode) => {
    try {
      await promise
      return true
    } catch (error) {
      if (isPusharyStoreError(error) && error.code === code) return false
      throw error
    }
  }
  switch (event) {
    case 'CLAIM':
      return (await store.claim(id, review.runId)) === 'claimed'
    case 'RESUMED':
      return refusedWith(store.finish(id, 'completed'), 'not_claimed')
    case 'STALE_DETECTED':
      return refusedWith(store.finish(id, 'stale', 'The business version changed.'), 'not_claimed')
    case 'FAILED_AFTER_CLAIM':
      return refusedWith(store.finish(id, 'uncertain', 'Mastra resume threw: socket hang up'), 'not_claimed')
    case 'OPERATOR_CONFIRMED_EXECUTED':
      return refusedWith(store.recover(id, 'completed', 'Refund receipt rf_1 found.'), 'not_recoverable')
    case 'OPERATOR_CONFIRMED_NOT_EXECUTED':
      return refusedWith(store.recover(id, 'stale', 'No refund receipt; run cancelled.'), 'not_recoverable')
    case 'NOT_APPLIED':
      return refusedWith(store.finish(id, 'pending', 'The step is suspended again.'), 'not_claimed')
    case 'OPERATOR_REOPENED':
      return refusedWith(
        store.recover(id, 'pending', 'Worker lacked the workflow; reopened.'),
        'not_recoverable',
      )
    case 'RECLAIM': {
      const since = (await store.history(id)).at(-1)?.at ?? ''
      return store.reclaim(id, since, 'Recovery after a crash.')
    }
    default: {
      const unreachable: never = event
      return unreachable
    }
  }
}

/** Asserts the store refuses, without a state change, every event the machine refuses in `state`. */
async function expectRefusals(store: PusharyReviewStore, review: PusharyReview, state: ReviewState) {
  for (const event of REVIEW_EVENTS) {
    if (nextReviewState(state, event) !== null) continue
    expect(await apply(store, review, event), `${event} from ${state}`).toBe(false)
    expect((await store.get(review.decisionId))?.state).toBe(state)
  }
  if (nextReviewState(state, 'CLAIM') === null) {
    // The run's own active review makes it busy; a terminal one is settled.
    const expected = isTerminalReviewState(state) ? 'settled' : 'busy'
    expect(await store.claim(review.decisionId, review.runId), `CLAIM from ${state}`).toBe(expected)
  }
}

/** A clock that moves one second per reading. */
function clock(start: string): () => number {
  let tick = Date.parse(start)
  return () => {
    tick += 1000
    return tick
  }
}

const paths = getSimplePaths(reviewLifecycleMachine).map((path) => ({
  name: path.steps.map((step) => step.event.type).join(' -> '),
  events: path.steps.map((step) => step.event.type as string).filter((type) => type !== 'xstate.init'),
  states: path.steps.map((step) => step.state.value as ReviewState),
}))

describe.each(STORE_KINDS)('$name review store', (kind) => {
  let harness: StoreHarness
  let store: PusharyReviewStore

  beforeAll(async () => {
    harness = await kind.setup('contract')
    store = harness.open()
  })

  afterAll(async () => {
    await harness.dispose()
    await stopTestPostgres()
  })

  describe('save and get', () => {
    it('reads back a saved agent review, defaulting its target to agent', async () => {
      const { target: _target, ...withoutTarget } = agentReview()
      await store.save(withoutTarget)
      expect(await store.get(withoutTarget.decisionId)).toEqual({ ...withoutTarget, target: 'agent' })
    })

    it('reads back a saved workflow-step review with its parent', async () => {
      const review = workflowReview()
      await store.save(review)
      expect(await store.get(review.decisionId)).toEqual(review)
    })

    it('returns null for a decision it has never seen', async () => {
      expect(await store.get('dec_unknown')).toBeNull()
    })

    it('treats saving the same binding again as a no-op with a single history entry', async () => {
      const review = agentReview()
      await store.save(review)
      await store.save({ ...review })
      const history = await store.history(review.decisionId)
      expect(history.map(({ from, to, event }) => ({ from, to, event }))).toEqual([
        { from: null, to: 'pending', event: null },
      ])
    })

    it('refuses a different binding under the same decision ID and names the differing field', async () => {
      const review = agentReview()
      await store.save(review)
      const conflict = await storeError(store.save({ ...review, toolCallId: 'call_other' }))
      expect(conflict).toEqual({ code: 'conflicting_binding', field: 'toolCallId' })
      expect(await store.get(review.decisionId)).toEqual(review)
    })

    it('keeps the first reported expiry when a replayed save computed another one', async () => {
      const review = workflowReview({ expiresAt: '2026-01-01T00:00:00.000Z' })
      await store.save(review)
      await store.save({ ...review, expiresAt: '2026-01-01T00:00:01.000Z' })
      expect(await store.get(review.decisionId)).toEqual(review)
      expect(await store.history(review.decisionId)).toHaveLength(1)
      const conflict = await storeError(store.save({ ...review, expiresAt: undefined, stepId: 'other' }))
      expect(conflict).toEqual({ code: 'conflicting_binding', field: 'stepId' })
    })

    it('refuses a workflow-step review under a decision ID bound to an agent review', async () => {
      const review = agentReview()
      await store.save(review)
      const other = workflowReview({ decisionId: review.decisionId, runId: review.runId })
      expect((await storeError(store.save(other))).code).toBe('conflicting_binding')
    })

    it('refuses to save a review in any state but pending, before writing anything', async () => {
      const review = agentReview({ state: 'completed' })
      expect(await storeError(store.save(review))).toEqual({ code: 'invalid_review', field: 'state' })
      expect(await store.get(review.decisionId)).toBeNull()
    })

    it('refuses a review with a blank run ID, naming the field', async () => {
      const review = agentReview({ runId: '   ' })
      expect(await storeError(store.save(review))).toEqual({ code: 'invalid_review', field: 'runId' })
      expect(await store.get(review.decisionId)).toBeNull()
    })

    it('keeps IDs byte for byte, whitespace included', async () => {
      const review = agentReview({ externalId: ' customer_1 ', runId: ' run with spaces ' })
      await store.save(review)
      const saved = await store.get(review.decisionId)
      expect(saved?.target === 'agent' ? saved.externalId : null).toBe(' customer_1 ')
      expect(await store.claim(review.decisionId, ' run with spaces ')).toBe('claimed')
    })

    it('reports a stored row that no longer parses as corrupt instead of returning it', async () => {
      const review = agentReview()
      await store.save(review)
      await harness.forceBinding(review.decisionId, '{"target":"agent","version":2}')
      expect((await storeError(store.get(review.decisionId))).code).toBe('corrupt_record')
    })
  })

  describe.each(paths)('lifecycle path $name', (path) => {
    it('ends in the machine state and refuses what the machine refuses at every step', async () => {
      const review = agentReview()
      await store.save(review)
      let state: ReviewState = 'pending'
      await expectRefusals(store, review, state)
      for (const event of path.events as ReviewEventType[]) {
        const expected = nextReviewState(state, event)
        expect(expected, `${event} from ${state}`).not.toBeNull()
        expect(await apply(store, review, event), `${event} from ${state}`).toBe(true)
        state = expected as ReviewState
        expect((await store.get(review.decisionId))?.state).toBe(state)
        await expectRefusals(store, review, state)
      }
      expect(state).toBe(path.states.at(-1))
      const history = await store.history(review.decisionId)
      expect(history.map((entry) => entry.to)).toEqual(path.states)
      expect(history.map((entry) => entry.event)).toEqual([null, ...path.events])
    })
  })

  describe('claim', () => {
    it('throws not_found for a decision that was never saved', async () => {
      expect(await storeError(store.claim('dec_never_saved', 'run_1'))).toEqual({
        code: 'not_found',
        field: 'decisionId',
      })
    })

    it('throws run_mismatch when the claim names another run, leaving the review pending', async () => {
      const review = agentReview()
      await store.save(review)
      expect(await storeError(store.claim(review.decisionId, 'run_other'))).toEqual({
        code: 'run_mismatch',
        field: 'runId',
      })
      expect((await store.get(review.decisionId))?.state).toBe('pending')
    })

    it("keeps the claimer's reason on the claim's history entry, and refuses a blank one before writing", async () => {
      const review = agentReview()
      await store.save(review)
      expect(await storeError(store.claim(review.decisionId, review.runId, ' '))).toEqual({
        code: 'invalid_argument',
        field: 'reason',
      })
      expect((await store.get(review.decisionId))?.state).toBe('pending')
      expect(await store.claim(review.decisionId, review.runId, 'fanning out 3 item(s)')).toBe('claimed')
      expect((await store.history(review.decisionId)).at(-1)).toMatchObject({
        event: 'CLAIM',
        reason: 'fanning out 3 item(s)',
      })
    })

    it('serializes the reviews of one run: busy while another is resuming or uncertain', async () => {
      const first = agentReview()
      const second = agentReview({ runId: first.runId })
      await store.save(first)
      await store.save(second)
      expect(await store.claim(first.decisionId, first.runId)).toBe('claimed')
      expect(await store.claim(second.decisionId, first.runId)).toBe('busy')
      await store.finish(first.decisionId, 'uncertain', 'resume threw')
      expect(await store.claim(second.decisionId, first.runId)).toBe('busy')
      await store.recover(first.decisionId, 'stale', 'operator: refund never ran')
      expect(await store.claim(second.decisionId, first.runId)).toBe('claimed')
      expect((await store.get(second.decisionId))?.state).toBe('resuming')
    })

    it('reports settled for a terminal review even while its run is busy', async () => {
      const done = agentReview()
      const active = agentReview({ runId: done.runId })
      await store.save(done)
      await store.save(active)
      await store.claim(done.decisionId, done.runId)
      await store.finish(done.decisionId, 'completed')
      await store.claim(active.decisionId, done.runId)
      expect(await store.claim(done.decisionId, done.runId)).toBe('settled')
    })

    it('gives exactly one of many concurrent claimers the review, across store instances', async () => {
      const review = agentReview()
      await store.save(review)
      const other = harness.open()
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, index) =>
          (index % 2 ? other : store).claim(review.decisionId, review.runId),
        ),
      )
      expect(results.filter((result) => result === 'claimed')).toHaveLength(1)
      expect(results.filter((result) => result !== 'claimed').every((result) => result === 'busy')).toBe(true)
    })

    it('lets only one of several reviews of one run be claimed when all are claimed at once, across store instances', async () => {
      const first = agentReview()
      const siblings = [first, ...Array.from({ length: 5 }, () => agentReview({ runId: first.runId }))]
      for (const review of siblings) await store.save(review)
      const other = harness.open()
      const results = await Promise.all(
        siblings.map((review, index) => (index % 2 ? other : store).claim(review.decisionId, first.runId)),
      )
      expect(results.filter((result) => result === 'claimed')).toHaveLength(1)
      expect(results.filter((result) => result !== 'claimed').every((result) => result === 'busy')).toBe(true)
      const states = await Promise.all(
        siblings.map(async (review) => (await store.get(review.decisionId))?.state),
      )
      expect(states.filter((state) => state === 'resuming')).toHaveLength(1)
      expect(states.filter((state) => state === 'pending')).toHaveLength(siblings.length - 1)
      const winner = siblings[results.indexOf('claimed')]
      expect((await store.history(winner?.decisionId ?? '')).map((entry) => entry.event)).toEqual([
        null,
        'CLAIM',
      ])
    })

    it('lets exactly one of many concurrent recoverers take over a crash-left claim, across store instances', async () => {
      const review = agentReview()
      await store.save(review)
      await store.claim(review.decisionId, review.runId)
      const since = (await store.history(review.decisionId)).at(-1)?.at ?? ''
      const other = harness.open()
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, index) =>
          (index % 2 ? other : store).reclaim(review.decisionId, since, 'Recovery after a crash.'),
        ),
      )
      expect(results.filter(Boolean)).toHaveLength(1)
      const history = await store.history(review.decisionId)
      expect(history.at(-1)).toMatchObject({ from: 'resuming', to: 'resuming', event: 'RECLAIM' })
      expect((history.at(-1)?.at ?? '') > since).toBe(true)
      // The claim moved on: the time the losers saw no longer takes it over.
      expect(await store.reclaim(review.decisionId, since, 'Second recovery.')).toBe(false)
      expect(await store.reclaim(review.decisionId, history.at(-1)?.at ?? '', 'Next recovery.')).toBe(true)
    })

    it('lets only the holder of a resuming claim keep it alive, without a history entry', async () => {
      const review = agentReview()
      await store.save(review)
      expect(
        await store.keepAlive(review.decisionId, (await store.claimState(review.decisionId))?.since ?? ''),
      ).toBeNull()
      await store.claim(review.decisionId, review.runId)
      const claimed = await store.claimState(review.decisionId)
      expect(claimed?.state).toBe('resuming')
      const next = await store.keepAlive(review.decisionId, claimed?.since ?? '')
      expect(next !== null && next > (claimed?.since ?? '')).toBe(true)
      expect((await store.claimState(review.decisionId))?.since).toBe(next)
      // The time it saw is outdated now: a stale heartbeat changes nothing.
      expect(await store.keepAlive(review.decisionId, claimed?.since ?? '')).toBeNull()
      expect((await store.history(review.decisionId)).map((entry) => entry.event)).toEqual([null, 'CLAIM'])
      expect(await store.claimState('dec_never_saved')).toBeNull()
    })

    it("times a lease (claim, keep-alive, takeover) by the store's clock and reports that clock with the claim", async () => {
      // An injected clock two minutes ahead, as on a host whose clock runs fast.
      const ahead = harness.open({ now: () => new Date(Date.now() + 120_000) })
      const review = agentReview()
      await ahead.save(review)
      await ahead.claim(review.decisionId, review.runId)
      const claimed = await ahead.claimState(review.decisionId)
      const near = (at: string | undefined) => Math.abs(Date.parse(at ?? '') - Date.now()) < 60_000
      expect(claimed?.state).toBe('resuming')
      expect(near(claimed?.since) && near(claimed?.now)).toBe(true)
      expect((claimed?.now ?? '') >= (claimed?.since ?? '')).toBe(true)
      const beat = await ahead.keepAlive(review.decisionId, claimed?.since ?? '')
      expect(near(beat ?? undefined) && (beat ?? '') > (claimed?.since ?? '')).toBe(true)
      expect(await ahead.reclaim(review.decisionId, beat ?? '', 'Recovery after a crash.')).toBe(true)
      const taken = await ahead.claimState(review.decisionId)
      expect(near(taken?.since) && (taken?.since ?? '') > (beat ?? '')).toBe(true)
    })

    it('never takes over a claim that is not resuming', async () => {
      const review = agentReview()
      await store.save(review)
      const since = (await store.history(review.decisionId)).at(-1)?.at ?? ''
      expect(await store.reclaim(review.decisionId, since, 'Recovery.')).toBe(false)
      expect((await store.get(review.decisionId))?.state).toBe('pending')
    })

    it('lets the database itself refuse a second active review in one run', async () => {
      const first = agentReview()
      const second = agentReview({ runId: first.runId })
      await store.save(first)
      await store.save(second)
      expect(await store.claim(first.decisionId, first.runId)).toBe('claimed')
      await expect(harness.forceState(second.decisionId, 'resuming')).rejects.toThrow()
      expect((await store.get(second.decisionId))?.state).toBe('pending')
    })
  })

  describe('finish, recover and reopening', () => {
    it('leaves a completed review completed when the same binding is saved again', async () => {
      const review = agentReview()
      await store.save(review)
      await store.claim(review.decisionId, review.runId)
      await store.finish(review.decisionId, 'completed')
      await store.save(review)
      expect((await store.get(review.decisionId))?.state).toBe('completed')
      expect(await store.claim(review.decisionId, review.runId)).toBe('settled')
    })

    it('refuses a conflicting binding after completion without touching the record', async () => {
      const review = agentReview()
      await store.save(review)
      await store.claim(review.decisionId, review.runId)
      await store.finish(review.decisionId, 'completed')
      expect((await storeError(store.save({ ...review, actionVersion: 'order-1001@v4' }))).code).toBe(
        'conflicting_binding',
      )
      expect(await store.get(review.decisionId)).toEqual({ ...review, state: 'completed' })
    })

    it('refuses finish from pending with not_claimed', async () => {
      const review = agentReview()
      await store.save(review)
      expect(await storeError(store.finish(review.decisionId, 'completed'))).toEqual({
        code: 'not_claimed',
        field: 'decisionId',
      })
      expect((await store.get(review.decisionId))?.state).toBe('pending')
    })

    it('throws not_found when finishing or recovering an unknown decision', async () => {
      expect((await storeError(store.finish('dec_nope', 'completed'))).code).toBe('not_found')
      expect((await storeError(store.recover('dec_nope', 'stale', 'checked'))).code).toBe('not_found')
    })

    it('requires an operator reason to recover and a known state to finish', async () => {
      const review = agentReview()
      await store.save(review)
      await store.claim(review.decisionId, review.runId)
      expect(await storeError(store.recover(review.decisionId, 'completed', ' '))).toEqual({
        code: 'invalid_argument',
        field: 'reason',
      })
      expect(await storeError(store.finish(review.decisionId, 'resuming' as never))).toEqual({
        code: 'invalid_argument',
        field: 'state',
      })
      expect((await store.get(review.decisionId))?.state).toBe('resuming')
    })

    it('notes the answer time with a claim that moved, keeps the first one, and refuses a malformed one before writing', async () => {
      const review = agentReview()
      await store.save(review)
      expect(
        await storeError(
          store.claim(review.decisionId, review.runId, undefined, { answeredAt: 'yesterday' }),
        ),
      ).toEqual({ code: 'invalid_argument', field: 'note.answeredAt' })
      expect((await store.get(review.decisionId))?.state).toBe('pending')
      const now = new Date()
      const window = { since: new Date(now.getTime() - 86_400_000).toISOString(), now: now.toISOString() }
      const answeredPending = async () => (await store.stats(window)).pending.answered
      const before = await answeredPending()
      const first = new Date(now.getTime() - 60_000).toISOString()
      expect(await store.claim(review.decisionId, review.runId, undefined, { answeredAt: first })).toBe(
        'claimed',
      )
      await store.finish(review.decisionId, 'pending', 'released')
      expect(await answeredPending()).toBe(before + 1)
      const later = new Date(now.getTime() - 1_000).toISOString()
      expect(await store.claim(review.decisionId, review.runId, undefined, { answeredAt: later })).toBe(
        'claimed',
      )
      await store.finish(review.decisionId, 'completed')
      // A claim that does not move the review notes nothing.
      expect(await store.claim(review.decisionId, review.runId, undefined, { answeredAt: later })).toBe(
        'settled',
      )
      expect(await answeredPending()).toBe(before)
    })

    it('writes the action outcome with the ending it explains, never onto a review the finish did not move', async () => {
      const review = agentReview()
      await store.save(review)
      const ran = { outcome: 'ran' as const, reason: 'the refund ran' }
      expect((await storeError(store.finish(review.decisionId, 'completed', undefined, ran))).code).toBe(
        'not_claimed',
      )
      expect(await store.actionOf(review.decisionId)).toBeNull()
      await store.claim(review.decisionId, review.runId)
      await store.finish(review.decisionId, 'completed', undefined, ran)
      expect((await store.get(review.decisionId))?.state).toBe('completed')
      expect(await store.actionOf(review.decisionId)).toMatchObject(ran)
      const late = { outcome: 'unknown' as const, reason: 'a late second ending' }
      expect((await storeError(store.finish(review.decisionId, 'uncertain', 'late', late))).code).toBe(
        'not_claimed',
      )
      expect(await store.actionOf(review.decisionId)).toMatchObject(ran)
    })

    it('refuses a malformed action outcome naming the field, before writing the ending', async () => {
      const review = agentReview()
      await store.save(review)
      await store.claim(review.decisionId, review.runId)
      const bad = { outcome: 'probably' as never, reason: 'guessing' }
      expect(await storeError(store.finish(review.decisionId, 'completed', undefined, bad))).toEqual({
        code: 'invalid_argument',
        field: 'action.outcome',
      })
      expect((await store.get(review.decisionId))?.state).toBe('resuming')
      expect(await store.actionOf(review.decisionId)).toBeNull()
    })

    it("records every transition with its reason, the injected time, and a claim at the store's own clock", async () => {
      const advance = clock('2030-01-01T00:00:00.000Z')
      const timed = harness.open({ now: () => new Date(advance()) })
      const review = agentReview()
      await timed.save(review)
      await timed.claim(review.decisionId, review.runId)
      await timed.finish(review.decisionId, 'uncertain', 'resume threw after the claim')
      await timed.recover(review.decisionId, 'completed', 'refund receipt rf_9 confirms execution')
      const history = await timed.history(review.decisionId)
      expect(history).toEqual([
        {
          decisionId: review.decisionId,
          from: null,
          to: 'pending',
          event: null,
          reason: null,
          at: '2030-01-01T00:00:01.000Z',
        },
        {
          decisionId: review.decisionId,
          from: 'pending',
          to: 'resuming',
          event: 'CLAIM',
          reason: null,
          at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
        },
        {
          decisionId: review.decisionId,
          from: 'resuming',
          to: 'uncertain',
          event: 'FAILED_AFTER_CLAIM',
          reason: 'resume threw after the claim',
          at: '2030-01-01T00:00:02.000Z',
        },
        {
          decisionId: review.decisionId,
          from: 'uncertain',
          to: 'completed',
          event: 'OPERATOR_CONFIRMED_EXECUTED',
          reason: 'refund receipt rf_9 confirms execution',
          at: '2030-01-01T00:00:03.000Z',
        },
      ])
      // A claim is a lease: timed by the database (this machine's clock here), never by the injected one.
      expect(Math.abs(Date.parse(history[1]?.at ?? '') - Date.now())).toBeLessThan(60_000)
    })

    it('keeps state across a fresh store instance, as after a process restart', async () => {
      const review = agentReview()
      await store.save(review)
      await store.claim(review.decisionId, review.runId)
      const restarted = harness.open()
      expect((await restarted.get(review.decisionId))?.state).toBe('resuming')
      expect(await restarted.claim(review.decisionId, review.runId)).toBe('busy')
    })
  })

  describe('listByState and receipts', () => {
    it('lists reviews in a state, those longest in it first, up to the limit', async () => {
      const advance = clock('2031-01-01T00:00:00.000Z')
      const timed = harness.open({ now: () => new Date(advance()) })
      const reviews = [agentReview(), agentReview(), agentReview()]
      for (const review of reviews) {
        await timed.save(review)
        await timed.claim(review.decisionId, review.runId)
      }
      for (const review of [...reviews].reverse()) {
        await timed.finish(review.decisionId, 'uncertain', 'lost response')
      }
      const uncertain = await timed.listByState('uncertain', { limit: 1000 })
      const ours = uncertain.filter((review) => reviews.some((r) => r.decisionId === review.decisionId))
      expect(ours.map((review) => review.decisionId)).toEqual([...reviews].reverse().map((r) => r.decisionId))
      expect(await timed.listByState('uncertain', { limit: 2 })).toHaveLength(2)
    })

    it('pages on after a cursor and starts over when the cursor has left the state', async () => {
      const advance = clock('2032-01-01T00:00:00.000Z')
      const timed = harness.open({ now: () => new Date(advance()) })
      const reviews = [agentReview(), agentReview(), agentReview(), agentReview()]
      for (const review of reviews) {
        await timed.save(review)
        await timed.claim(review.decisionId, review.runId)
        await timed.finish(review.decisionId, 'uncertain', 'lost response')
      }
      const ids = reviews.map((review) => review.decisionId)
      const ours = (list: { decisionId: string }[]) =>
        list.map((review) => review.decisionId).filter((id) => ids.includes(id))
      const all = ours(await timed.listByState('uncertain', { limit: 1000 }))
      expect(all).toEqual(ids)

      const afterFirst = ours(await timed.listByState('uncertain', { limit: 1000, after: ids[0]! }))
      expect(afterFirst).toEqual(ids.slice(1))
      const page = await timed.listByState('uncertain', { limit: 1, after: ids[1]! })
      expect(page.map((review) => review.decisionId)).toEqual([ids[2]])

      await timed.recover(ids[1]!, 'completed', 'operator confirmed the refund ran')
      const restarted = ours(await timed.listByState('uncertain', { limit: 1000, after: ids[1]! }))
      expect(restarted).toEqual([ids[0], ids[2], ids[3]])
      expect(await storeError(timed.listByState('uncertain', { limit: 5, after: '  ' }))).toEqual({
        code: 'invalid_argument',
        field: 'after',
      })
    })

    it('refuses a missing or non-integer limit and an unknown state, naming the field', async () => {
      expect(await storeError(store.listByState('pending', { limit: 0 }))).toEqual({
        code: 'invalid_argument',
        field: 'limit',
      })
      expect(await storeError(store.listByState('pending', { limit: 1.5 }))).toEqual({
        code: 'invalid_argument',
        field: 'limit',
      })
      expect(await storeError(store.listByState('waiting' as never, { limit: 5 }))).toEqual({
        code: 'invalid_argument',
        field: 'state',
      })
    })

    it('keeps every callback receipt of a decision, in arrival order, even before the review exists', async () => {
      const decisionId = `dec_early_${Date.now()}`
      await store.recordReceipt({ decisionId, receivedAt: '2030-01-01T00:00:00.000Z', body: '{"n":1}' })
      await store.recordReceipt({ decisionId, receivedAt: '2030-01-01T00:00:01.000Z', body: '{"n":2}' })
      expect(await store.listReceipts(decisionId)).toEqual([
        { decisionId, receivedAt: '2030-01-01T00:00:00.000Z', body: '{"n":1}' },
        { decisionId, receivedAt: '2030-01-01T00:00:01.000Z', body: '{"n":2}' },
      ])
    })

    it('refuses a receipt without an ISO receive time, naming the field', async () => {
      expect(
        await storeError(store.recordReceipt({ decisionId: 'dec_1', receivedAt: 'yesterday', body: '{}' })),
      ).toEqual({ code: 'invalid_argument', field: 'receivedAt' })
    })

    it('refuses every operation after close with a closed error', async () => {
      const closing = harness.open()
      await closing.close()
      await closing.close()
      expect((await storeError(closing.get('dec_1'))).code).toBe('closed')
    })
  })
})
