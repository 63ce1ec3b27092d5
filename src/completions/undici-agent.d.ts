// Types of the deep imports in completions/ and events/dispatcher.ts (undici has no "exports" map; its types
// describe the package root).
declare module 'undici/lib/dispatcher/agent.js' {
  import type { Dispatcher, Agent as RootAgent } from 'undici'
  // Without the package root loaded, an Agent has no `request`, `stream`…: only what ops/transport.ts's Transport has.
  const Agent: new (options?: RootAgent.Options) => Pick<Dispatcher, 'dispatch' | 'close' | 'destroy'>
  export default Agent
}
declare module 'undici/lib/api/api-request.js' {
  import type { Dispatcher } from 'undici'
  export default function request(
    this: Pick<Dispatcher, 'dispatch'>,
    options: Dispatcher.RequestOptions
  ): Promise<Dispatcher.ResponseData>
}
declare module 'undici/lib/core/connect.js' {
  import { buildConnector } from 'undici'
  export default buildConnector
}
