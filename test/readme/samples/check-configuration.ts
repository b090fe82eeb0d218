// docs/operations.md "Startup self-check", as written, inside the function a
// worker calls at start (the function and its return are added).
import type { createPusharyDispatcher } from '@pushary/mastra'

type Dispatcher = ReturnType<typeof createPusharyDispatcher>

export async function checkWorker(dispatcher: Dispatcher, logger: { error(message: string): void }) {
  // --- sample ---
  const { checked, problems } = await dispatcher.checkConfiguration()
  for (const p of problems) logger.error(`${p.decisionId}: ${p.missing}: ${p.reason}`)
  // --- end of sample ---
  return { checked, problems }
}
