import type { LookupAddress, LookupOptions } from 'node:dns'
import { BlockList, isIP } from 'node:net'

// Server-side request forgery: a webhook may not reach the service's own machine or network. An address is refused
// when it is loopback, private, link-local, multicast, unspecified or otherwise not routable on the internet, in
// IPv4 and IPv6 (an IPv4-mapped IPv6 address is judged as its IPv4 address).

const blocked = new BlockList()
const v4 = [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const
const v6 = [
  ['::', 96], // unspecified, loopback, IPv4-compatible
  ['64:ff9b::', 96], // NAT64: an IPv4 address behind a translator
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const
for (const [net, bits] of v4) blocked.addSubnet(net, bits, 'ipv4')
for (const [net, bits] of v6) blocked.addSubnet(net, bits, 'ipv6')

export function isForbiddenAddress(address: string): boolean {
  const plain = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '')
  const family = isIP(plain)
  if (family === 4) return blocked.check(plain, 'ipv4')
  // BlockList judges an IPv4-mapped IPv6 address (::ffff:a.b.c.d, in any spelling) by the IPv4 rules.
  return family !== 6 || blocked.check(plain, 'ipv6')
}

// What a refusal for a private address says to do: the check runs where the endpoint is added (the CLI's process, or
// the server for the dashboard) and again where it is delivered (the server), so both need the setting.
export const ALLOW_PRIVATE_HINT =
  'is allowed only with STUDIO_WEBHOOKS_ALLOW_PRIVATE=true (for a receiver on your own machine or network), ' +
  'set for the server too, which delivers'

// A delivery attempt the server refused for its address: the start of its answer in the delivery log, and what the
// log and `webhooks list` show in place of a status.
export const REFUSED_PRIVATE = 'refused: private address'

// What an attempt without an HTTP status is shown as: refused here for its address, or no answer from the receiver.
export const unansweredAs = (answer: string | null) =>
  answer?.startsWith(REFUSED_PRIVATE) ? REFUSED_PRIVATE : 'no answer'

export class ForbiddenAddressError extends Error {
  readonly code = 'WEBHOOK_FORBIDDEN_ADDRESS'
  constructor(host: string, address: string) {
    super(`${host} resolves to ${address}, a loopback, private, link-local, multicast or unspecified address`)
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void

// A `lookup` for net.connect/tls.connect that refuses a host with any forbidden address, so the address the socket
// connects to is one that was checked (no second resolution that DNS rebinding could change).
// node:dns (and its resolver) loads at the first lookup, not at every start of the service; a lookup that throws
// (an argument node:dns refuses) answers through the callback, as its own errors do.
export function checkedLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  const checked = (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => {
    if (err) return callback(err, [])
    const bad = addresses.find((a) => isForbiddenAddress(a.address))
    if (bad) return callback(new ForbiddenAddressError(hostname, bad.address), [])
    if (options.all) return callback(null, addresses)
    const first = addresses.find((a) => !options.family || a.family === options.family) ?? addresses[0]
    callback(null, first.address, first.family)
  }
  dns()
    .then(({ lookup }) => lookup(hostname, { ...options, all: true }, checked))
    .catch((e) => callback(e, []))
}
let loaded: Promise<typeof import('node:dns')> | undefined
const dns = () => (loaded ??= import('node:dns'))

// Every address `host` stands for (itself when it is an IP literal), checked; throws ForbiddenAddressError.
export async function assertPublicHost(host: string): Promise<void> {
  const plain = host.replace(/^\[|\]$/g, '')
  if (isIP(plain)) {
    if (isForbiddenAddress(plain)) throw new ForbiddenAddressError(host, plain)
    return
  }
  await new Promise<void>((ok, fail) => checkedLookup(plain, { all: true }, (err) => (err ? fail(err) : ok())))
}
