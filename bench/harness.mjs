// What the bench's scripts share (bench/run.mjs, bench/stream.mjs, bench/leads.mjs): child processes pinned to a core where `taskset`
// exists (servers on core 0, the load generator on core 1), a scratch directory and database, the service as deployed
// with the fake upstream behind it, the load generator (bench/load.mjs) and the CPU a process spends meanwhile.
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import { NODE_FLAGS, UNIT_ENV } from './unit-flags.mjs'
import { ensureWrk, wrkLoad } from './wrk.mjs'

export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
export const SECONDS = Number(process.env.BENCH_SECONDS ?? 4)
export const hasTaskset = spawnSync('taskset', ['-c', '0', 'true']).status === 0 && cpus().length > 1
export const pin = (core, cmd, args) => (hasTaskset ? ['taskset', ['-c', String(core), cmd, ...args]] : [cmd, args])
export const children = []
export const cleanups = []
export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
export const log = (s) => process.stderr.write(`${s}\n`)
export const fmt = (n, d = 2) => (Number.isFinite(n) ? n.toFixed(d) : 'n/a')

process.on('exit', () => children.forEach((c) => c.exitCode === null && c.kill('SIGKILL')))

export function start(core, args, env = {}) {
  const [cmd, argv] = pin(core, process.execPath, args)
  const child = spawn(cmd, argv, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] })
  children.push(child)
  return child
}

// The service as deployed (bench/unit-flags.mjs), and its log (LOG_LEVEL=info, the default) going to a file, as
// journald or a container runtime would take it.
export function startLogged(core, args, env, file, stdio = 'inherit') {
  const out = openSync(file, 'w')
  const [cmd, argv] = pin(core, process.execPath, args)
  const child = spawn(cmd, argv, { env: { ...process.env, ...env }, stdio: ['ignore', out, stdio] })
  closeSync(out)
  children.push(child)
  return child
}

export const firstLine = (child, stream = 'stdout') =>
  new Promise((ok, fail) => {
    let buf = ''
    child[stream].on('data', (d) => {
      buf += d
      if (buf.includes('\n')) ok(JSON.parse(buf.split('\n')[0]))
    })
    child.once('exit', (code) => fail(new Error(`exited ${code}`)))
  })

export const freePort = () =>
  new Promise((ok) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address()
      s.close(() => ok(port))
    })
  })

export async function waitHealthy(url, deadlineMs = 30_000) {
  const end = Date.now() + deadlineMs
  for (;;) {
    try {
      // A request the server never answers is tried again rather than waited on for ever.
      const r = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) })
      if (r.ok) return
    } catch {}
    if (Date.now() > end) throw new Error(`${url} never became healthy`)
    await new Promise((r) => setTimeout(r, 2))
  }
}

// Runs `fn` (a load), adding to its result the CPU time `child` used meanwhile (ms).
export function withCpu(child, fn) {
  const ticks = () => {
    const f = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1].split(' ')
    return Number(f[11]) + Number(f[12])
  }
  const before = ticks()
  const r = fn()
  return { ...r, cpuMs: (ticks() - before) * 10 }
}

export const work = mkdtempSync(join(tmpdir(), 'studio-bench-'))
cleanups.push(() => rmSync(work, { recursive: true, force: true }))

export function load(opts) {
  const file = join(work, 'load.json')
  writeFileSync(file, JSON.stringify({ seconds: SECONDS, ...opts }))
  const [cmd, argv] = pin(1, process.execPath, ['bench/load.mjs', `@${file}`])
  const r = spawnSync(cmd, argv, { encoding: 'utf8', maxBuffer: 1 << 26 })
  if (r.status !== 0) throw new Error(`load failed: ${r.stderr}`)
  return JSON.parse(r.stdout.trim().split('\n').at(-1))
}

// The generator of the rates that bench/load.mjs would cap (GET /me, the leads' rates): wrk, installed or asked for
// (bench/wrk.mjs), or load.mjs with BENCH_GENERATOR=load.mjs. `gen` names it, for the rows it makes.
export function fastLoad() {
  const gen = ensureWrk(log) ? 'wrk' : 'load.mjs'
  return { gen, fast: (opts) => (gen === 'wrk' ? wrkLoad({ seconds: SECONDS, pin, work, ...opts }) : load(opts)) }
}

