// docs/workflows.md "A missing gate: the compiler and the logger", as
// written. Added before the sample: the application's config, its logger (a
// real Mastra logger that also keeps each warning), the restart itself and
// where Mastra keeps its runs; after it, the exports.
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import { ConsoleLogger } from '@mastra/core/logger'
import { config } from './app.js'

class KeepingLogger extends ConsoleLogger {
  readonly warnings: string[] = []
  override warn(message: string): void {
    this.warnings.push(message)
  }
}
const logger = new KeepingLogger()
const restarted: string[] = []
const restartApi = async () => {
  restarted.push('api')
  return { restarted: true }
}
const mastraUrl = `file:${join(process.env.README_SAMPLES_DIR!, `restart-${randomUUID()}.db`)}`

// --- sample ---
import { Mastra } from '@mastra/core/mastra'
import { createStep, createWorkflow } from '@mastra/core/workflows'
import { LibSQLStore } from '@mastra/libsql'
import { pusharyApprovalStep, pusharyApprovalStepInputSchema } from '@pushary/mastra'
import { z } from 'zod'

// Its own input schema: it compiles straight after the approval step, and would run after a Deny.
const restartService = createStep({
  id: 'restart-service',
  inputSchema: z.object({ approved: z.boolean() }),
  outputSchema: z.object({ restarted: z.boolean() }),
  execute: async () => restartApi(),
})

const workflow = createWorkflow({
  id: 'restart',
  inputSchema: pusharyApprovalStepInputSchema,
  outputSchema: z.unknown(),
  options: { autoRestartActiveRuns: false },
})
  .then(pusharyApprovalStep(config, { id: 'approve', externalId: 'ops_1' }))
  .then(restartService) // no .then(pusharyGate()) in between
  .commit()

const mastra = new Mastra({
  workflows: { restart: workflow },
  storage: new LibSQLStore({ id: 'app', url: mastraUrl }),
  logger, // the warning goes to the Mastra instance's logger
})
const run = await mastra.getWorkflow('restart').createRun()
const result = await run.start({
  inputData: { operationId: 'restart:api:1', question: 'Restart the api service?', type: 'confirm' },
})
// logger.warn: [pushary] workflow "restart": approval step "approve" is followed by "restart-service",
// not by pusharyGate() or a permit step, so "restart-service" also runs after a Deny, an expiry or a
// cancellation unless it checks `approved` itself. Insert .then(pusharyGate()) after "approve" …
// --- end of sample ---

export { logger, restarted, result }
