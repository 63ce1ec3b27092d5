// npm run bench:tracing — tracing off costs nothing: this bundle against the one built from the commit before tracing
// landed, in the same run, interleaved: cold start (process start → first /healthz answer) and GET /me with one key
// at 50 connections (wrk). Each bundle has its own scratch database in DATABASE_URL (the older one would refuse a
// database the newer one migrated).
import { execFileSync } from 'node:child_process'
import { mkdirSync, symlinkSync } from 'node:fs'
import { join, resolve } from 'node:path'
import postgres from 'postgres'
import {
  cleanups,
  fastLoad,
  fmt,
  freePort,
  log,
  median,
  pin,
  ROUNDS,
  SECONDS,
  start,
  waitHealthy,
  work,
} from './harness.mjs'

if (!process.env.DATABASE_URL) {
  console.log('bench:tracing needs DATABASE_URL (cold start is measured over an external PostgreSQL)')
  process.exit(0)
}
const git = (...args) => execFileSync('git', args, { encoding: 'utf8' }).trim()
let before
try {
  before = git('rev-parse', `${git('log', '-1', '--diff-filter=A', '--format=%H', '--', 'src/ops/trace.ts')}^`)
} catch {
  console.log('bench:tracing needs the git history (the commit before tracing is built from it)')
  process.exit(0)
}
const { gen: generator, fast } = fastLoad()

log(`building this bundle and ${before.slice(0, 7)}'s…`)
execFileSync(process.execPath, ['build.mjs'], { stdio: 'ignore' })
const old = join(work, 'before')
mkdirSync(old)
execFileSync('sh', ['-c', `git archive "$1" | tar -x -C "$2"`, 'sh', before, old])
symlinkSync(resolve('node_modules'), join(old, 'node_modules'))
execFileSync(process.execPath, ['build.mjs'], { cwd: old, stdio: 'ignore' })

const admin = postgres(process.env.DATABASE_URL, { max: 1, onnotice: () => {} })
async function setUp(name, bin) {
  const db = `studio_bench_${name}_${process.pid}`
  await admin.unsafe(`create database ${db}`)
  cleanups.push(() => admin.unsafe(`drop database if exists ${db} with (force)`))
  const u = new URL(process.env.DATABASE_URL)
  u.pathname = `/${db}`
  const env = { DATABASE_URL: u.toString(), LOG_LEVEL: 'info', STUDIO_RATE_LIMIT: '100000000' }
  const args = [bin, 'keys', 'create', '--email', 'bench@example.com', '--plan', 'ENTERPRISE']
  const out = execFileSync(process.execPath, args, { env: { ...process.env, ...env }, encoding: 'utf8' })
  return { name, bin, env, key: out.trim().split('\n').at(-1) }
}
const bundles = [await setUp('now', resolve('dist/studio.mjs')), await setUp('before', join(old, 'dist/studio.mjs'))]

async function serve(b) {
  const port = await freePort()
  const t0 = performance.now()
  const child = start(0, [b.bin, 'serve'], { ...b.env, PORT: String(port) })
  await waitHealthy(`http://127.0.0.1:${port}`)
  return { child, url: `http://127.0.0.1:${port}`, coldMs: performance.now() - t0 }
}
const stop = (child) => new Promise((r) => child.once('exit', r).kill('SIGTERM'))

const cold = { now: [], before: [] }
const rate = { now: [], before: [] }
log(`cold start and GET /me (one key, c=50, ${generator}), ${ROUNDS} rounds…`)
for (let i = 0; i < Math.max(ROUNDS, 5); i++) {
  for (const b of bundles) {
    const s = await serve(b)
    cold[b.name].push(s.coldMs)
    if (i < ROUNDS) {
      const opts = { url: `${s.url}/api/v1/me`, keys: [b.key], connections: 50, seconds: SECONDS, pin, work }
      rate[b.name].push(fast(opts).rps)
    }
    await stop(s.child)
  }
}
for (const c of cleanups.reverse()) await c()
await admin.end()

const m = (xs) => median(xs)
console.log(`\ntracing off against ${before.slice(0, 7)} (the commit before tracing), node ${process.version}`)
console.log(`| measure | with tracing, off | before tracing | ratio |\n| --- | --- | --- | --- |`)
console.log(
  `| cold start ms | ${fmt(m(cold.now), 0)} | ${fmt(m(cold.before), 0)} | ${fmt(m(cold.now) / m(cold.before))} |`
)
console.log(
  `| GET /me one key requests/s (c=50, ${generator}) | ${fmt(m(rate.now), 0)} | ${fmt(m(rate.before), 0)} | ${fmt(m(rate.now) / m(rate.before))} |`
)
process.exit(0)
