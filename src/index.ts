/**
 * Public entry of `@pushary/mastra`. Every export is listed by name; anything
 * not listed here is internal and may change without notice.
 */

// Decision API client (src/pushary)
export { createPusharyClient } from './pushary/client.js'
export type {
  AskDecisionInput,
  ListDecisionsQuery,
  PusharyCallOptions,
  PusharyClient,
  PusharyClientOptions,
} from './pushary/client.js'
export { PUSHARY_DEFAULT_BASE_URL } from './pushary/client-config.js'
export type { PusharyFetch } from './pushary/http.js'
export {
  isPusharyApiError,
  isPusharyError,
  isPusharyValidationError,
  PusharyAbortError,
  PusharyApiError,
  PusharyError,
  PusharyNetworkError,
  PusharyTimeoutError,
  PusharyValidationError,
} from './pushary/errors.js'
export type { PusharyErrorCode, PusharyIssue, PusharyValidationCode } from './pushary/errors.js'
export { PUSHARY_LIMITS } from './pushary/limits.js'
export type { PusharyLimits } from './pushary/limits.js'
export {
  canonicalJson,
  deterministicKey,
  externalIdSchema,
  fingerprintPusharyAction,
  idSchema,
  parseExternalId,
} from './pushary/identity.js'
export {
  answerPusharyQuestion,
  decisionStatusSchema,
  decisionTypeSchema,
  describeAnswer,
  isAffirmative,
  isApproved,
  parsePusharyQuestion,
  pusharyAnswerSchema,
  pusharyQuestionSchema,
} from './pushary/question.js'
export type { DecisionStatus, DecisionType, PusharyAnswer, PusharyQuestion } from './pushary/question.js'
export {
  createDecisionInputSchema,
  decisionPresentationSchema,
  decisionSchema,
} from './pushary/decision-schemas.js'
export type {
  AnswerResult,
  AskResult,
  AuthorizationEvaluation,
  AuthorizeInput,
  CancelResult,
  CreateDecisionInput,
  Decision,
  DecisionCallback,
  DecisionList,
  DecisionParameters,
  DecisionPresentation,
  DecisionReach,
  DecisionResult,
  EnrollResult,
  WebhookSecret,
} from './pushary/decision-schemas.js'
export {
  parseDecisionCallback,
  resolvePusharyCallback,
  SIGNATURE_HEADER,
  signWebhookBody,
  verifyWebhookSignature,
} from './pushary/callbacks.js'

// Review lifecycle (src/machines)
export {
  isReviewState,
  nextReviewState,
  REVIEW_EVENTS,
  REVIEW_STATES,
  reviewLifecycleMachine,
} from './machines/review-lifecycle.js'
export type { ReviewEvent, ReviewEventType, ReviewState } from './machines/review-lifecycle.js'
export { reviewLifecycleMermaid } from './machines/mermaid.js'

// Review stores (src/store)
export {
  pusharyAgentReviewSchema,
  pusharyReviewSchema,
  pusharyWorkflowReviewSchema,
  reviewStateSchema,
} from './store/review-schema.js'
export type {
  PusharyAgentReview,
  PusharyReview,
  PusharyReviewInput,
  PusharyWorkflowReview,
  ReviewReceipt,
  ReviewTransition,
} from './store/review-schema.js'
export type {
  PusharyReviewStore,
  ReviewClaimResult,
  ReviewFinishState,
  ReviewRecoveryOutcome,
} from './store/review-store.js'
export { createSqliteReviewStore } from './store/sqlite-store.js'
export type { SqliteReviewStoreOptions } from './store/sqlite-store.js'
export { createPostgresReviewStore } from './store/postgres-store.js'
export type { PostgresReviewStoreOptions } from './store/postgres-store.js'
export { isPusharyStoreError, PusharyStoreError } from './store/store-error.js'
export type { PusharyStoreErrorCode } from './store/store-error.js'

// Local decision service (src/server)
export { createPusharyDevServer } from './server/dev-server.js'
export type { PusharyDevServer, PusharyDevServerOptions } from './server/dev-server.js'
