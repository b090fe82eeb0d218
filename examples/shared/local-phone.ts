/**
 * The examples run against the local decision service. A real person links
 * a phone by opening the enrollment link and tapping "Link this phone"; for
 * unattended runs the testing entry's simulated phone does the same tap, so
 * the examples can ask with `requireReachable: true` like production code
 * should.
 */
import type { PusharyClient } from '@pushary/mastra'
import { linkSimulatedPhone as linkPhone, type SimulatedPhone } from '@pushary/mastra/testing'

/**
 * Links a simulated phone to `externalId` unless a phone is already linked
 * (a kept `.pushary/` database); returns the new phone, or null when one was
 * linked before.
 */
export async function linkSimulatedPhone(
  client: PusharyClient,
  externalId: string,
): Promise<SimulatedPhone | null> {
  if ((await client.reachability(externalId)).reachable) return null
  return linkPhone(client, externalId)
}

/** Waits until the customer has linked a phone (the person taps the enrollment link), or the time runs out. */
export async function waitUntilReachable(
  client: PusharyClient,
  externalId: string,
  timeoutMs: number,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if ((await client.reachability(externalId)).reachable) return true
    await new Promise((resolve) => setTimeout(resolve, 500))
  }
  return false
}
