// README "Agents: ask on the phone, approve native tool calls", the
// streaming resume of a deferred review, as written. Added: the import of
// the application's values.
import { agent, alertOperator, authenticatedCustomer, config, job, reviewStore, saveAgentOutput } from './app.js'

// --- sample ---
import { resumePusharyAgentReview } from '@pushary/mastra'

// A polling job, in any process: the answered review, resumed as a stream.
const result = await resumePusharyAgentReview(config, {
  agent,
  agentId: 'order-agent',
  externalId: authenticatedCustomer.id,
  decisionId: job.decisionId,
  store: reviewStore,
  stream: true,
})
switch (result.status) {
  case 'resumed':
    await saveAgentOutput(result.review.runId, result.output) // the settled, replayable stream
    break
  case 'stale': // reasonCode: resumed_outside, call_changed, action_version_changed, auto_resumed, …
  case 'uncertain':
    await alertOperator(`${result.reasonCode}: ${result.reason}`)
    break
  default: // pending, busy, duplicate, unknown: retry later, or nothing to do; reasonCode says why
    break
}
// --- end of sample ---

export { result }
