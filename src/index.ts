/**
 * Public entry of `@pushary/mastra`. Every export is listed by name; anything
 * not listed here is internal and may change without notice. The runtime
 * names are what the README documents, plus the error classes a caller needs
 * to tell failures apart (each says why in its TSDoc);
 * test/architecture/public-entry.test.ts pins their number.
 */

// Decision API client (src/pushary)
export { createPusharyClient } from './pushary/client.js'
export type { AskDecisionInput, PusharyCallOptions } from './pushary/ask.js'
export type { ListDecisionsQuery, PusharyClient, PusharyClientOptions } from './pushary/client.js'
export type { PusharyConfig } from './pushary/config.js'
export type { PusharyFetch } from './pushary/http.js'
export type { PusharyPlatformCalls } from './pushary/platform-client.js'
export type {
  ConsumeAuthorizationInput,
  ConsumeAuthorizationResult,
  IssuedKey,
  IssueKeyInput,
  KeyList,
  ListedKey,
  PermitAuthority,
  PermitExecutionState,
  PermitRefusal,
  PermitRefused,
  ReceiptInput,
  ReceiptResult,
  RevokedKey,
} from './pushary/platform-schemas.js'
export {
  PusharyAbortError,
  PusharyApiError,
  PusharyError,
  PusharyNetworkError,
  PusharyTimeoutError,
  PusharyValidationError,
} from './pushary/errors.js'
export type { PusharyErrorCode, PusharyIssue, PusharyValidationCode } from './pushary/errors.js'
export { PusharyReplayMismatchError } from './pushary/replay-check.js'
export { readPusharyCallback } from './pushary/callback-request.js'
export type { PusharyCallbackRead } from './pushary/callback-request.js'
export {
  PusharyRawBodyError,
  pusharyExpressCallback,
  pusharyNodeCallback,
} from './pushary/node-callback.js'
export type { PusharyFetchHandler, PusharyNodeRequest } from './pushary/node-callback.js'
export type { PusharyLimits } from './pushary/limits.js'
export { answerPusharyQuestion, isApproved, pusharyAnswerSchema } from './pushary/question.js'
export type {
  DecisionStatus,
  DecisionType,
  PusharyAnswer,
  PusharyQuestion,
  TerminalDecisionStatus,
} from './pushary/question.js'
export type {
  AuthorizeInput,
  CreateDecisionInput,
  DecisionParameters,
  DecisionPresentation,
} from './pushary/decision-schemas.js'
export type {
  AnswerResult,
  AskResult,
  AuthorizationEvaluation,
  CancelResult,
  Decision,
  DecisionList,
  DecisionReach,
  DecisionResult,
  EnrollResult,
  ListedDecision,
  ReadDecisionStatus,
  ReadDecisionType,
  WebhookSecret,
} from './pushary/wire-responses.js'
export type { DecisionCallback } from './pushary/decision-callback.js'
export { resolvePusharyCallback } from './pushary/callbacks.js'

// Review lifecycle (src/machines)
export { reviewLifecycleMachine } from './machines/review-lifecycle.js'
export type { ReviewEvent, ReviewEventType, ReviewState } from './machines/review-lifecycle.js'

