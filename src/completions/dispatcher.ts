/// <reference path="./undici-agent.d.ts" />
import type { Transport } from '../ops/transport.js'
// Only undici's Agent, not the whole package (fetch, WebSocket, caches, mocks…): the rest is never used here
// (`exchange.ts` calls the Agent's own `dispatch`), and the bundle would evaluate it at every start. This path is not a
// public API, so package.json pins undici to patch releases (~7.30); the bundle test catches a move.
import Agent from 'undici/lib/dispatcher/agent.js'

// At most CONNECTIONS sockets to the upstream (calls beyond wait for one, in order), idle ones closed after 30 s:
// what the pool holds is bounded, whatever the load.
const CONNECTIONS = 256

// The one keep-alive Agent for all upstream calls.
export function createDispatcher(): Transport {
  return new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 600_000, connections: CONNECTIONS })
}
