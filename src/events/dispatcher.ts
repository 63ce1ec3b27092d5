/// <reference path="../ops/undici.d.ts" />
import { isIP } from 'node:net'
import { type LazyTransport, lazyTransport } from '../ops/transport.js'
import { checkedLookup, ForbiddenAddressError, isForbiddenAddress } from './address.js'

// The undici Agent webhooks are posted through, loaded by the first delivery (undici's Agent and connector by their
// own paths, ops/undici.d.ts; ops/transport.ts). Unless private addresses are allowed, its connections go only to
// addresses that were checked: a host name is resolved by a lookup that refuses forbidden addresses (and the socket
// connects to what it returned), an IP literal is checked as it is.
export function createWebhookDispatcher(allowPrivate: boolean): LazyTransport {
  return lazyTransport(async () => {
    const { default: Agent } = await import('undici/lib/dispatcher/agent.js')
    if (allowPrivate) return new Agent({ connections: 16 })
    const { default: buildConnector } = await import('undici/lib/core/connect.js')
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
