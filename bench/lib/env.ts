/**
 * One in-process environment, as issue 12 measures it: the local decision
 * service over loopback HTTP, Mastra on a LibSQL file, the SQLite review
 * store, and the workflows the scenarios resume. Every collaborator can be
 * counted and timed (the probe), which is how "Where the time goes" is made.
 */
import { mkdtempSync } from 'node:fs'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Mastra } from '@mastra/core/mastra'
import { createStep, createWorkflow } from '@mastra/core/workflows'
import { LibSQLStore } from '@mastra/libsql'
import { z } from 'zod/v4'
import { createPusharyDispatcher } from '../../src/agents/dispatcher.js'
import { createPusharyClient } from '../../src/pushary/client.js'
import { pusharyAnswerSchema } from '../../src/pushary/question.js'
import type { PusharyDevServerLimits } from '../../src/server/connection-limits.js'
import { createPusharyDevServer } from '../../src/server/dev-server.js'
import { pusharyApprovalStepInputSchema } from '../../src/steps/approval-schemas.js'
import { pusharyApprovalStep } from '../../src/steps/approval-step.js'
import { pusharyGate } from '../../src/steps/gate-step.js'
import type { PusharyReviewStore } from '../../src/store/review-store.js'
import { createSqliteReviewStore } from '../../src/store/sqlite-store.js'
import {
  createPusharyApprovalWorkflow,
  createPusharyForeachApprovalWorkflow,
  pusharyApprovalBatchStep,
} from '../../src/workflows/approval-workflows.js'

export const EXTERNAL_ID = 'bench-customer'

/** Calls and inclusive milliseconds per collaborator, while `enabled`. */
export class Probe {
  enabled = false
  readonly calls = new Map<string, { calls: number; ms: number }>()

  record(key: string, ms: number): void {
    if (!this.enabled) return
    const entry = this.calls.get(key) ?? { calls: 0, ms: 0 }
    entry.calls += 1
    entry.ms += ms
    this.calls.set(key, entry)
  }

  async time<T>(key: string, body: () => Promise<T>): Promise<T> {
    const started = performance.now()
    try {
      return await body()
    } finally {
      this.record(key, performance.now() - started)
    }
  }

  reset(): void {
    this.calls.clear()
  }
}

function httpKey(input: RequestInfo | URL, init?: RequestInit): string {
  const url = new URL(input instanceof Request ? input.url : String(input))
  const method = init?.method ?? (input instanceof Request ? input.method : 'GET')
  const path = url.pathname.replace(/^\/api\/v1\/server/, '').replace(/\/decisions\/[^/]+/, '/decisions/:id')
  return `HTTP ${method} ${path}`
}

/**
 * Wraps every method of the review store in place: the store stays the same
 * object, as the package's own callers see it (a claim's lease starts from
 * the time the store object itself wrote; see src/store/claim-times.ts).
 */
function instrumentStore(store: PusharyReviewStore, probe: Probe): PusharyReviewStore {
  const methods = store as unknown as Record<string, unknown>
  for (const [name, original] of Object.entries(methods)) {
    if (typeof original !== 'function') continue
    methods[name] = (...args: unknown[]) =>
      probe.time(`review store: ${name}`, () => (original as (...a: unknown[]) => Promise<unknown>)(...args))
  }
  return store
}

/** Wraps every method of one of Mastra's storage domains in place (bench only). */
export async function instrumentMastraStorage(
  storage: LibSQLStore,
  probe: Probe,
  domain: 'workflows' | 'memory' = 'workflows',
): Promise<void> {
  const workflows = (await storage.getStore(domain)) as unknown as Record<string, unknown> | undefined
  if (!workflows) throw new Error(`LibSQLStore has no ${domain} domain`)
  let proto = Object.getPrototypeOf(workflows) as object | null
  const names = new Set<string>()
  while (proto && proto !== Object.prototype) {
    for (const name of Object.getOwnPropertyNames(proto)) names.add(name)
    proto = Object.getPrototypeOf(proto) as object | null
  }
  for (const name of names) {
    const original = workflows[name]
    if (name === 'constructor' || typeof original !== 'function') continue
    workflows[name] = function (this: unknown, ...args: unknown[]) {
      const result = (original as (...a: unknown[]) => unknown).apply(workflows, args)
      if (!(result instanceof Promise)) return result
      const started = performance.now()
      return result.finally(() =>
        probe.record(
          `Mastra storage: ${domain === 'memory' ? 'memory.' : ''}${name}`,
          performance.now() - started,
        ),
      )
    }
  }
}

export interface CapturedCallback {
  body: string
  signature: string
  arrivedAt: number
}

