// README (seed 002) "Short questions and workflows", as written. Added: the
// import of the application's values, the export at the end, and
// `options: { autoRestartActiveRuns: false }`, which issue 18 makes required
// (a workflow Mastra may restart is refused before anyone is asked).
import { authenticatedCustomer, callbackUrl, config } from './app.js'

// --- sample ---
import { pusharyApprovalStep, pusharyApprovalStepInputSchema, pusharyAnswerSchema } from '@pushary/mastra'
import { createWorkflow } from '@mastra/core/workflows'

const review = pusharyApprovalStep(config, { callbackUrl, externalId: authenticatedCustomer.id })
const workflow = createWorkflow({
  id: 'customer-review',
  inputSchema: pusharyApprovalStepInputSchema,
  outputSchema: pusharyAnswerSchema,
  options: { autoRestartActiveRuns: false },
})
  .then(review)
  .commit()
// --- end of sample ---

export { workflow }
