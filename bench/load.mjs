// A closed-loop HTTP load generator: `connections` keep-alive connections, each sending its next request as soon as
// the previous answer is read, for `seconds`. Prints JSON: requests/s, exact latency percentiles (ms) to the whole
// answer and to its first byte (the status line: `ttfb50`, `ttfb99`), status counts. With `stagger` (ms), connection i
// starts i × stagger ms after the first (keep it within the warm-up), so that long answers do not stay in step.
import { readFileSync } from 'node:fs'
import { Pool } from 'undici'

const {
  url,
  method = 'GET',
  headers = {},
  keys,
  paths,
  body,
  connections = 20,
  seconds = 5,
  warmup = 1,
  stagger = 0,
} = JSON.parse(process.argv[2].startsWith('@') ? readFileSync(process.argv[2].slice(1), 'utf8') : process.argv[2])
// With `keys`, each request carries the next key of the list (a realistic spread under a per-key rate limit).
const headerSets = keys ? keys.map((k) => ({ ...headers, authorization: `Bearer ${k}` })) : [headers]
let next = 0
// With `paths`, each request asks for the next path of the list instead of the URL's (pages deep in a list).
let nextPath = 0
const u = new URL(url)
const pool = new Pool(u.origin, { connections, pipelining: 1, keepAliveTimeout: 60_000 })
const path = u.pathname + u.search
const latencies = []
const firsts = []
const statuses = {}
const all = {}
let measuring = false
let stop = false

async function loop(_, i) {
  if (stagger) await new Promise((r) => setTimeout(r, i * stagger))
  while (!stop) {
    const t0 = process.hrtime.bigint()
    try {
      const res = await pool.request({
        path: paths ? paths[nextPath++ % paths.length] : path,
        method,
        headers: headerSets[next++ % headerSets.length],
        body,
      })
      // The first byte of an answer whose first byte came during the measurement (a long stream's may end after it).
      if (measuring) firsts.push(Number(process.hrtime.bigint() - t0) / 1e6)
      await res.body.dump()
      all[res.statusCode] = (all[res.statusCode] ?? 0) + 1
      if (measuring) {
        latencies.push(Number(process.hrtime.bigint() - t0) / 1e6)
        statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1
      }
    } catch (e) {
      if (measuring) statuses[e.code ?? 'error'] = (statuses[e.code ?? 'error'] ?? 0) + 1
    }
  }
}

const loops = Array.from({ length: connections }, loop)
await new Promise((r) => setTimeout(r, warmup * 1000))
measuring = true
const t0 = performance.now()
await new Promise((r) => setTimeout(r, seconds * 1000))
measuring = false
const elapsed = (performance.now() - t0) / 1000
stop = true
await Promise.all(loops)
await pool.close()
latencies.sort((a, b) => a - b)
firsts.sort((a, b) => a - b)
const pct = (p, xs = latencies) => xs[Math.min(xs.length - 1, Math.floor(p * xs.length))] ?? NaN
process.stdout.write(
  `${JSON.stringify({
    requests: latencies.length,
    rps: latencies.length / elapsed,
    p50: pct(0.5),
    p99: pct(0.99),
    ttfb50: pct(0.5, firsts),
    ttfb99: pct(0.99, firsts),
    statuses,
    all,
  })}\n`
)