/** A loopback receiver that keeps each signed callback body, by decision ID. */
async function startCallbackReceiver() {
  const arrived = new Map<string, CapturedCallback>()
  const waiters = new Map<string, (callback: CapturedCallback) => void>()
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const arrivedAt = performance.now()
      const body = Buffer.concat(chunks).toString('utf8')
      const id = (JSON.parse(body) as { correlationId?: string }).correlationId ?? ''
      const callback = { body, signature: String(req.headers['x-pushary-signature'] ?? ''), arrivedAt }
      arrived.set(id, callback)
      waiters.get(id)?.(callback)
      res.writeHead(200).end('ok')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : 0
  return {
    url: `http://127.0.0.1:${port}/callbacks`,
    /** Resolves with the callback for `decisionId`, now or when it arrives. */
    next(decisionId: string): Promise<CapturedCallback> {
      const known = arrived.get(decisionId)
      if (known) return Promise.resolve(known)
      return new Promise((resolve) => waiters.set(decisionId, resolve))
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

/** `serviceLimits`: the local service's connection limits, when a run needs other than the defaults. */
export async function createBenchEnv(name: string, options: { serviceLimits?: PusharyDevServerLimits } = {}) {
  const dir = mkdtempSync(join(tmpdir(), `pushary-bench-${name}-`))
  const probe = new Probe()
  const service = await createPusharyDevServer({
    callbackAddresses: { allowLoopback: true },
    dbPath: join(dir, 'service.db'),
    port: 0,
    onError: () => {},
    ...(options.serviceLimits ? { limits: options.serviceLimits } : {}),
  })
  const receiver = await startCallbackReceiver()
  const countedFetch: typeof fetch = (input, init) =>
    probe.time(httpKey(input as RequestInfo | URL, init), () => fetch(input, init))
  const client = createPusharyClient({
    baseUrl: service.baseUrl,
    apiKey: service.apiKey,
    fetch: countedFetch,
  })
  const rawStore = createSqliteReviewStore({ url: `file:${join(dir, 'reviews.db')}` })
  const store = instrumentStore(rawStore, probe)
  const config = { client, store }
  const effects = { protected: 0, bare: 0 }

  const protectedStep = (id: string, count: () => void) =>
    createStep({
      id,
      inputSchema: pusharyAnswerSchema,
      outputSchema: z.object({ done: z.literal(true) }),
      execute: async () => {
        count()
        return { done: true as const }
      },
    })
  const approved = (id: string, callbackUrl?: string) =>
    createWorkflow({
      id,
      inputSchema: pusharyApprovalStepInputSchema,
      outputSchema: z.object({ done: z.literal(true) }),
      options: { autoRestartActiveRuns: false },
    })
      .then(pusharyApprovalStep(config, { externalId: EXTERNAL_ID, ...(callbackUrl ? { callbackUrl } : {}) }))
      .then(pusharyGate())
      .then(protectedStep('protected', () => effects.protected++))
      .commit()

  // Bare Mastra, same shape: a step that suspends under a label, a gate, the protected step.
  const bareApproval = createStep({
    id: 'approval',
    inputSchema: pusharyApprovalStepInputSchema,
    outputSchema: pusharyAnswerSchema,
    resumeSchema: z.object({ answer: z.string() }),
    suspendSchema: z.object({ label: z.string() }),
    execute: async ({ inputData, resumeData, suspend }) => {
      if (resumeData)
        return {
          status: 'answered' as const,
          value: resumeData.answer,
          approved: resumeData.answer === 'yes',
        }
      return suspend({ label: inputData.operationId }, { resumeLabel: inputData.operationId })
    },
  })
  const bare = createWorkflow({
    id: 'bare',
    inputSchema: pusharyApprovalStepInputSchema,
    outputSchema: z.object({ done: z.literal(true) }),
  })
    .then(bareApproval)
    .then(pusharyGate())
    .then(protectedStep('protected', () => effects.bare++))
    .commit()

  const item = createPusharyApprovalWorkflow(config, { workflowId: 'bench-item', externalId: EXTERNAL_ID })
  const batch = createWorkflow({
    id: 'bench-batch',
    inputSchema: z.array(pusharyApprovalStepInputSchema),
    outputSchema: z.array(pusharyAnswerSchema),
    options: { autoRestartActiveRuns: false },
  })
    .then(pusharyApprovalBatchStep({ childWorkflowId: 'bench-item', store }))
    .commit()

  // `.foreach` of ten items, each suspended under its own label: ours, and bare Mastra's same shape.
  const foreach = createPusharyForeachApprovalWorkflow(config, {
    workflowId: 'bench-foreach',
    externalId: EXTERNAL_ID,
    concurrency: 10,
  })
  const bareForeach = createWorkflow({
    id: 'bare-foreach',
    inputSchema: z.array(pusharyApprovalStepInputSchema),
    outputSchema: z.array(pusharyAnswerSchema),
    options: { autoRestartActiveRuns: false },
  })
    .foreach(bareApproval, { concurrency: 10 })
    .commit()

  const storage = new LibSQLStore({ id: 'bench', url: `file:${join(dir, 'mastra.db')}` })
  const mastra = new Mastra({
    storage,
    workflows: {
      approved: approved('approved'),
      viaCallback: approved('via-callback', receiver.url),
      bare,
      item,
      batch,
      foreach,
      bareForeach,
    },
    logger: false,
  })
  await instrumentMastraStorage(storage, probe)
  const dispatcher = createPusharyDispatcher({ mastra, client, store, webhookSecret: service.webhookSecret })
  return {
    dir,
    probe,
    service,
    receiver,
    client,
    store,
    mastra,
    dispatcher,
    effects,
    async close() {
      await rawStore.close()
      await receiver.close()
      await service.close()
    },
  }
}

export type BenchEnv = Awaited<ReturnType<typeof createBenchEnv>>
