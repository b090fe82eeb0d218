import { type PusharyConfig, resolvePusharyClient } from '../pushary/config.js'
import { parseExternalId } from '../pushary/identity.js'
import type { EnrollResult } from '../pushary/wire-responses.js'

/**
 * Creates a single-use enrollment link for one customer. Show `universalLink`
 * once, as a button or QR code, inside your authenticated product; opening it
 * on the phone and tapping "Link this phone" binds the device to `externalId`.
 * The customer ID is validated (not blank, at most 256 UTF-16 code units,
 * never trimmed) before any request.
 *
 * @example
 * const { universalLink } = await connect({ apiKey: process.env.PUSHARY_API_KEY! }, customer.id)
 */
export async function connect(config: PusharyConfig, externalId: string): Promise<EnrollResult> {
  const id = parseExternalId(externalId, 'externalId', 'connect')
  const client = resolvePusharyClient(config, 'connect')
  return client.enroll(id)
}
