// docs/security.md "Verifying a callback yourself", as written. Added before
// the sample: the client it re-reads the decision with.
import { createPusharyClient } from '@pushary/mastra'

const client = createPusharyClient()

// --- sample ---
import { isApproved, readPusharyCallback } from '@pushary/mastra'

export async function POST(request: Request): Promise<Response> {
  // Read with a cap (413), verify the signature (401), then parse (400), in that order.
  const read = await readPusharyCallback(request, process.env.PUSHARY_WEBHOOK_SECRET, { maxBytes: 64 * 1024 })
  if (read.status === 'rejected') return new Response(read.reason, { status: read.httpStatus })
  // A callback body is never authority: re-read the decision before acting on it.
  const decision = await client.decisions.get(read.callback.decisionId)
  return new Response(isApproved(decision) ? 'approved' : 'not approved')
}
// --- end of sample ---
