import type { Dispatcher } from 'undici'

// What the service's outbound HTTP needs of an undici dispatcher: `dispatch` (completions/exchange.ts, and undici's
// request API given it as its dispatcher in events/post.ts) and closing. An Agent has it; so does `lazyTransport`.
export interface Transport {
  dispatch(options: Dispatcher.DispatchOptions, handler: Handler): boolean
  close(): Promise<void>
  destroy(): Promise<void>
  // A LazyTransport's: resolves when its Agent stands.
  load?(): Promise<void>
}

// The handlers the service dispatches with (exchange.ts's collector, undici's request API): callbacks in the form
// undici's core calls directly, `onError` among them, which is how a dispatch fails.
export type Handler = Dispatcher.DispatchHandler & { onError(err: Error): void }

// A Transport whose Agent is made from a dynamic import (its own chunk in the bundle) when `load` is first called, or
// at its first dispatch: undici is about half of the JavaScript a start would otherwise load and evaluate, and a
// process that never calls out (a CLI command) never loads it, and no start waits for it. Dispatches made while it
// loads are handed to it in order once it stands (the first call waits for the chunk, milliseconds); a failure to
// load fails each of them through its handler, as a failed connection would.
export interface LazyTransport extends Transport {
  load(): Promise<void>
}

export function lazyTransport(make: () => Promise<Transport>): LazyTransport {
  let agent: Transport | undefined
  let made: Promise<Transport> | undefined
  const loaded = () => {
    made ??= make().then((a) => (agent = a))
    return made
  }
  return {
    load: async () => {
      await loaded()
    },
    dispatch(options, handler) {
      if (agent) return agent.dispatch(options, handler)
      loaded().then(
        (a) => a.dispatch(options, handler),
        (e: Error) => handler.onError(e)
      )
      return true
    },
    // An Agent that failed to load has nothing to close (and must not stop a shutdown).
    close: async () => (await made?.catch(() => undefined))?.close(),
    destroy: async () => (await made?.catch(() => undefined))?.destroy(),
  }
}
