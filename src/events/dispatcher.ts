import { isIP } from 'node:net'
import { type LazyTransport, lazyTransport } from '../ops/transport.js'
import { checkedLookup, ForbiddenAddressError, isForbiddenAddress } from './address.js'

// The undici Agent webhooks are posted through, loaded with undici by the first delivery (ops/transport.ts). Unless private addresses are allowed, its connections go only to
// addresses that were checked: a host name is resolved by a lookup that refuses forbidden addresses (and the socket
// connects to what it returned), an IP literal is checked as it is.
export function createWebhookDispatcher(allowPrivate: boolean): LazyTransport {
  return lazyTransport(async () => {
    // undici is CommonJS: its exports are the dynamic import's default (in the bundle as well).
    const { Agent, buildConnector } = (await import('undici')).default
    if (allowPrivate) return new Agent({ connections: 16 })
    const connector = buildConnector({ lookup: checkedLookup })
    return new Agent({
      connections: 16,
      connect(options, callback) {
        const host = options.hostname.replace(/^\[|\]$/g, '')
        if (isIP(host) && isForbiddenAddress(host)) return callback(new ForbiddenAddressError(host, host), null)
        connector(options, callback)
      },
    })
  })
}
