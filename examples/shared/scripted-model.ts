/**
 * The examples' scripted model is the package's own, from the testing entry
 * (`@pushary/mastra/testing`): users run their agents in tests the same way.
 */
export {
  callsOnce,
  describeResults,
  type ScriptedReply,
  type ScriptedToolCall,
  type ScriptedTurn,
  scriptedModel,
} from '@pushary/mastra/testing'
