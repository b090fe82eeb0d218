/**
 * Hands the decision the dispatcher just verified to the approval step it
 * resumes, so one resume reads the decision from the service once, not twice.
 *
 * Resume data is never authority (anyone who reaches Mastra's resume API can
 * send `{ answer: 'yes' }`), so what travels in it is only a proof: 32 random
 * bytes naming an entry of a registry that lives in this process's memory,
 * next to the client the dispatcher verified with. The step honours a proof
 * only when it was issued through the same client object, for the same
 * workflow, run, step and decision, and only once; the entry is removed on
 * the first look-up whatever its outcome, and the dispatcher discards it when
 * its resume returns. A proof copied from a snapshot, a log or another resume,
 * or sent over Mastra's HTTP server, names nothing, and the step falls back to
 * reading the decision from the service itself.
 *
 * The registries hang off the client objects (a WeakMap, so a dropped client
 * drops its entries): a step built with another client, e.g. one pointed at
 * another service, never trusts this dispatcher's read.
 */
import { randomBytes } from 'node:crypto'
import type { PusharyClient } from '../pushary/client.js'
import type { Decision } from '../pushary/wire-responses.js'

/** Where one verified decision may be used: the suspended step that asked it. */
export interface HandoffTarget {
  workflowId: string
  runId: string
  stepId: string
  decisionId: string
}

interface Entry extends HandoffTarget {
  decision: Decision
}

/** A proof handed to one resume; `discard` ends it whether or not it was used. */
export interface VerifiedHandoff {
  proof: string
  discard(): void
}

const registries = new WeakMap<PusharyClient, Map<string, Entry>>()

/**
 * Registers `decision`, verified through `client`, for the one step named by
 * `target`, and returns the single-use proof to put in the resume data.
 *
 * @example
 * const handoff = handOverVerifiedDecision(client, review, decision)
 * try { await resume({ ...resumeData, proof: handoff.proof }) } finally { handoff.discard() }
 */
export function handOverVerifiedDecision(
  client: PusharyClient,
  target: HandoffTarget,
  decision: Decision,
): VerifiedHandoff {
  let registry = registries.get(client)
  if (!registry) {
    registry = new Map()
    registries.set(client, registry)
  }
  const proof = randomBytes(32).toString('base64url')
  registry.set(proof, {
    workflowId: target.workflowId,
    runId: target.runId,
    stepId: target.stepId,
    decisionId: target.decisionId,
    decision,
  })
  const owner = registry
  return { proof, discard: () => void owner.delete(proof) }
}

/**
 * The decision behind `proof` when it was issued through `client` for exactly
 * this step and decision, else `null` (the caller then reads the service).
 * Consumes the proof either way.
 *
 * @example
 * const decision = takeVerifiedDecision(client, resumeData.proof, { workflowId, runId, stepId, decisionId })
 *   ?? (await client.decisions.get(decisionId))
 */
export function takeVerifiedDecision(
  client: PusharyClient,
  proof: string | undefined,
  target: HandoffTarget,
): Decision | null {
  if (proof === undefined) return null
  const registry = registries.get(client)
  const entry = registry?.get(proof)
  if (!registry || !entry) return null
  registry.delete(proof)
  const matches =
    entry.workflowId === target.workflowId &&
    entry.runId === target.runId &&
    entry.stepId === target.stepId &&
    entry.decisionId === target.decisionId &&
    entry.decision.decisionId === target.decisionId
  return matches ? entry.decision : null
}
