import { readFileSync } from 'node:fs'

const unit = readFileSync('contrib/studio.service', 'utf8')

// The service as deployed: the V8 flags of the systemd unit's ExecStart (the Containerfile has the same);
// BENCH_NODE_FLAGS overrides them (empty: none).
const unitFlags = /^ExecStart=\S+ (.*?) ?\S*studio\.mjs/m.exec(unit)?.[1] ?? ''
export const NODE_FLAGS = (process.env.BENCH_NODE_FLAGS ?? unitFlags).split(' ').filter(Boolean)

// The unit's environment that tunes the process itself (not the service's settings): MALLOC_ARENA_MAX.
export const UNIT_ENV = Object.fromEntries(
  [...unit.matchAll(/^Environment=(MALLOC_\w+)=(\S+)$/gm)].map((m) => [m[1], m[2]])
)
