import type { IncomingMessage } from 'node:http'
import { type BlockList, isIP } from 'node:net'

// The client's address: the TCP peer's, unless the peer is one of the trusted reverse proxies
// (STUDIO_TRUSTED_PROXIES); then the nearest address in X-Forwarded-For that is not one of them, read from the right
// (what stands left of the first untrusted hop is whatever the client wrote). The server resolves it once per request
// when proxies are trusted (`forwardedAddress`); everything that counts or records addresses asks `clientAddress`.
const ADDRESS = Symbol('client address')
type Addressed = IncomingMessage & { [ADDRESS]?: string }

export const clientAddress = (req: IncomingMessage): string =>
  (req as Addressed)[ADDRESS] ?? req.socket.remoteAddress ?? ''

// An IPv4 peer of a dual-stack socket is `::ffff:a.b.c.d`.
const plain = (a: string) => (a.startsWith('::ffff:') && isIP(a.slice(7)) === 4 ? a.slice(7) : a)

export function forwardedAddress(trusted: BlockList) {
  const isTrusted = (a: string) => {
    const family = isIP(a)
    return family !== 0 && trusted.check(a, family === 4 ? 'ipv4' : 'ipv6')
  }
  return (req: IncomingMessage) => {
    let address = plain(req.socket.remoteAddress ?? '')
    if (!isTrusted(address)) return
    const header = req.headers['x-forwarded-for'] ?? ''
    const hops = (Array.isArray(header) ? header.join(',') : header).split(',')
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = plain(hops[i].trim())
      if (isIP(hop) === 0) break
      address = hop
      if (!isTrusted(hop)) break
    }
    ;(req as Addressed)[ADDRESS] = address
  }
}
