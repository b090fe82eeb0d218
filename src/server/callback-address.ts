/**
 * Where the service may send callbacks. A `callbackUrl` is chosen by whoever
 * holds an API key, and the service POSTs to it and reports the status code
 * and error of every attempt: without a policy that is a probe of every
 * internal port the service can reach (cloud metadata at 169.254.169.254,
 * admin ports on 127.0.0.1). Loopback, private, link-local and other
 * non-public addresses are refused unless allowed by name; the hostname is
 * resolved, so a name pointing inside is refused too. The check runs at
 * create and again before each delivery (the name may resolve elsewhere by
 * then).
 */
import { lookup as dnsLookup } from 'node:dns/promises'
import { BlockList, isIP } from 'node:net'

/**
 * Which non-public callback addresses the service may call. Default: none.
 *
 * @example
 * await createPusharyDevServer({ callbackAddresses: { allowLoopback: true } })
 */
export interface CallbackAddressPolicy {
  /** Allow 127.0.0.0/8, ::1 and names resolving there (local development). */
  allowLoopback?: boolean
  /** Host names, IP addresses or CIDR ranges (`10.1.0.0/16`) allowed although not public. */
  allow?: readonly string[]
}

/** A resolver: the addresses of `hostname` (default `dns.lookup` with `all`). */
export type CallbackLookup = (hostname: string) => Promise<string[]>

/** Null when the URL may be called, else why not (one sentence). */
export type CallbackAddressCheck = (url: string) => Promise<string | null>

function internalRanges(): BlockList {
  const list = new BlockList()
  for (const [network, prefix] of [
    ['0.0.0.0', 8],
    ['10.0.0.0', 8],
    ['100.64.0.0', 10],
    ['169.254.0.0', 16],
    ['172.16.0.0', 12],
    ['192.0.0.0', 24],
    ['192.0.2.0', 24],
    ['192.168.0.0', 16],
    ['198.18.0.0', 15],
    ['198.51.100.0', 24],
    ['203.0.113.0', 24],
    ['224.0.0.0', 4],
    ['240.0.0.0', 4],
  ] as const) {
    list.addSubnet(network, prefix, 'ipv4')
  }
  for (const [network, prefix] of [
    ['::', 128],
    ['64:ff9b::', 96],
    ['100::', 64],
    ['2001:db8::', 32],
    ['fc00::', 7],
    ['fe80::', 10],
    ['fec0::', 10],
    ['ff00::', 8],
  ] as const) {
    list.addSubnet(network, prefix, 'ipv6')
  }
  return list
}

const INTERNAL = internalRanges()
const LOOPBACK = (() => {
  const list = new BlockList()
  list.addSubnet('127.0.0.0', 8, 'ipv4')
  list.addAddress('::1', 'ipv6')
  return list
})()

// An IPv4 address written inside IPv6 (`::ffff:127.0.0.1`, `::127.0.0.1`)
// reaches the IPv4 host: judge the IPv4 address.
function unwrapIpv4(address: string): string {
  const lower = address.toLowerCase()
  const mapped = /^(?:0{0,4}:){0,5}(?:ffff:)?((?:[0-9a-f]{1,4}):(?:[0-9a-f]{1,4}))$/.exec(lower)
  const dotted = /^(?:0{0,4}:){0,5}(?:ffff:)?(\d+\.\d+\.\d+\.\d+)$/.exec(lower)
  if (dotted?.[1] && lower.startsWith(':')) return dotted[1]
  if (mapped?.[1] && (lower.startsWith('::ffff:') || lower.startsWith('0:0:0:0:0:ffff:'))) {
    const [high, low] = mapped[1].split(':').map((part) => Number.parseInt(part, 16))
    return [(high ?? 0) >> 8, (high ?? 0) & 255, (low ?? 0) >> 8, (low ?? 0) & 255].join('.')
  }
  return address
}

/** `'public'`, `'loopback'` or `'internal'` for one IP address. */
export function classifyAddress(raw: string): 'public' | 'loopback' | 'internal' {
  const address = unwrapIpv4(raw)
  const family = isIP(address) === 6 ? 'ipv6' : 'ipv4'
  if (LOOPBACK.check(address, family)) return 'loopback'
  if (INTERNAL.check(address, family)) return 'internal'
  // Anything not plainly an IPv4 or IPv6 address is not trusted as public.
  return isIP(address) === 0 ? 'internal' : 'public'
}

const defaultLookup: CallbackLookup = async (hostname) =>
  (await dnsLookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address)

/**
 * Builds the check of one callback URL under `policy`.
 *
 * @example
 * const check = createCallbackAddressCheck({ allowLoopback: true })
 * await check('http://169.254.169.254/latest') // 'the callback URL points to an internal address (169.254.169.254) …'
 */
export function createCallbackAddressCheck(
  policy: CallbackAddressPolicy = {},
  lookup: CallbackLookup = defaultLookup,
): CallbackAddressCheck {
  const allowedNames = new Set<string>()
  const allowedRanges = new BlockList()
  for (const entry of policy.allow ?? []) {
    const [network, prefix] = entry.split('/')
    const family = isIP(network ?? '')
    if (family === 0) {
      allowedNames.add(entry.toLowerCase())
    } else if (prefix === undefined) {
      allowedRanges.addAddress(network ?? '', family === 6 ? 'ipv6' : 'ipv4')
    } else {
      allowedRanges.addSubnet(network ?? '', Number(prefix), family === 6 ? 'ipv6' : 'ipv4')
    }
  }
  const allowedAddress = (address: string) =>
    allowedRanges.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4')

  return async (url) => {
    let hostname: string
    try {
      hostname = new URL(url).hostname.toLowerCase()
    } catch {
      return 'the callback URL is not a valid URL'
    }
    const bare = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname
    if (allowedNames.has(bare)) return null
    let addresses: string[]
    try {
      addresses = isIP(bare) === 0 ? await lookup(bare) : [bare]
    } catch {
      return `the callback host "${bare}" does not resolve`
    }
    if (addresses.length === 0) return `the callback host "${bare}" does not resolve`
    for (const address of addresses) {
      const kind = classifyAddress(address)
      if (kind === 'public' || allowedAddress(address) || allowedAddress(unwrapIpv4(address))) continue
      if (kind === 'loopback' && policy.allowLoopback === true) continue
      return `the callback URL points to ${kind === 'loopback' ? 'a loopback' : 'an internal'} address (${address}); start the service with ${
        kind === 'loopback'
          ? 'allowLoopback (--allow-loopback-callbacks)'
          : 'an allow-list entry (--allow-callback-host)'
      } to call it`
    }
    return null
  }
}
