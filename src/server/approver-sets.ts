/**
 * Several approvers, as the local service sees them: the package asks each
 * member of a set on their own decision and writes the set's group key
 * (`approverSet`, `a_` and 40 hex), its required count
 * (`approversRequired`) and whether a denial declines it (`approversVeto`)
 * into every member's binding context. The service
 * reads them leniently (a context that is not this shape is simply not in a
 * set) and finds a set's members through a partial expression index, so the
 * reviewer page can count the set's answers on each member's card.
 */
import type { Client, Row } from '@libsql/client'
import { exactColumn, exactText } from './exact-text.js'
import type { ApproverSetMember, DecisionStatus, DecisionType } from './service-types.js'

/** What a member's context says about its set. */
export interface ApproverSetRef {
  /** The group key, the same on every member of one set. */
  readonly key: string
  /** How many approvals the set needs. */
  readonly required: number
  /** Whether one denial declines the set; undefined when the context does not say. */
  readonly veto?: boolean | undefined
}

const SET_KEY = /^a_[0-9a-f]{40}$/
// The package asks at most 20 approvers (escalations included); far more rows
// under one key are not a set the package made, and the page reads no further.
const MEMBERS_MAX = 100

// The index and the queries use these exact expressions, or SQLite would not
// use the index. `instr` first: most contexts never mention a set, and
// `json_extract` is evaluated only on rows whose context is valid JSON.
const IN_A_SET = `instr(context, '"approverSet":') > 0 AND json_valid(context)`
const KEY_OF = `json_extract(context, '$.approverSet')`

/** The index `database.ts` creates with the schema: a set's members by key, in asking order. */
export const APPROVER_SET_INDEX = `CREATE INDEX IF NOT EXISTS decisions_approver_set ON decisions (${KEY_OF}, seq) WHERE ${IN_A_SET}`

/**
 * The set a decision belongs to, read from its binding context; null for a
 * decision outside any set (one approver, an application's own context).
 *
 * @example
 * approverSetOf(decision.context) // { key: 'a_9d41…', required: 2 }
 */
export function approverSetOf(context: string | null): ApproverSetRef | null {
  if (context === null || !context.startsWith('{') || !context.includes('"approverSet"')) return null
  let parsed: unknown
  try {
    parsed = JSON.parse(context)
  } catch {
    return null
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return null
  const { pushary, approverSet, approversRequired, approversVeto } = parsed as Record<string, unknown>
  if (pushary !== 'workflow-step' || typeof approverSet !== 'string' || !SET_KEY.test(approverSet))
    return null
  if (typeof approversRequired !== 'number' || !Number.isSafeInteger(approversRequired)) return null
  if (approversRequired < 1) return null
  return {
    key: approverSet,
    required: approversRequired,
    ...(typeof approversVeto === 'boolean' ? { veto: approversVeto } : {}),
  }
}

function toMember(row: Row): ApproverSetMember {
  return {
    decisionId: exactText(row, 'decision_id') ?? '',
    externalId: exactText(row, 'external_id'),
    status: exactText(row, 'status') as DecisionStatus,
    type: exactText(row, 'type') as DecisionType,
    value: exactText(row, 'value'),
  }
}

/**
 * The members of set `key` that were asked by the same key as `decisionId`
 * (a bound key cannot add decisions to the count of a set the application
 * asked), oldest first. Statuses are as stored: an overdue member the sweeper
 * has not reached yet still reads `pending`.
 *
 * @example
 * const members = await listApproverSet(db, 'a_9d41…', 'dec_1')
 */
export async function listApproverSet(
  db: Client,
  key: string,
  decisionId: string,
): Promise<ApproverSetMember[]> {
  const columns = ['decision_id', 'external_id', 'status', 'type', 'value'].map(exactColumn).join(', ')
  const result = await db.execute({
    sql: `SELECT ${columns} FROM decisions
          WHERE ${IN_A_SET} AND ${KEY_OF} = ?
            AND asked_by IS (SELECT asked_by FROM decisions WHERE decision_id = ?)
          ORDER BY seq LIMIT ${MEMBERS_MAX}`,
    args: [key, decisionId],
  })
  return result.rows.map(toMember)
}

/**
 * Whether `externalId` is asked in set `key`: another member's answer then
 * concerns that person's open page.
 *
 * @example
 * if (await inApproverSet(db, event.approverSet, 'alice')) notify()
 */
export async function inApproverSet(db: Client, key: string, externalId: string): Promise<boolean> {
  const result = await db.execute({
    sql: `SELECT 1 AS found FROM decisions WHERE ${IN_A_SET} AND ${KEY_OF} = ? AND external_id = ? LIMIT 1`,
    args: [key, externalId],
  })
  return result.rows.length > 0
}
