/// <reference path="../ops/undici.d.ts" />
import type { Transport } from '../ops/transport.js'
// undici's Agent by its own path (ops/undici.d.ts); `exchange.ts` calls its `dispatch`.
import Agent from 'undici/lib/dispatcher/agent.js'

// At most CONNECTIONS sockets to the upstream (calls beyond wait for one, in order), idle ones closed after 30 s:
// what the pool holds is bounded, whatever the load.
const CONNECTIONS = 256

// The one keep-alive Agent for all upstream calls.
export function createDispatcher(): Transport {
  return new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 600_000, connections: CONNECTIONS })
}
