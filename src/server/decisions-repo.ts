/**
 * SQLite persistence for decisions. Every transition out of `pending` is one
 * write transaction that changes the row and enqueues its callback, so a crash
 * can never leave an answered decision without a queued delivery.
 */
import type { Client, InValue, Row } from '@libsql/client'
import { ANSWERED_EVENT, buildCallbackBody } from './callback-body.js'
import { exactColumn, exactText } from './exact-text.js'
import type {
  AnswerSource,
  DecisionContent,
  DecisionStatus,
  DecisionType,
  Presentation,
  StoredDecision,
} from './service-types.js'
import { groupByTurns } from './turn-groups.js'

/** Validated fields of a new decision, as the service writes them. */
export interface NewDecision extends DecisionContent {
  email: string | null
  sandboxOutcome: 'approve' | 'deny' | 'no_answer' | null
  /** Already scoped to the asking key (`decision-service.ts`). */
  idempotencyKey: string | null
  /** Digest of the request content the idempotency key is bound to (`request-digest.ts`). */
  requestDigest: string | null
  createdMs: number
  expiresMs: number
  /** Who asked: `site` or a bound key's prefix (`bound-keys.ts`). */
  askedBy: string
}

/** A stored decision plus the columns only the service needs. */
export interface DecisionRecord extends StoredDecision {
  sandboxOutcome: 'approve' | 'deny' | 'no_answer' | null
  email: string | null
  /** Null for a row written before digests were stored. */
  requestDigest: string | null
  /** Who asked; null for a row written before it was recorded (the site key then). */
  askedBy: string | null
  expiresMs: number
  seq: number
}

/** Outcome of a transition attempt. `expired` means the deadline had passed (and the row was expired now). */
export type TransitionOutcome =
  | { status: 'changed'; decision: DecisionRecord }
  | { status: 'not_found' }
  | { status: 'not_pending'; decision: DecisionRecord }
  | { status: 'expired'; decision: DecisionRecord }

/** Filters of `GET /decisions`; `beforeSeq` is the decoded cursor. */
export interface DecisionListFilter {
  limit: number
  beforeSeq: number | null
  externalId: string | null
  status: DecisionStatus | null
  fromMs: number | null
  toMs: number | null
}

/** What `insert` reports. */
type InsertOutcome = { decision: DecisionRecord; idempotent: boolean }

/** Decision storage used by the service. */
export interface DecisionsRepo {
  /** Inserts, or returns the decision already holding `idempotencyKey` with `idempotent: true`. */
  insert(decision: NewDecision): Promise<InsertOutcome>
  get(decisionId: string): Promise<DecisionRecord | null>
  getByIdempotencyKey(key: string): Promise<DecisionRecord | null>
  list(filter: DecisionListFilter): Promise<DecisionRecord[]>
  listPendingFor(externalId: string, nowMs: number): Promise<DecisionRecord[]>
  /**
   * Moves a pending decision to `to`. An answer or cancel that arrives after
   * the deadline expires the decision instead and reports `expired`.
   */
  transition(
    decisionId: string,
    to: 'answered' | 'cancelled' | 'expired',
    change: { nowMs: number; value?: string; source?: AnswerSource },
  ): Promise<TransitionOutcome>
  /** Pending decisions the sandbox answers (`approve`/`deny`), oldest first. */
  pendingSandbox(): Promise<DecisionRecord[]>
  /** IDs of pending decisions whose deadline is at or before `nowMs`, oldest first. */
  overdue(nowMs: number, limit: number): Promise<string[]>
}

// Every TEXT column is read as its stored bytes: the driver would cut a NUL
// (written by an older version) and hand back a different customer, question
// or answer than the one stored.
const TEXT_COLUMNS = [
  'decision_id',
  'status',
  'type',
  'question',
  'options',
  'placeholder',
  'context',
  'external_id',
  'email',
  'callback_url',
  'agent_name',
  'tool_name',
  'tool_target',
  'actor',
  'environment',
  'parameters',
  'presentation',
  'sandbox_outcome',
  'idempotency_key',
  'request_digest',
  'created_at',
  'expires_at',
  'answered_at',
  'value',
  'answer_source',
  'asked_by',
] as const
const COLUMNS = ['seq', 'created_ms', 'expires_ms', ...TEXT_COLUMNS.map(exactColumn)].join(', ')

function text(row: Row, column: (typeof TEXT_COLUMNS)[number]): string | null {
  return exactText(row, column)
}

function num(row: Row, column: string): number {
  const value = row[column]
  return typeof value === 'number' ? value : typeof value === 'bigint' ? Number(value) : 0
}

function json<T>(row: Row, column: (typeof TEXT_COLUMNS)[number]): T | null {
  const raw = text(row, column)
  return raw === null ? null : (JSON.parse(raw) as T)
}

