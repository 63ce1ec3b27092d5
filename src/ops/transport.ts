/// <reference path="./undici.d.ts" />
import type Agent from 'undici/lib/dispatcher/agent.js'

// What the service's outbound HTTP needs of an undici dispatcher, as its Agents have it (ops/undici.d.ts): `dispatch`
// (completions/exchange.ts, and undici's request API called on it in events/post.ts) and closing.
export type Transport = InstanceType<typeof Agent>
