/// <reference path="./undici-agent.d.ts" />
import type { Dispatcher } from 'undici'
// Only undici's Agent and its request API, not the whole package (fetch, WebSocket, caches, mocks…): the rest is
// never used here, and the bundle would evaluate it at every start. These are the modules undici's own index.js
// requires; index.js also puts `request` on Dispatcher.prototype, which is done here for this Agent alone. These
// paths are not a public API, so package.json pins undici to patch releases (~7.30); the bundle test catches a move.
import Agent from 'undici/lib/dispatcher/agent.js'
import request from 'undici/lib/api/api-request.js'

// At most CONNECTIONS sockets to the upstream (calls beyond wait for one, in order), idle ones closed after 30 s:
// what the pool holds is bounded, whatever the load.
const CONNECTIONS = 256

// The one keep-alive Agent for all upstream calls.
export function createDispatcher(): Dispatcher {
  const agent = new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 600_000, connections: CONNECTIONS })
  return Object.assign(agent, { request })
}
