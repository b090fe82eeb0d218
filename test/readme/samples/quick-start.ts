// README (seed 002) "Quick start", as written. Only the import of the
// application's values and the export at the end are added. The sample names
// a provider model ('openai/gpt-4o'); there is no provider here, so the test
// swaps it for the scripted model after construction (agent.__updateModel),
// leaving the sample's line as written.
import { authenticatedCustomer } from './app.js'

// --- sample ---
import { Agent } from '@mastra/core/agent'
import { connect, createPusharyAskTool } from '@pushary/mastra'

const config = { apiKey: process.env.PUSHARY_API_KEY! }
const { universalLink } = await connect(config, authenticatedCustomer.id)
// Once per user: show universalLink as a button or QR code.

const agent = new Agent({
  id: 'support',
  name: 'Support',
  instructions: 'Ask the customer before you refund an order.',
  model: 'openai/gpt-4o',
  tools: { askHuman: createPusharyAskTool(config, { externalId: authenticatedCustomer.id }) },
})
// --- end of sample ---

export { agent, universalLink }
