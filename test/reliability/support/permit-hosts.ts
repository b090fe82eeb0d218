/**
 * Runs `fixtures/permit-host.ts` as its own OS process: one host of the
 * permit tests (a phase, the shared directory, a JSON argument), or one that
 * is expected to die by SIGKILL at a crash hook.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { runFixture } from '../../helpers/mastra.js'
import { nodeScript } from '../../helpers/node-script.js'

const SCRIPT = 'test/reliability/fixtures/permit-host.ts'

/** What the `start` phase prints. */
export interface StartedPermitRun {
  runId: string
  status: string
  decisionId: string
}

/** One phase of the permit host; resolves with the JSON line it printed. */
export function permitHost(phase: string, dir: string, arg: unknown, env: Record<string, string> = {}) {
  return runFixture<Record<string, unknown>>([phase, dir, JSON.stringify(arg)], { script: SCRIPT, env })
}

/** Runs a host that is expected to die by SIGKILL; resolves with its signal. */
export function killedPermitHost(phase: string, dir: string, arg: unknown, env: Record<string, string>) {
  return new Promise<string | null>((resolve) => {
    const child: ChildProcess = spawn(
      process.execPath,
      [...nodeScript(SCRIPT), phase, dir, JSON.stringify(arg)],
      { cwd: process.cwd(), stdio: 'ignore', env: { ...process.env, ...env } },
    )
    child.on('close', (_code, signal) => resolve(signal))
  })
}

/** The approval step input of one refund, with the subject the permit binds. */
export function refundInput(orderId: string) {
  return {
    operationId: `refund:${orderId}:v1`,
    question: `Refund order ${orderId}?`,
    externalId: 'customer_1',
    subject: { toolName: 'refund.create', toolTarget: `order ${orderId}`, parameters: { amountMinor: 4800 } },
  }
}
