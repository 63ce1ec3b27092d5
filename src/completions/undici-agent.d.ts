// Types of the deep import in dispatcher.ts (undici has no "exports" map; its types describe the package root).
declare module 'undici/lib/dispatcher/agent.js' {
  import { Agent } from 'undici'
  export default Agent
}