function toRecord(row: Row): DecisionRecord {
  return {
    seq: num(row, 'seq'),
    decisionId: text(row, 'decision_id') ?? '',
    status: text(row, 'status') as DecisionStatus,
    type: text(row, 'type') as DecisionType,
    question: text(row, 'question') ?? '',
    options: json<string[]>(row, 'options'),
    placeholder: text(row, 'placeholder'),
    context: text(row, 'context'),
    externalId: text(row, 'external_id'),
    agentName: text(row, 'agent_name'),
    toolName: text(row, 'tool_name'),
    toolTarget: text(row, 'tool_target'),
    actor: text(row, 'actor'),
    environment: text(row, 'environment'),
    presentation: json<Presentation>(row, 'presentation'),
    parameters: json<Record<string, string | number | boolean>>(row, 'parameters'),
    callbackUrl: text(row, 'callback_url'),
    createdAt: text(row, 'created_at') ?? '',
    answeredAt: text(row, 'answered_at'),
    expiresAt: text(row, 'expires_at'),
    expiresMs: num(row, 'expires_ms'),
    value: text(row, 'value'),
    answerSource: text(row, 'answer_source') as AnswerSource | null,
    sandboxOutcome: text(row, 'sandbox_outcome') as DecisionRecord['sandboxOutcome'],
    email: text(row, 'email'),
    requestDigest: text(row, 'request_digest'),
    askedBy: text(row, 'asked_by'),
  }
}

function iso(ms: number): string {
  return new Date(ms).toISOString()
}

/**
 * Creates the decision repository over an open service database.
 *
 * @example
 * const repo = createDecisionsRepo(await openServiceDatabase(path))
 * const found = await repo.get('dec_123')
 */
