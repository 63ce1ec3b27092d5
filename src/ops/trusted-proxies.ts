import { BlockList, isIP } from 'node:net'
import * as v from 'valibot'

// STUDIO_TRUSTED_PROXIES: the reverse proxies in front of the service, as addresses and CIDR ranges separated by
// commas (`127.0.0.1`, `10.0.0.0/8`, `::1`); null when it is not that.
function blockList(s: string): BlockList | null {
  const list = new BlockList()
  for (const entry of s.split(',')) {
    const [address, bits, extra] = entry.trim().split('/')
    const family = isIP(address)
    if (family === 0 || extra !== undefined) return null
    const type = family === 4 ? 'ipv4' : 'ipv6'
    if (bits === undefined) list.addAddress(address, type)
    else if (/^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128))
      list.addSubnet(address, Number(bits), type)
    else return null
  }
  return list
}

export const trustedProxies = v.pipe(
  v.string(),
  v.check((s) => blockList(s) !== null, 'must be IP addresses or CIDR ranges (10.0.0.0/8), separated by commas'),
  v.transform((s) => blockList(s) ?? new BlockList())
)
