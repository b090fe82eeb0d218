import { describe, expect, it } from 'vitest'
import { createPusharyClient } from '../../src/pushary/client.js'
import type { Decision } from '../../src/pushary/wire-responses.js'
import { handOverVerifiedDecision, takeVerifiedDecision } from '../../src/steps/verified-handoff.js'

const client = () =>
  createPusharyClient({ baseUrl: 'http://127.0.0.1:9/api/v1/server', apiKey: 'pk_test.sk_test' })
const target = { workflowId: 'refund', runId: 'run-1', stepId: 'approve', decisionId: 'dec_1' }
const decision = { decisionId: 'dec_1', status: 'answered', value: 'yes' } as unknown as Decision

describe('the verified-decision handoff between dispatcher and step', () => {
  it('hands the decision over once, to exactly the step and decision it was issued for', () => {
    const shared = client()
    const { proof } = handOverVerifiedDecision(shared, target, decision)
    expect(proof).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(takeVerifiedDecision(shared, proof, target)).toBe(decision)
    // Single use: a replay of the same proof names nothing.
    expect(takeVerifiedDecision(shared, proof, target)).toBeNull()
  })

  it('refuses, and burns, a proof presented for another workflow, run, step or decision', () => {
    const shared = client()
    for (const other of [
      { ...target, workflowId: 'other' },
      { ...target, runId: 'run-2' },
      { ...target, stepId: 'approve-2' },
      { ...target, decisionId: 'dec_2' },
    ]) {
      const { proof } = handOverVerifiedDecision(shared, target, decision)
      expect(takeVerifiedDecision(shared, proof, other)).toBeNull()
      expect(takeVerifiedDecision(shared, proof, target)).toBeNull()
    }
  })

  it('refuses a decision whose own ID is not the one the step asked', () => {
    const shared = client()
    const { proof } = handOverVerifiedDecision(shared, { ...target, decisionId: 'dec_2' }, decision)
    expect(takeVerifiedDecision(shared, proof, { ...target, decisionId: 'dec_2' })).toBeNull()
  })

  it('trusts only reads made through the same client object, and nothing once discarded', () => {
    const dispatcherClient = client()
    const { proof } = handOverVerifiedDecision(dispatcherClient, target, decision)
    expect(takeVerifiedDecision(client(), proof, target)).toBeNull()
    const handoff = handOverVerifiedDecision(dispatcherClient, target, decision)
    handoff.discard()
    expect(takeVerifiedDecision(dispatcherClient, handoff.proof, target)).toBeNull()
    expect(takeVerifiedDecision(dispatcherClient, undefined, target)).toBeNull()
    expect(takeVerifiedDecision(dispatcherClient, 'a'.repeat(43), target)).toBeNull()
  })

  it('issues a fresh unguessable proof for every resume', () => {
    const shared = client()
    const proofs = new Set(
      Array.from({ length: 100 }, () => handOverVerifiedDecision(shared, target, decision).proof),
    )
    expect(proofs.size).toBe(100)
  })
})
