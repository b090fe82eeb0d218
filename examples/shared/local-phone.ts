/**
 * The examples run against the local decision service. A real person links
 * a phone by opening the enrollment link and tapping "Link this phone"; for
 * unattended runs this does the same tap (a POST of the link), so the
 * examples can ask with `requireReachable: true` like production code should.
 */
import type { PusharyClient } from '@pushary/mastra'

export async function linkSimulatedPhone(client: PusharyClient, externalId: string): Promise<boolean> {
  if ((await client.reachability(externalId)).reachable) return false
  const { universalLink } = await client.enroll(externalId)
  const tapped = await fetch(universalLink, { method: 'POST', redirect: 'manual' })
  if (tapped.status !== 303) throw new Error(`linking the simulated phone failed (HTTP ${tapped.status})`)
  return true
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
