import type { Dispatcher } from 'undici'

// What the service's outbound HTTP needs of an undici dispatcher: `dispatch` (completions/exchange.ts, and undici's
// request API called on it in events/post.ts) and closing. Not the whole `Dispatcher`: the service's Agents are
// imported without undici's package root, and it is the root that adds `request`, `stream` and the rest to them.
export type Transport = Pick<Dispatcher, 'dispatch' | 'close' | 'destroy'>
