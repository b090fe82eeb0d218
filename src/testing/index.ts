/**
 * `@pushary/mastra/testing`: what a user's own test suite needs to run a
 * phone approval end to end without a model provider or a phone. A separate
 * entry, so production code never loads it; it uses the main entry only
 * through its public API (`@pushary/mastra`). Every export is listed by name.
 */

export type { SimulatedPhoneQuestion, SimulatedPhoneQuestionType } from './phone-page.js'
export type {
  ScriptedPrompt,
  ScriptedReply,
  ScriptedToolCall,
  ScriptedToolResult,
  ScriptedTurn,
} from './scripted-model.js'
export { callsOnce, describeResults, scriptedModel } from './scripted-model.js'
export type { WaitForServiceOptions } from './service-ready.js'
export { waitForPusharyService } from './service-ready.js'
export type {
  NextQuestionOptions,
  SimulatedPhone,
  SimulatedPhoneAnswer,
  SimulatedPhoneOptions,
} from './simulated-phone.js'
export { linkSimulatedPhone } from './simulated-phone.js'
export type { PusharyTestService, PusharyTestServiceOptions } from './test-service.js'
export { startPusharyTestService } from './test-service.js'
export type { PusharyTestingErrorCode } from './testing-error.js'
export { PusharyTestingError } from './testing-error.js'