// Review stores (src/store)
export { pusharyAgentReviewSchema } from './store/review-schema.js'
export type {
  PusharyActionOutcome,
  PusharyAgentReview,
  PusharyReview,
  PusharyReviewInput,
  PusharyWorkflowReview,
  ReviewAction,
  ReviewPermit,
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
export type {
  PostgresReviewStoreOptions,
  PusharyPgPool,
  PusharyPgPoolClient,
  PusharyPgResult,
  PusharyPgStatement,
} from './store/postgres-store.js'
export { PusharyStoreError } from './store/store-error.js'
export type { PusharyStoreErrorCode } from './store/store-error.js'
export { readPusharyReviewStats } from './store/review-stats.js'
export type { PusharyReviewStatsOptions } from './store/review-stats.js'
export type {
  PusharyLatencyStats,
  PusharyReviewStats,
  PusharyStateStats,
} from './store/review-stats-shape.js'

// Local decision service (src/server)
// Loaded on first use, like the PostgreSQL driver: importing the package starts nothing.
export { createPusharyDevServer } from './server/start-dev-server.js'
export type { PusharyDevServer, PusharyDevServerOptions } from './server/dev-server.js'
export type { PusharyDevServerLimits } from './server/connection-limits.js'
export { PusharyDevServerError } from './server/dev-server-error.js'
export type { PusharyDevServerErrorCode } from './server/dev-server-error.js'
export type { CallbackDelivery, CallbackRetryOptions } from './server/callbacks-outbox.js'
export type { PolicyFile, PolicyRule } from './server/policy.js'

// Review board (src/board): the operator's page, mounted like the callback route.
// Its routes (and Hono) load on the first request.
export { createPusharyReviewBoard } from './board/review-board.js'
export type {
  PusharyBoardLogger,
  PusharyReviewBoard,
  PusharyReviewBoardOptions,
} from './board/review-board.js'

// Approval steps and the gate (src/steps)
export { pusharyApprovalStep } from './steps/approval-step.js'
export type {
  PusharyApprovalStep,
  PusharyApprovalStepOptions,
  PusharyStepConfig,
} from './steps/approval-step.js'
export { pusharyApprovalStepInputSchema } from './steps/approval-schemas.js'
export type {
  PusharyApprovalResume,
  PusharyApprovalStepInput,
  PusharyApprovalSubject,
  PusharyApprovalSuspend,
} from './steps/approval-schemas.js'
export {
  isPusharyDeclined,
  pusharyApprovedAnswerSchema,
  pusharyApprovedItemSchema,
  pusharyDeclinedSchema,
  pusharyGate,
  pusharyGateItems,
} from './steps/gate-step.js'
export type {
  PusharyApprovedAnswer,
  PusharyApprovedItem,
  PusharyDeclined,
  PusharyDeclineReason,
  PusharyUngatedAnswer,
} from './steps/gate-step.js'
export type { PusharyFallbackLink } from './steps/approval-delivery.js'
export { isPusharyPermitRefused, withPusharyPermit } from './steps/permit-step.js'
export type {
  PusharyPermitAction,
  PusharyPermitContext,
  PusharyPermitOptions,
  PusharyPermitRefused,
} from './steps/permit-step.js'

// Approval workflows and the dispatcher (src/workflows)
export { createPusharyApprovalWorkflow, pusharyApprovalBatchStep } from './workflows/approval-workflows.js'
export type { PusharyBatchStepOptions } from './workflows/approval-workflows.js'
export type { PusharyBatchSuspend } from './workflows/batch-parent.js'
export { pusharyPendingDecisions, readPusharyPendingDecisions } from './workflows/pending-decisions.js'
export type {
  PusharyPendingDecision,
  PusharyRunLocation,
  PusharyRunResultView,
} from './workflows/pending-decisions.js'
export { createPusharyDispatcher } from './agents/dispatcher.js'
export { RETRYABLE_DISPATCH_STATUSES } from './resume/dispatch-types.js'
export type {
  PusharyCapabilityGap,
  PusharyCapabilityProblem,
  PusharyConfigurationIssue,
  PusharyConfigurationReport,
} from './resume/worker-capability.js'
export type {
  PusharyDispatcher,
  PusharyDispatcherOptions,
  PusharyDispatchResult,
  PusharyReconcileReport,
  PusharyResumedEvent,
} from './resume/dispatch-types.js'
export type { PusharyResumeOutcome } from './resume/resume-guard.js'
export type { PusharyResumeRequest } from './resume/run-position.js'
export { PusharyResumeError } from './resume/resume-error.js'
export type { PusharyResumeErrorCode } from './resume/resume-error.js'
export { pusharyCallbackRoute } from './resume/callback-route.js'

// Agent approvals (src/agents)
export { connect } from './agents/connect.js'
export { createPusharyAskTool } from './agents/ask-tool.js'
export type { PusharyAskToolOptions, PusharyAskToolOutput } from './agents/ask-tool.js'
export { createPusharyDeferredAskTool } from './agents/deferred-ask-tool.js'
export type { PusharyDeferredAskToolOptions } from './agents/deferred-ask-tool.js'
export { openPusharyAgentReview } from './agents/open-review.js'
export type { PusharyAgentReviewTarget } from './agents/open-review.js'
export { resumePusharyAgentReview } from './agents/resume-review.js'
export type { PusharyAgentResumeTarget } from './agents/resume-review.js'
export { resolvePusharyApprovals } from './agents/resolve-approvals.js'
export type {
  PusharyApprovalConfig,
  PusharyApprovalOutcome,
  PusharyApprovalTarget,
  PusharyPendingApproval,
  PusharyResolvedApproval,
} from './agents/resolve-approvals.js'
export type { PusharyReviewSubject } from './agents/review-subject.js'
export type { PusharyAgentTools } from './agents/agent-card.js'
export type { PusharyAgentReviewStore } from './store/agent-review-store.js'
export type { PusharyAgentResumeOutcome } from './agents/agent-review-resume.js'
export type { PusharyAgentReviewAction } from './agents/agent-resume-causes.js'
export type { PusharyReasonCode } from './resume/review-status.js'
export type { PusharyApprovableAgent, PusharyResumableAgent } from './agents/agent-shapes.js'
export type { PusharySuspendedAgentRun, PusharySuspendedToolCall } from './resume/dispatch-types.js'
export type { PusharyAgentReviewBinding } from './agents/agent-binding.js'
export type { PusharyApproverOutcome } from './agents/agent-approvers.js'
export type { PusharyQuestionSuspend } from './agents/question-suspension.js'
