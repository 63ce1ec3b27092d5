// Types of the deep imports in completions/ and events/dispatcher.ts (undici has no "exports" map; its types
// describe the package root).
declare module 'undici/lib/dispatcher/agent.js' {
  import { Agent } from 'undici'
  export default Agent
}
declare module 'undici/lib/api/api-request.js' {
  import type { Dispatcher } from 'undici'
  export default function request(
    this: Dispatcher,
    options: Dispatcher.RequestOptions
  ): Promise<Dispatcher.ResponseData>
}
declare module 'undici/lib/core/connect.js' {
  import { buildConnector } from 'undici'
  export default buildConnector
}
