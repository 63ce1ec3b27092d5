import { type LazyTransport, lazyTransport } from '../ops/transport.js'

// At most CONNECTIONS sockets to the upstream (calls beyond wait for one, in order), idle ones closed after 30 s:
// what the pool holds is bounded, whatever the load.
const CONNECTIONS = 256

// The one keep-alive Agent for all upstream calls, loaded with undici by the first call (ops/transport.ts:
// milliseconds, once, within that call's deadline); `exchange.ts` calls its `dispatch`.
export function createDispatcher(): LazyTransport {
  return lazyTransport(async () => {
    // undici is CommonJS: its exports are the dynamic import's default (in the bundle as well).
    const { Agent } = (await import('undici')).default
    return new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 600_000, connections: CONNECTIONS })
  })
}
