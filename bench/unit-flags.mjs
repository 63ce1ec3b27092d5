import { readFileSync } from 'node:fs'

// The service as deployed: the V8 flags of the systemd unit's ExecStart (the Containerfile has the same);
// BENCH_NODE_FLAGS overrides them (empty: none).
const unitFlags =
  /^ExecStart=\S+ (.*?) ?\S*studio\.mjs/m.exec(readFileSync('contrib/studio.service', 'utf8'))?.[1] ?? ''
export const NODE_FLAGS = (process.env.BENCH_NODE_FLAGS ?? unitFlags).split(' ').filter(Boolean)
