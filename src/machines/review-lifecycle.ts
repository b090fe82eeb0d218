/**
 * The review lifecycle: the one place where the legal transitions of a review
 * record are defined. Stores never encode transitions themselves; they ask
 * {@link nextReviewState} and write with a compare-and-set on the state they
 * read, so a store cannot drift from the machine.
 */
import { setup, transition } from 'xstate'

/**
 * Every state a review record can be in.
 *
 * @example
 * for (const state of REVIEW_STATES) console.log(state, await store.listByState(state, { limit: 10 }))
 */
export const REVIEW_STATES = ['pending', 'resuming', 'completed', 'stale', 'uncertain'] as const

/** A review record's state. @example const state: ReviewState = 'uncertain' */
export type ReviewState = (typeof REVIEW_STATES)[number]

/**
 * Every event the lifecycle understands, in UPPER_SNAKE as XState events are.
 *
 * @example
 * const allowed = REVIEW_EVENTS.filter((event) => nextReviewState('resuming', event) !== null)
 */
export const REVIEW_EVENTS = [
  'CLAIM',
  'RESUMED',
  'STALE_DETECTED',
  'FAILED_AFTER_CLAIM',
  'NOT_APPLIED',
  'RECLAIM',
  'OPERATOR_CONFIRMED_EXECUTED',
  'OPERATOR_CONFIRMED_NOT_EXECUTED',
  'OPERATOR_REOPENED',
] as const

/** The type of a lifecycle event. @example const event: ReviewEventType = 'CLAIM' */
export type ReviewEventType = (typeof REVIEW_EVENTS)[number]

/**
 * A lifecycle event. Events carry no payload: the reason lives in the store's history.
 *
 * @example
 * const event: ReviewEvent = { type: 'FAILED_AFTER_CLAIM' }
 */
export type ReviewEvent = { readonly type: ReviewEventType }

/**
 * The review lifecycle as an XState v5 machine. It is pure configuration: no
 * actions, no delays. Nothing is reset by a timeout. `completed` is final;
 * `stale` is left only by an operator's explicit reopen. Recovery of
 * `uncertain` (or of a `resuming` record a crash left behind) happens only
 * through operator events. A review returns to `pending` only when the resume
 * provably ran nothing (`NOT_APPLIED`: the very same target is suspended
 * again) or when an operator reopens it.
 *
 * @example
 * ```ts
 * import { createActor } from 'xstate'
 * const actor = createActor(reviewLifecycleMachine).start()
 * actor.send({ type: 'CLAIM' })
 * actor.getSnapshot().value // 'resuming'
 * ```
 */
export const reviewLifecycleMachine = setup({
  types: {
    events: {} as ReviewEvent,
  },
}).createMachine({
  id: 'reviewLifecycle',
  initial: 'pending',
  states: {
    pending: {
      description: 'The decision was asked and the review waits for an answer.',
      on: {
        CLAIM: { target: 'resuming', description: 'One resumer won the claim.' },
      },
    },
    resuming: {
      description: 'A resumer holds the claim and is resuming the suspended target.',
      on: {
        RESUMED: { target: 'completed', description: 'The resume returned.' },
        NOT_APPLIED: {
          target: 'pending',
          description: 'The same target is suspended again: the resume ran nothing; retry it.',
        },
        // Recovery takes over a crash-left claim with a compare-and-set on the
        // claim it saw, so two recoverers can never both restart the run.
        RECLAIM: { target: 'resuming', description: 'Recovery took over a crash-left claim.' },
        STALE_DETECTED: {
          target: 'stale',
          description: 'The call, its arguments or the business version changed.',
        },
        FAILED_AFTER_CLAIM: {
          target: 'uncertain',
          description: 'Something failed after the claim; the action may have run.',
        },
        // A crash between claim and finish leaves `resuming` behind; only an
        // operator, never a timer, may resolve it.
        OPERATOR_CONFIRMED_EXECUTED: { target: 'completed', description: 'Operator confirmed it ran.' },
        OPERATOR_CONFIRMED_NOT_EXECUTED: {
          target: 'stale',
          description: 'Operator confirmed it did not run.',
        },
      },
    },
    uncertain: {
      description: 'The action may or may not have run. Never retried automatically.',
      on: {
        OPERATOR_CONFIRMED_EXECUTED: { target: 'completed', description: 'Operator confirmed it ran.' },
        OPERATOR_CONFIRMED_NOT_EXECUTED: {
          target: 'stale',
          description: 'Operator confirmed it did not run.',
        },
        OPERATOR_REOPENED: {
          target: 'pending',
          description: 'Operator confirmed nothing ran and the target still waits: resume it again.',
        },
      },
    },
    completed: { type: 'final', description: 'The resume ran to completion.' },
    stale: {
      description: 'The review never resumes. Ask again for the new version.',
      on: {
        // A configuration error must never end an answer for good: an
        // operator who finds a review wrongly ended reopens it, with a reason.
        OPERATOR_REOPENED: {
          target: 'pending',
          description: 'Operator found it wrongly ended and the target still waits.',
        },
      },
    },
  },
})

/**
 * Narrows an unknown value to a {@link ReviewState}.
 *
 * @example
 * if (isReviewState(row.state)) nextReviewState(row.state, 'CLAIM')
 */
export function isReviewState(value: unknown): value is ReviewState {
  return typeof value === 'string' && (REVIEW_STATES as readonly string[]).includes(value)
}

/**
 * Narrows an unknown value to a {@link ReviewEventType}.
 *
 * @example
 * isReviewEventType('CLAIM') // true
 */
export function isReviewEventType(value: unknown): value is ReviewEventType {
  return typeof value === 'string' && (REVIEW_EVENTS as readonly string[]).includes(value)
}

/**
 * The state a review moves to when `event` happens in `state`, or `null` when
 * the machine refuses the event there. Computed from the machine, never from
 * a second table.
 *
 * @example
 * ```ts
 * nextReviewState('pending', 'CLAIM') // 'resuming'
 * nextReviewState('completed', 'CLAIM') // null
 * ```
 */
export function nextReviewState(
  state: ReviewState,
  event: ReviewEventType | ReviewEvent,
): ReviewState | null {
  const eventObject: ReviewEvent = typeof event === 'string' ? { type: event } : event
  // The machine has no guards, context or actions: the answer depends only
  // on the state and the event type, so each pair is asked of it once.
  const key = `${state}\u0000${eventObject.type}`
  const known = answered.get(key)
  if (known !== undefined) return known
  const resolved = reviewLifecycleMachine.resolveState({ value: state, context: undefined })
  let next: ReviewState | null = null
  if (resolved.can(eventObject)) {
    const value = transition(reviewLifecycleMachine, resolved, eventObject)[0].value
    if (!isReviewState(value)) {
      throw new TypeError(`reviewLifecycleMachine reached an unknown state ${JSON.stringify(value)}`)
    }
    next = value
  }
  answered.set(key, next)
  return next
}

/** What the machine answered per state and event type (see `nextReviewState`). */
const answered = new Map<string, ReviewState | null>()

/**
 * Whether the review is settled (`completed` and `stale`): no resume, claim or
 * operator confirmation can leave it; only an operator's explicit
 * `OPERATOR_REOPENED` can take a wrongly ended `stale` review back to `pending`.
 *
 * @example
 * isTerminalReviewState('uncertain') // false: an operator can still resolve it
 */
export function isTerminalReviewState(state: ReviewState): boolean {
  return REVIEW_EVENTS.every(
    (event) => event === 'OPERATOR_REOPENED' || nextReviewState(state, event) === null,
  )
}
