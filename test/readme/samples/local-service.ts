// docs/local-service.md "Programmatic use", as written. Added before the
// sample: where the service keeps its database; after it, the exports (the
// test links a phone, then closes the service).
import { join } from 'node:path'

const dbPath = join(process.env.README_SAMPLES_DIR!, 'local-service', 'dev.db')

// --- sample ---
import { createPusharyClient, createPusharyDevServer, isApproved } from '@pushary/mastra'

const service = await createPusharyDevServer({ dbPath, port: 0 }) // e.g. dbPath: '.pushary/dev.db'
const client = createPusharyClient({ apiKey: service.apiKey, baseUrl: service.baseUrl })

// Once per customer: open this link on the phone and tap "Link this phone".
const { universalLink } = await client.enroll('customer_1')
const before = await client.reachability('customer_1') // no phone linked yet

const created = await client.decisions.create({
  question: 'Refund EUR 48 on order_1?',
  externalId: 'customer_1',
})
// A tap on the reviewer page answers it; a relayed answer takes the same path:
await client.decisions.answer(created.decisionId, 'yes')
const decision = await client.decisions.get(created.decisionId)
console.log(isApproved(decision)) // true: an affirmative confirm
// await service.close() when done
// --- end of sample ---

export { before, client, decision, service, universalLink }
