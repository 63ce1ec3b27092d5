// The parts of undici the service imports, by their own paths instead of the package root: the root would put all of
// undici (fetch, WebSocket, caches, mocks) in the bundle, evaluated at every start (test/service/bundle.test.ts keeps
// it out). Those paths are not a public API, so package.json pins undici to patch releases (~7.30). undici has no
// "exports" map and its types describe the root; these declarations say what each path gives. A file that imports one
// of these paths names this file in a reference line: the tests' ts-node compiles from imports, not tsconfig's list.
// Without the root, an Agent has `dispatch`, `close` and `destroy` but not `request`, `stream` and the rest, which
// the root adds.
declare module 'undici/lib/dispatcher/agent.js' {
  import type { Dispatcher, Agent as RootAgent } from 'undici'
  const Agent: new (options?: RootAgent.Options) => Pick<Dispatcher, 'dispatch' | 'close' | 'destroy'>
  export default Agent
}
declare module 'undici/lib/api/api-request.js' {
  import type { Dispatcher } from 'undici'
  // Called on any dispatcher: `request.call(dispatcher, options)`, as the root's `dispatcher.request(options)`.
  export default function request(
    this: Pick<Dispatcher, 'dispatch'>,
    options: Dispatcher.RequestOptions
  ): Promise<Dispatcher.ResponseData>
}
declare module 'undici/lib/core/connect.js' {
  import { buildConnector } from 'undici'
  export default buildConnector
}
