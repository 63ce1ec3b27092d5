import { readFileSync } from 'node:fs'

// Every process the bench starts runs without NODE_EXTRA_CA_CERTS. A machine behind a re-signing TLS proxy sets it
// for all of Node, and reading its certificates adds about 85 ms to every node start there (a third of the service's
// cold start), to the service and its baselines alike, which made the cold-start ratio look better than it is.
// Nothing the bench starts makes a TLS connection. `DROPPED_ENV` names what was dropped, for the report's header.
export const DROPPED_ENV = ['NODE_EXTRA_CA_CERTS'].filter((k) => k in process.env)
for (const k of DROPPED_ENV) delete process.env[k]

const unit = readFileSync('contrib/studio.service', 'utf8')

// The service is started the plain way by default, as the README's Quick start starts it (`node dist/studio.mjs
// serve`, no flags). BENCH_NODE_FLAGS=unit starts it as the systemd unit does (the V8 flags of its ExecStart, the
// Containerfile has the same, and its MALLOC_ARENA_MAX); any other value is a list of flags.
const unitFlags = /^ExecStart=\S+ (.*?) ?\S*studio\.mjs/m.exec(unit)?.[1] ?? ''
const asUnit = process.env.BENCH_NODE_FLAGS === 'unit'
export const NODE_FLAGS = (asUnit ? unitFlags : (process.env.BENCH_NODE_FLAGS ?? '')).split(' ').filter(Boolean)

// The unit's environment that tunes the process itself (not the service's settings): MALLOC_ARENA_MAX.
export const UNIT_ENV = asUnit
  ? Object.fromEntries([...unit.matchAll(/^Environment=(MALLOC_\w+)=(\S+)$/gm)].map((m) => [m[1], m[2]]))
  : {}
