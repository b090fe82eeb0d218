// README (seed 002) "Short questions and workflows", as written. Added: the
// import of the application's values and the export at the end.
import { authenticatedCustomer, callbackUrl, config } from './app.js'

// --- sample ---
import { pusharyApprovalStep, pusharyApprovalStepInputSchema, pusharyAnswerSchema } from '@pushary/mastra'
import { createWorkflow } from '@mastra/core/workflows'

const review = pusharyApprovalStep(config, { callbackUrl, externalId: authenticatedCustomer.id })
const workflow = createWorkflow({
  id: 'customer-review',
  inputSchema: pusharyApprovalStepInputSchema,
  outputSchema: pusharyAnswerSchema,
}).then(review).commit()
// --- end of sample ---

export { workflow }
