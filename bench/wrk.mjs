// wrk, the load generator for the rates where bench/load.mjs (undici in one Node process) would saturate before the
// server does and flatter the ratios. `npm run bench` installs it (Debian's package) when it is missing and it can,
// and otherwise stops and says how; BENCH_GENERATOR=load.mjs runs without it, every row saying which generator made it.
import { spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'

const has = () => spawnSync('wrk', ['--version']).error === undefined

export function ensureWrk(log) {
  if (process.env.BENCH_GENERATOR === 'load.mjs') return false
  if (has()) return true
  if (process.getuid?.() === 0 && spawnSync('apt-get', ['--version']).error === undefined) {
    log('wrk is missing: apt-get install -y wrk…')
    spawnSync('apt-get', ['install', '-y', '-q', 'wrk'], { stdio: ['ignore', 'ignore', 'inherit'] })
    if (has()) return true
  }
  console.error(
    'npm run bench needs wrk: install it (apt-get install wrk, brew install wrk), or run with ' +
      'BENCH_GENERATOR=load.mjs to use the Node generator, which saturates first and flatters the ratios'
  )
  process.exit(2)
}

// A Lua string literal for any text (long brackets of a level the text does not contain).
const luaString = (s) => {
  let eq = ''
  while (s.includes(`]${eq}]`)) eq += '='
  return `[${eq}[${s}]${eq}]`
}

// The script: each request carries the next of `keys` and asks for the next of `paths` (as load.mjs does), and `done`
// prints one JSON line.
function script(file, { method = 'GET', headers = {}, keys = [], paths = [], body }) {
  const lines = [
    `wrk.method = "${method}"`,
    ...Object.entries(headers).map(([k, v]) => `wrk.headers[ ${luaString(k)} ] = ${luaString(v)}`),
    body === undefined ? '' : `wrk.body = ${luaString(body)}`,
    `local keys = {${keys.map(luaString).join(',')}}`,
    `local paths = {${paths.map(luaString).join(',')}}`,
    'local i = 0',
    'local j = 0',
    'request = function()',
    '  if #keys > 0 then i = i % #keys + 1; wrk.headers["authorization"] = "Bearer " .. keys[i] end',
    '  if #paths > 0 then j = j % #paths + 1; return wrk.format(nil, paths[j]) end',
    '  return wrk.format()',
    'end',
    'done = function(s, latency)',
    '  local e = s.errors',
    '  io.write(string.format(\'{"requests":%d,"us":%d,"p50":%.3f,"p99":%.3f,"non2xx":%d,"failed":%d}\\n\',',
    '    s.requests, s.duration, latency:percentile(50) / 1000, latency:percentile(99) / 1000, e.status,',
    '    e.connect + e.read + e.write + e.timeout))',
    'end',
  ]
  writeFileSync(file, lines.join('\n'))
}

// Same result shape as load(): requests, rps, p50/p99 (ms), statuses; one second of warm-up first, as load.mjs has,
// counted in `all` (answers of the warm-up too, for CPU per answer over the whole round). wrk counts answers only as
// 2xx or not: they are counted under `expect` (the one status the caller expects). Unlike load.mjs, wrk leaves the
// requests in flight when its time is up unanswered, up to `connections` a run.
export function wrkLoad({ url, connections = 20, seconds, pin, work, expect = 200, ...request }) {
  const file = join(work, 'wrk.lua')
  script(file, request)
  const run = (d) => {
    const [cmd, argv] = pin(1, 'wrk', ['-t1', `-c${connections}`, `-d${d}s`, '-s', file, url])
    const r = spawnSync(cmd, argv, { encoding: 'utf8' })
    if (r.status !== 0) throw new Error(`wrk failed: ${r.stderr}`)
    return JSON.parse(/^\{"requests".*$/m.exec(r.stdout)[0])
  }
  const counts = (...os) => {
    const sum = (k) => os.reduce((n, o) => n + o[k], 0)
    const c = { [expect]: sum('requests') - sum('non2xx') }
    if (sum('non2xx')) c['non-2xx'] = sum('non2xx')
    if (sum('failed')) c.failed = sum('failed')
    return c
  }
  const warm = run(1)
  const o = run(seconds)
  const rps = o.requests / (o.us / 1e6)
  return { requests: o.requests, rps, p50: o.p50, p99: o.p99, statuses: counts(o), all: counts(warm, o) }
}
