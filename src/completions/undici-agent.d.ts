// Types of the deep imports in dispatcher.ts (undici has no "exports" map; its types describe the package root).
declare module 'undici/lib/dispatcher/agent.js' {
  import { Agent } from 'undici'
  export default Agent
}
declare module 'undici/lib/api/api-request.js' {
  import type { Dispatcher } from 'undici'
  const request: Dispatcher['request']
  export default request
}
