/**
 * The public entry stays small: what the README documents, plus the error
 * classes the documented functions throw. A new runtime export is a decision
 * (it is frozen once published), so adding one means adding it here too.
 */
import { describe, expect, it } from 'vitest'
import * as entry from '../../src/index.js'
import * as testingEntry from '../../src/testing/index.js'

const MAX_RUNTIME_EXPORTS = 49

const RUNTIME_EXPORTS = [
  'PusharyAbortError',
  'PusharyApiError',
  'PusharyDevServerError',
  'PusharyError',
  'PusharyNetworkError',
  'PusharyRawBodyError',
  'PusharyReplayMismatchError',
  'PusharyResumeError',
  'PusharyStoreError',
  'PusharyTimeoutError',
  'PusharyValidationError',
  'RETRYABLE_DISPATCH_STATUSES',
  'answerPusharyQuestion',
  'connect',
  'createPostgresReviewStore',
  'createPusharyApprovalWorkflow',
  'createPusharyAskTool',
  'createPusharyClient',
  'createPusharyDeferredAskTool',
  'createPusharyDevServer',
  'createPusharyReviewBoard',
  'createPusharyDispatcher',
  'createSqliteReviewStore',
  'isApproved',
  'isPusharyDeclined',
  'isPusharyPermitRefused',
  'openPusharyAgentReview',
  'pusharyAgentReviewSchema',
  'pusharyAnswerSchema',
  'pusharyApprovalBatchStep',
  'pusharyApprovalStep',
  'pusharyApprovalStepInputSchema',
  'pusharyApprovedAnswerSchema',
  'pusharyApprovedItemSchema',
  'pusharyCallbackRoute',
  'pusharyDeclinedSchema',
  'pusharyExpressCallback',
  'pusharyGate',
  'pusharyGateItems',
  'pusharyNodeCallback',
  'pusharyPendingDecisions',
  'readPusharyCallback',
  'readPusharyPendingDecisions',
  'resolvePusharyApprovals',
  'resolvePusharyCallback',
  'resumePusharyAgentReview',
  'reviewLifecycleMachine',
  'withPusharyPermit',
  'readPusharyReviewStats',
]

describe('the public entry', () => {
  it(`exports at most ${MAX_RUNTIME_EXPORTS} runtime names, exactly the listed ones`, () => {
    const names = Object.keys(entry).sort()
    expect(names.length).toBeLessThanOrEqual(MAX_RUNTIME_EXPORTS)
    expect(names).toEqual([...RUNTIME_EXPORTS].sort())
  })

  it('keeps internal schemas and helpers out of it', () => {
    for (const internal of ['decisionStatusSchema', 'idSchema', 'isStorableText', 'REVIEW_EVENTS']) {
      expect(Object.keys(entry)).not.toContain(internal)
    }
  })
})

describe('the testing entry (@pushary/mastra/testing)', () => {
  it('exports exactly the listed runtime names, none of them also in the main entry', () => {
    expect(Object.keys(testingEntry).sort()).toEqual([
      'PusharyTestingError',
      'callsOnce',
      'describeResults',
      'linkSimulatedPhone',
      'scriptedModel',
      'startPusharyTestService',
      'waitForPusharyService',
    ])
    for (const name of Object.keys(testingEntry)) expect(Object.keys(entry)).not.toContain(name)
  })
})
