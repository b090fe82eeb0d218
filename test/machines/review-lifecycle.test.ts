import { getSimplePaths } from '@xstate/graph'
import { describe, expect, it } from 'vitest'
import { createActor } from 'xstate'
import {
  isReviewEventType,
  isReviewState,
  isTerminalReviewState,
  nextReviewState,
  REVIEW_EVENTS,
  REVIEW_STATES,
  reviewLifecycleMachine,
} from '../../src/machines/review-lifecycle.js'

describe('reviewLifecycleMachine', () => {
  it('starts every review in pending', () => {
    const actor = createActor(reviewLifecycleMachine).start()
    expect(actor.getSnapshot().value).toBe('pending')
    actor.stop()
  })

  it('defines exactly the five review states', () => {
    expect(Object.keys(reviewLifecycleMachine.root.states).sort()).toEqual([...REVIEW_STATES].sort())
  })

  it('lets only a claim leave pending', () => {
    const allowed = REVIEW_EVENTS.filter((event) => nextReviewState('pending', event) !== null)
    expect(allowed).toEqual(['CLAIM'])
    expect(nextReviewState('pending', 'CLAIM')).toBe('resuming')
  })

  it('finishes a claimed review as completed, stale or uncertain', () => {
    expect(nextReviewState('resuming', 'RESUMED')).toBe('completed')
    expect(nextReviewState('resuming', 'STALE_DETECTED')).toBe('stale')
    expect(nextReviewState('resuming', 'FAILED_AFTER_CLAIM')).toBe('uncertain')
    expect(nextReviewState('resuming', 'CLAIM')).toBeNull()
  })

  it('resolves uncertain and crash-left resuming reviews only through operator events', () => {
    for (const state of ['uncertain', 'resuming'] as const) {
      expect(nextReviewState(state, 'OPERATOR_CONFIRMED_EXECUTED')).toBe('completed')
      expect(nextReviewState(state, 'OPERATOR_CONFIRMED_NOT_EXECUTED')).toBe('stale')
    }
    const uncertainExits = REVIEW_EVENTS.filter((event) => nextReviewState('uncertain', event) !== null)
    expect(uncertainExits).toEqual([
      'OPERATOR_CONFIRMED_EXECUTED',
      'OPERATOR_CONFIRMED_NOT_EXECUTED',
      'OPERATOR_REOPENED',
    ])
  })

  it('lets recovery take over a crash-left claim without leaving resuming', () => {
    expect(nextReviewState('resuming', 'RECLAIM')).toBe('resuming')
    for (const state of ['pending', 'completed', 'stale', 'uncertain'] as const) {
      expect(nextReviewState(state, 'RECLAIM')).toBeNull()
    }
  })

  it('never lets anything leave completed, and only an operator reopen leave stale', () => {
    for (const event of REVIEW_EVENTS) expect(nextReviewState('completed', event)).toBeNull()
    const staleExits = REVIEW_EVENTS.filter((event) => nextReviewState('stale', event) !== null)
    expect(staleExits).toEqual(['OPERATOR_REOPENED'])
    expect(nextReviewState('stale', 'OPERATOR_REOPENED')).toBe('pending')
    expect(REVIEW_STATES.filter(isTerminalReviewState)).toEqual(['completed', 'stale'])
  })

  it('resets nothing by a timeout: no state has a delayed or eventless transition', () => {
    for (const node of Object.values(reviewLifecycleMachine.root.states)) {
      expect(node.after, node.key).toEqual([])
      expect(node.always ?? [], node.key).toEqual([])
      for (const event of node.transitions.keys()) expect(event.startsWith('xstate.after')).toBe(false)
    }
  })

  it('decides every transition by state and event type alone (no guards or actions), as nextReviewState caches it', () => {
    for (const node of Object.values(reviewLifecycleMachine.root.states)) {
      expect(node.entry, node.key).toEqual([])
      expect(node.exit, node.key).toEqual([])
      for (const [event, candidates] of node.transitions) {
        expect(candidates, `${node.key} ${event}`).toHaveLength(1)
        for (const candidate of candidates) {
          expect(candidate.guard, `${node.key} ${event}`).toBeUndefined()
          expect(candidate.actions, `${node.key} ${event}`).toEqual([])
        }
      }
    }
    // Asked twice, the cached answer is the machine's.
    for (const state of REVIEW_STATES) {
      for (const event of REVIEW_EVENTS) {
        const actor = createActor(reviewLifecycleMachine, {
          snapshot: reviewLifecycleMachine.resolveState({ value: state, context: undefined }),
        }).start()
        const moved = actor.getSnapshot().can({ type: event })
        if (moved) actor.send({ type: event })
        const expected = moved ? actor.getSnapshot().value : null
        actor.stop()
        expect(nextReviewState(state, event), `${state} ${event}`).toBe(expected)
        expect(nextReviewState(state, { type: event } as never), `${state} ${event}`).toBe(expected)
      }
    }
  })

  it('agrees with a running actor on every simple path @xstate/graph finds from pending', () => {
    const paths = getSimplePaths(reviewLifecycleMachine)
    const endStates = new Set(paths.map((path) => path.state.value))
    expect([...endStates].sort()).toEqual([...REVIEW_STATES].sort())
    for (const path of paths) {
      let state: ReturnType<typeof nextReviewState> = 'pending'
      const actor = createActor(reviewLifecycleMachine).start()
      for (const step of path.steps) {
        if ((step.event.type as string) === 'xstate.init') continue
        state = nextReviewState(state!, step.event)
        actor.send(step.event)
        expect(state).toBe(actor.getSnapshot().value)
      }
      expect(state).toBe(path.state.value)
      actor.stop()
    }
  })

  it('returns a review to pending only from a resume that ran nothing or by an operator reopen', () => {
    const toPending = REVIEW_STATES.flatMap((state) =>
      REVIEW_EVENTS.filter((event) => nextReviewState(state, event) === 'pending').map(
        (event) => `${state} ${event}`,
      ),
    )
    expect(toPending.sort()).toEqual([
      'resuming NOT_APPLIED',
      'stale OPERATOR_REOPENED',
      'uncertain OPERATOR_REOPENED',
    ])
  })
})

describe('lifecycle guards and documentation', () => {
  it('recognises exactly the review states and events, and nothing else', () => {
    for (const state of REVIEW_STATES) expect(isReviewState(state)).toBe(true)
    for (const event of REVIEW_EVENTS) expect(isReviewEventType(event)).toBe(true)
    for (const value of ['', 'PENDING', 'claim', 'deleted', 5, null, undefined, { type: 'CLAIM' }]) {
      expect(isReviewState(value)).toBe(false)
      expect(isReviewEventType(value)).toBe(false)
    }
    expect(isReviewState('CLAIM')).toBe(false)
    expect(isReviewEventType('pending')).toBe(false)
  })

  it('names the machine and describes every state and every transition, for the diagram and inspectors', () => {
    expect(reviewLifecycleMachine.id).toBe('reviewLifecycle')
    for (const node of Object.values(reviewLifecycleMachine.root.states)) {
      expect(node.description, node.key).toMatch(/\w/)
      for (const [event, definitions] of node.transitions) {
        for (const definition of definitions)
          expect(definition.description, `${node.key} ${event}`).toMatch(/\w/)
      }
    }
  })
})
