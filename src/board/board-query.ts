/**
 * What the board lists: the reviews of each state, filtered by kind,
 * customer and age, with what the list shows of each (when it was asked,
 * since when it is in its state, why). Filters are read from the query
 * string and refused naming the field, before the store is read.
 */
import { isReviewState, REVIEW_STATES, type ReviewState } from '../machines/review-lifecycle.js'
import { externalIdSchema } from '../pushary/identity.js'
import type { PusharyReview, ReviewTransition } from '../store/review-schema.js'
import type { PusharyReviewStore } from '../store/review-store.js'

/** Which reviews the list shows; `null` means no filter. */
export interface BoardFilters {
  readonly states: readonly ReviewState[]
  /** `workflow` is a workflow step or a multi-item parent; `agent` an agent tool call. */
  readonly kind: 'workflow' | 'agent' | null
  /** Exact customer ID (`externalId`), compared as stored. */
  readonly customer: string | null
  /** Only reviews asked at least this many minutes ago. */
  readonly minAgeMinutes: number | null
}

/** The filters read from a query string, or the field that was refused. */
export type FiltersParse =
  | { status: 'ok'; filters: BoardFilters }
  | { status: 'invalid'; field: string; message: string }

const MAX_AGE_MINUTES = 366 * 24 * 60

/**
 * Reads the list's filters: `state` (repeatable), `kind`, `customer`, `minAge`
 * (minutes). An empty value is no filter.
 *
 * @example
 * parseFilters(new URLSearchParams('state=uncertain&kind=agent')) // { status: 'ok', filters: … }
 */
export function parseFilters(query: URLSearchParams): FiltersParse {
  const states = query.getAll('state').filter((value) => value !== '' && value !== 'all')
  const unknown = states.find((state) => !isReviewState(state))
  if (unknown !== undefined) {
    return { status: 'invalid', field: 'state', message: `unknown state (${REVIEW_STATES.join(', ')})` }
  }
  const kindText = query.get('kind') ?? ''
  if (kindText !== '' && kindText !== 'any' && kindText !== 'workflow' && kindText !== 'agent') {
    return { status: 'invalid', field: 'kind', message: 'kind must be workflow or agent' }
  }
  const customerText = query.get('customer') ?? ''
  if (customerText !== '' && !externalIdSchema.safeParse(customerText).success) {
    return {
      status: 'invalid',
      field: 'customer',
      message:
        'customer must be a customer ID as stored (at most 256 characters, no NUL or unpaired surrogate)',
    }
  }
  const ageText = (query.get('minAge') ?? '').trim()
  const minAge = ageText === '' ? null : Number(ageText)
  if (minAge !== null && (!/^\d+$/.test(ageText) || minAge > MAX_AGE_MINUTES)) {
    return {
      status: 'invalid',
      field: 'minAge',
      message: `minAge must be whole minutes from 0 to ${MAX_AGE_MINUTES}`,
    }
  }
  return {
    status: 'ok',
    filters: {
      states: states.length === 0 ? [...REVIEW_STATES] : [...new Set(states as ReviewState[])],
      kind: kindText === 'workflow' || kindText === 'agent' ? kindText : null,
      customer: customerText === '' ? null : customerText,
      minAgeMinutes: minAge,
    },
  }
}

/** A review as one row of the list. */
export interface BoardRow {
  readonly review: PusharyReview
  readonly kind: 'workflow' | 'agent'
  /** `null` for a multi-item parent, which has no customer of its own. */
  readonly customer: string | null
  /** When it was saved `pending` (its first history entry). */
  readonly askedAt: string | null
  /** Its last transition: since when it is in its state, and why. */
  readonly last: ReviewTransition | undefined
}

/** One state's section of the list. */
export interface BoardSection {
  readonly state: ReviewState
  readonly rows: readonly BoardRow[]
  /** How many matched among those read (more than `rows` when over the page size). */
  readonly matched: number
  /** True when the state held more reviews than the board reads (`scanLimit`). */
  readonly truncated: boolean
}

/** How much the list reads and shows. */
export interface BoardLimits {
  /** Rows shown per state. */
  readonly pageSize: number
  /** Reviews read per state before filtering. */
  readonly scanLimit: number
}

function kindOf(review: PusharyReview): 'workflow' | 'agent' {
  return review.target === 'agent' ? 'agent' : 'workflow'
}

function customerOf(review: PusharyReview): string | null {
  return review.target === 'batch-parent' ? null : review.externalId
}

async function readState(
  store: Pick<PusharyReviewStore, 'listByState'>,
  state: ReviewState,
  scanLimit: number,
): Promise<{ reviews: PusharyReview[]; truncated: boolean }> {
  const reviews: PusharyReview[] = []
  let after: string | undefined
  while (reviews.length < scanLimit) {
    const limit = Math.min(500, scanLimit - reviews.length + 1)
    const page = await store.listByState(state, after === undefined ? { limit } : { limit, after })
    // A review that left the state while paging restarts the listing: stop at a repeat.
    const fresh = page.filter((review) => !reviews.some((seen) => seen.decisionId === review.decisionId))
    reviews.push(...fresh)
    if (page.length < limit || fresh.length === 0) break
    after = page.at(-1)?.decisionId
  }
  return { reviews: reviews.slice(0, scanLimit), truncated: reviews.length > scanLimit }
}

/**
 * The list's sections, one per filtered state, longest in their state first
 * (the store's order).
 *
 * @example
 * const sections = await loadBoard(store, filters, { pageSize: 50, scanLimit: 2000 }, Date.now())
 */
export async function loadBoard(
  store: Pick<PusharyReviewStore, 'listByState' | 'history'>,
  filters: BoardFilters,
  limits: BoardLimits,
  nowMs: number,
): Promise<BoardSection[]> {
  const sections: BoardSection[] = []
  for (const state of filters.states) {
    const { reviews, truncated } = await readState(store, state, limits.scanLimit)
    const rows: BoardRow[] = []
    let matched = 0
    for (const review of reviews) {
      if (filters.kind !== null && kindOf(review) !== filters.kind) continue
      if (filters.customer !== null && customerOf(review) !== filters.customer) continue
      const history = await store.history(review.decisionId)
      const askedAt = history[0]?.at ?? null
      if (filters.minAgeMinutes !== null) {
        if (askedAt === null || nowMs - Date.parse(askedAt) < filters.minAgeMinutes * 60_000) continue
      }
      matched += 1
      if (rows.length < limits.pageSize) {
        rows.push({
          review,
          kind: kindOf(review),
          customer: customerOf(review),
          askedAt,
          last: history.at(-1),
        })
      }
    }
    sections.push({ state, rows, matched, truncated })
  }
  return sections
}

/**
 * A duration in the largest whole unit an operator reads at a glance.
 *
 * @example
 * ageText(90_000) // '1 min'
 */
export function ageText(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '—'
  const minutes = Math.floor(ms / 60_000)
  if (minutes < 1) return `${Math.floor(ms / 1000)} s`
  if (minutes < 120) return `${minutes} min`
  const hours = Math.floor(minutes / 60)
  if (hours < 48) return `${hours} h`
  return `${Math.floor(hours / 24)} d`
}
