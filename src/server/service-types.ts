/**
 * Types shared by the decision service (API routes, outbox, sweeper) and the
 * reviewer page, which is mounted on the same Hono app and answers through
 * the same `answerDecision` as the API.
 */
import type { DecisionPresentation } from '../pushary/decision-schemas.js'
import type { DecisionStatus, DecisionType } from '../pushary/question.js'

export type { DecisionStatus, DecisionType }

/** How the reviewer page renders the action (`{label, effect, changes?, risk?}`). */
export type Presentation = DecisionPresentation

/** Who supplied an answer: the API relay, the reviewer page or the sandbox. */
export type AnswerSource = 'api' | 'reviewer' | 'sandbox'

/** What was asked and of whom: the fields a decision keeps from its creation. */
export interface DecisionContent {
  decisionId: string
  type: DecisionType
  question: string
  options: string[] | null
  placeholder: string | null
  context: string | null
  externalId: string | null
  agentName: string | null
  toolName: string | null
  toolTarget: string | null
  actor: string | null
  environment: string | null
  presentation: Presentation | null
  parameters: Record<string, string | number | boolean> | null
  callbackUrl: string | null
}

/** A decision as the service stores it. Times are ISO-8601 strings. */
export interface StoredDecision extends DecisionContent {
  status: DecisionStatus
  createdAt: string
  answeredAt: string | null
  expiresAt: string | null
  value: string | null
  answerSource: AnswerSource | null
}

/** Result of answering a decision; anything but `answered` leaves the decision unchanged. */
export type AnswerOutcome =
  | { status: 'answered'; decision: StoredDecision }
  | {
      status: 'not_found' | 'already_answered' | 'expired' | 'cancelled' | 'invalid_answer'
      message: string
    }

/** Published whenever a decision is created or leaves `pending`. */
export interface DecisionEvent {
  decisionId: string
  externalId: string | null
  status: DecisionStatus
  /** The group key of the approvers' set the decision belongs to (`approver-sets.ts`), if any. */
  approverSet?: string | null
}

/** One member of an approvers' set, as the reviewer page counts it. */
export interface ApproverSetMember {
  decisionId: string
  externalId: string | null
  status: DecisionStatus
  type: DecisionType
  value: string | null
}

/** What the reviewer page needs from the service. */
export interface ReviewerDeps {
  /** Pending decisions addressed to `externalId`, newest first. */
  listPendingFor(externalId: string): Promise<StoredDecision[]>
  getDecision(decisionId: string): Promise<StoredDecision | null>
  /** Same validation, callback enqueue and event publish as `POST /decisions/:id`. */
  answerDecision(decisionId: string, answer: string, source: 'reviewer'): Promise<AnswerOutcome>
  /** Single-use: returns null when the token is unknown, consumed or expired. */
  consumeEnrollment(token: string): Promise<{ externalId: string } | null>
  /** Read-only check for the confirmation page: the token's customer while it is unconsumed and unexpired, else null. */
  peekEnrollment(token: string): Promise<{ externalId: string } | null>
  /** Returns a fresh random token; only its SHA-256 is stored. */
  registerDevice(externalId: string): Promise<{ deviceToken: string }>
  /** The device's customer and public id; null when unknown, revoked or long idle. */
  deviceFromToken(deviceToken: string): Promise<{ externalId: string; deviceId: string } | null>
  /** The set `key` that `decisionId` belongs to: its members asked by the same key, oldest first. */
  listApproverSet(key: string, decisionId: string): Promise<ApproverSetMember[]>
  /** Whether `externalId` is asked in set `key`. */
  inApproverSet(key: string, externalId: string): Promise<boolean>
  /** Returns an unsubscribe function. */
  subscribe(listener: (event: DecisionEvent) => void): () => void
  /** Base URL printed in links (no trailing slash), e.g. `http://192.168.1.5:4000`. */
  publicUrl: string
}