export function createDecisionsRepo(db: Client): DecisionsRepo {
  const get = async (decisionId: string): Promise<DecisionRecord | null> => {
    const result = await db.execute({
      sql: `SELECT ${COLUMNS} FROM decisions WHERE decision_id = ?`,
      args: [decisionId],
    })
    const row = result.rows[0]
    return row === undefined ? null : toRecord(row)
  }
  const getByIdempotencyKey = async (key: string): Promise<DecisionRecord | null> => {
    const result = await db.execute({
      sql: `SELECT ${COLUMNS} FROM decisions WHERE idempotency_key = ?`,
      args: [key],
    })
    const row = result.rows[0]
    return row === undefined ? null : toRecord(row)
  }

  const insertStatement = (d: NewDecision) => {
    const columns: Record<string, InValue> = {
      decision_id: d.decisionId,
      status: 'pending',
      type: d.type,
      question: d.question,
      options: d.options === null ? null : JSON.stringify(d.options),
      placeholder: d.placeholder,
      context: d.context,
      external_id: d.externalId,
      email: d.email,
      callback_url: d.callbackUrl,
      agent_name: d.agentName,
      tool_name: d.toolName,
      tool_target: d.toolTarget,
      actor: d.actor,
      environment: d.environment,
      parameters: d.parameters === null ? null : JSON.stringify(d.parameters),
      presentation: d.presentation === null ? null : JSON.stringify(d.presentation),
      sandbox_outcome: d.sandboxOutcome,
      idempotency_key: d.idempotencyKey,
      request_digest: d.requestDigest,
      asked_by: d.askedBy,
      created_at: iso(d.createdMs),
      created_ms: d.createdMs,
      expires_at: iso(d.expiresMs),
      expires_ms: d.expiresMs,
    }
    const names = Object.keys(columns)
    // ON CONFLICT DO NOTHING makes two racing creates with one key collapse
    // into a single row; the loser reads the winner's decision. RETURNING
    // hands back the row as written, so a create reads nothing after it.
    return {
      sql: `INSERT INTO decisions (${names.join(', ')}) VALUES (${names.map(() => '?').join(', ')})
            ON CONFLICT (idempotency_key) DO NOTHING RETURNING ${COLUMNS}`,
      args: Object.values(columns),
    }
  }
  /** What a committed insert left: the new row it returned, or the one already holding its key. */
  const readInserted = async (d: NewDecision, written: Row | undefined): Promise<InsertOutcome> => {
    if (written !== undefined) return { decision: toRecord(written), idempotent: false }
    if (d.idempotencyKey !== null) {
      const existing = await getByIdempotencyKey(d.idempotencyKey)
      if (existing !== null) return { decision: existing, idempotent: true }
    }
    const created = await get(d.decisionId)
    if (created === null) throw new Error(`Pushary dev server: decision ${d.decisionId} was not stored.`)
    return { decision: created, idempotent: false }
  }
  const insertAlone = async (d: NewDecision): Promise<InsertOutcome> => {
    const result = await db.execute(insertStatement(d))
    return readInserted(d, result.rows[0])
  }

  // Group commit. The commit's fsync is most of a create (the rest is a few
  // statements and the HTTP exchange), and SQLite runs on this thread, so
  // concurrent creates queue up behind each other's fsync. Creates that reach
  // this point together are written in one transaction: one fsync for all of
  // them. Each is answered only after that commit returned, so a create that
  // was answered is on disk exactly as when it had its own commit (the
  // synchronous setting is untouched). If the shared transaction fails,
  // nothing of it was committed and each create is retried on its own, so
  // one bad row never fails another.
  const insertGroup = async (group: NewDecision[]): Promise<Promise<InsertOutcome>[]> => {
    const only = group.length === 1 ? group[0] : undefined
    if (only) return [insertAlone(only)]
    const written: (Row | undefined)[] = []
    try {
      const tx = await db.transaction('write')
      try {
        for (const d of group) written.push((await tx.execute(insertStatement(d))).rows[0])
        await tx.commit()
      } finally {
        tx.close()
      }
    } catch {
      return group.map(insertAlone)
    }
    return group.map((d, index) => readInserted(d, written[index]))
  }

  return {
    insert: groupByTurns(insertGroup),

    get,
    getByIdempotencyKey,

    async list(filter) {
      const where: string[] = []
      const args: InValue[] = []
      if (filter.beforeSeq !== null) {
        where.push('seq < ?')
        args.push(filter.beforeSeq)
      }
      if (filter.externalId !== null) {
        where.push('external_id = ?')
        args.push(filter.externalId)
      }
      if (filter.status !== null) {
        where.push('status = ?')
        args.push(filter.status)
      }
      if (filter.fromMs !== null) {
        where.push('created_ms >= ?')
        args.push(filter.fromMs)
      }
      if (filter.toMs !== null) {
        where.push('created_ms <= ?')
        args.push(filter.toMs)
      }
      const clause = where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''
      const result = await db.execute({
        sql: `SELECT ${COLUMNS} FROM decisions ${clause} ORDER BY seq DESC LIMIT ?`,
        args: [...args, filter.limit],
      })
      return result.rows.map(toRecord)
    },

    async listPendingFor(externalId, nowMs) {
      const result = await db.execute({
        sql: `SELECT ${COLUMNS} FROM decisions WHERE external_id = ? AND status = 'pending' AND expires_ms > ?
              ORDER BY seq DESC`,
        args: [externalId, nowMs],
      })
      return result.rows.map(toRecord)
    },

    async transition(decisionId, to, change) {
      const tx = await db.transaction('write')
      try {
        const found = await tx.execute({
          sql: `SELECT ${COLUMNS} FROM decisions WHERE decision_id = ?`,
          args: [decisionId],
        })
        const row = found.rows[0]
        if (row === undefined) return { status: 'not_found' }
        const current = toRecord(row)
        if (current.status !== 'pending') return { status: 'not_pending', decision: current }
        const overdue = current.expiresMs <= change.nowMs
        const target = overdue ? 'expired' : to
        const answered = target === 'answered'
        const answeredAt = answered ? iso(change.nowMs) : null
        const value = answered ? (change.value ?? null) : null
        await tx.execute({
          sql: `UPDATE decisions SET status = ?, answered_at = ?, value = ?, answer_source = ?
                WHERE decision_id = ? AND status = 'pending'`,
          args: [target, answeredAt, value, answered ? (change.source ?? 'api') : null, decisionId],
        })
        const next: DecisionRecord = {
          ...current,
          status: target,
          answeredAt,
          value,
          answerSource: answered ? (change.source ?? 'api') : null,
        }
        // Only an answer is called back, as on the hosted API.
        if (next.callbackUrl !== null && answered) {
          const body = buildCallbackBody(next)
          await tx.execute({
            sql: `INSERT OR IGNORE INTO callback_deliveries
                  (decision_id, event, url, body, state, attempts, next_attempt_ms, created_at)
                  VALUES (?, ?, ?, ?, 'pending', 0, ?, ?)`,
            args: [
              decisionId,
              ANSWERED_EVENT,
              next.callbackUrl,
              JSON.stringify(body),
              change.nowMs,
              iso(change.nowMs),
            ],
          })
        }
        await tx.commit()
        return overdue && to !== 'expired'
          ? { status: 'expired', decision: next }
          : { status: 'changed', decision: next }
      } finally {
        tx.close()
      }
    },

    async pendingSandbox() {
      const result = await db.execute(
        `SELECT ${COLUMNS} FROM decisions WHERE status = 'pending' AND sandbox_outcome IN ('approve', 'deny') ORDER BY seq ASC`,
      )
      return result.rows.map(toRecord)
    },

    async overdue(nowMs, limit) {
      const result = await db.execute({
        sql: `SELECT decision_id FROM decisions WHERE status = 'pending' AND expires_ms <= ?
              ORDER BY expires_ms ASC LIMIT ?`,
        args: [nowMs, limit],
      })
      return result.rows.map((row) => text(row, 'decision_id') ?? '').filter((id) => id !== '')
    },
  }
}