// Builds the bundle and starts it on a scratch database (in DATABASE_URL, or the embedded one) with the fake upstream
// (20 ms to its answer or first event) behind it; makes one ENTERPRISE key.
export async function startService() {
  log('building…')
  execFileSync(process.execPath, ['build.mjs'], { stdio: 'ignore' })
  let dbEnv
  if (process.env.DATABASE_URL) {
    const benchDb = `studio_bench_${process.pid}`
    const admin = postgres(process.env.DATABASE_URL, { max: 1, onnotice: () => {} })
    await admin.unsafe(`create database ${benchDb}`)
    cleanups.push(async () => {
      await admin.unsafe(`drop database if exists ${benchDb} with (force)`)
      await admin.end()
    })
    const u = new URL(process.env.DATABASE_URL)
    u.pathname = `/${benchDb}`
    dbEnv = { DATABASE_URL: u.toString() }
  } else {
    dbEnv = { STUDIO_DATA_DIR: join(work, 'data') }
  }
  const mode = dbEnv.DATABASE_URL ? 'external PostgreSQL' : 'embedded PGlite'

  const fake = start(0, ['bench/fake-upstream.mjs', '20'])
  const fakeUrl = `http://127.0.0.1:${(await firstLine(fake)).port}`
  const port = await freePort()
  const studioEnv = {
    ...UNIT_ENV,
    ...dbEnv,
    PORT: String(port),
    LOG_LEVEL: 'info',
    // One busy key must not meet the rate limit (the spread-over-keys scenarios stay under the default anyway).
    STUDIO_RATE_LIMIT: process.env.BENCH_RATE_LIMIT ?? '100000000',
    // The form endpoint's lead key is a public one: every request comes from one address.
    STUDIO_LEAD_KEY_ADDRESS_LIMIT: '1000000',
    ANTHROPIC_API_KEY: 'sk-bench',
    ANTHROPIC_BASE_URL: fakeUrl,
    STUDIO_QUOTA_ENTERPRISE: 'unlimited',
  }
  const studio = startLogged(0, [...NODE_FLAGS, 'dist/studio.mjs', 'serve'], studioEnv, join(work, 'studio.log'))
  const url = `http://127.0.0.1:${port}`
  // The embedded database initialises itself on first start: on a busy machine that takes a while.
  await waitHealthy(url, 120_000)
  const created = execFileSync(
    process.execPath,
    ['dist/studio.mjs', 'keys', 'create', '--email', 'bench@example.com', '--plan', 'ENTERPRISE'],
    {
      env: { ...process.env, ...studioEnv },
      encoding: 'utf8',
    }
  )
  const key = created.trim().split('\n').at(-1)
  return { dbEnv, mode, fake, fakeUrl, studioEnv, studio, url, key }
}

// A bench script run alone (bench/stream.mjs, bench/leads.mjs): the service on a scratch database with one key (the
// rate limit is lifted), `measure(service, row)` adding its rows, printed as a table under `title`, then everything
// it started stopped and removed.
export async function runAlone(title, baseline, measure) {
  const rows = []
  const row = (what, a, b, ratio, note) => rows.push([what, a, b, ratio === null ? '' : fmt(ratio), note])
  try {
    const s = await startService()
    await measure({ ...s, keys: [s.key] }, row)
    console.log(`\n${title} (${s.mode}; ${ROUNDS} interleaved rounds × ${SECONDS} s, medians)\n`)
    console.log(`| measure | studio | ${baseline} | ratio | note |\n| --- | --- | --- | --- | --- |`)
    for (const r of rows) console.log(`| ${r.join(' | ')} |`)
    s.studio.kill('SIGTERM')
    await new Promise((ok) => s.studio.once('exit', ok))
  } catch (e) {
    console.error(e)
    process.exitCode = 1
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL')
    for (const c of cleanups.reverse()) await c()
  }
  process.exit()
}
