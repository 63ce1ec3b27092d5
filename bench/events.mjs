// npm run bench, events part: the time from a lead's 201 to its webhook's arrival at a local receiver, at a steady
// 200 leads/s (p50 and p99), and what a delivery costs: POST /leads (c=20) for an account with one endpoint against
// one with none, in interleaved rounds, with the CPU per lead of the service and of PostgreSQL (the receiver's own
// work, in this process, is shown but counts in no target). Uses DATABASE_URL (a scratch database is created in it) or the
// embedded database, and dist/studio.mjs as built by bench/run.mjs (built here when it is missing).
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import { NODE_FLAGS, UNIT_ENV } from './unit-flags.mjs'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4)
const RATE = 200
const log = (s) => process.stderr.write(`${s}\n`)
const percentile = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]
const median = (xs) => percentile(xs, 0.5)
const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms))

if (!existsSync('dist/studio.mjs')) execFileSync(process.execPath, ['build.mjs'], { stdio: 'ignore' })
const work = mkdtempSync(join(tmpdir(), 'studio-bench-events-'))
let dbEnv = { STUDIO_DATA_DIR: join(work, 'data') }
let admin
const benchDb = `studio_bench_events_${process.pid}`
if (process.env.DATABASE_URL) {
  admin = postgres(process.env.DATABASE_URL, { max: 1, onnotice: () => {} })
  await admin.unsafe(`create database ${benchDb}`)
  const u = new URL(process.env.DATABASE_URL)
  u.pathname = `/${benchDb}`
  dbEnv = { DATABASE_URL: u.toString() }
}

// The receiver: when each lead's event arrived (by lead id); it answers 200 at once.
const arrived = new Map()
const receiver = createServer((req, res) => {
  let body = ''
  req.on('data', (d) => {
    body += d
  })
  req.on('end', () => {
    const event = JSON.parse(body)
    if (event.type === 'lead.created') arrived.set(event.data.id, performance.now())
    res.end('ok')
  })
})
await new Promise((ok) => receiver.listen(0, '127.0.0.1', ok))
const hook = `http://127.0.0.1:${receiver.address().port}/hook`

const env = { ...process.env, ...UNIT_ENV, ...dbEnv, STUDIO_WEBHOOKS_ALLOW_PRIVATE: 'true', LOG_LEVEL: 'warn' }
const studio = spawn(process.execPath, [...NODE_FLAGS, 'dist/studio.mjs', 'serve'], {
  env: { ...env, PORT: '0', LOG_LEVEL: 'info', STUDIO_RATE_LIMIT: '100000000' },
  stdio: ['ignore', 'pipe', 'inherit'],
})
const url = await new Promise((ok) => {
  let out = ''
  studio.stdout.on('data', (d) => {
    out += d
    const m = /"url":"(http:[^"]+)"/.exec(out)
    if (m) ok(m[1])
  })
})
const cli = (...args) => execFileSync(process.execPath, ['dist/studio.mjs', ...args], { env, encoding: 'utf8' })
const lastLine = (out) => out.trim().split('\n').at(-1)
const quiet = lastLine(cli('keys', 'create', '--email', 'none@bench.example', '--plan', 'ENTERPRISE'))
const hooked = lastLine(cli('keys', 'create', '--email', 'hooked@bench.example', '--plan', 'ENTERPRISE'))
cli('webhooks', 'add', '--email', 'hooked@bench.example', '--url', hook, '--events', 'lead.created')
// The service learns of new keys within its poll (0.5 s): wait until both answer.
for (const key of [quiet, hooked])
  while ((await fetch(`${url}/api/v1/me`, { headers: { authorization: `Bearer ${key}` } })).status !== 200)
    await sleep(100)

const lead = (i) =>
  JSON.stringify({ name: `Lead ${i}`, email: `lead${i}@example.com`, service: 'bench', message: 'hello' })

// A steady RATE leads/s for `seconds` (open loop: each lead at its time, whatever the answers before it).
async function steady(seconds) {
  const created = new Map()
  const t0 = performance.now()
  const sends = []
  for (let i = 0; i < RATE * seconds; i++) {
    const wait = t0 + (i * 1000) / RATE - performance.now()
    if (wait > 0) await sleep(wait)
    const post = fetch(`${url}/api/v1/leads`, {
      method: 'POST',
      headers: { authorization: `Bearer ${hooked}`, 'content-type': 'application/json' },
      body: lead(i),
    })
    sends.push(
      post.then(async (r) => {
        const at = performance.now()
        if (r.status === 201) created.set((await r.json()).id, at)
      })
    )
  }
  await Promise.all(sends)
  const deadline = performance.now() + 30_000
  while ([...created.keys()].some((id) => !arrived.has(id)) && performance.now() < deadline) await sleep(50)
  return [...created].map(([id, at]) => (arrived.get(id) ?? Number.POSITIVE_INFINITY) - at)
}

// The load runs in a child process that this one awaits (not spawnSync: the receiver, in this process, must answer
// while the load runs, so that the deliveries are made during the measurement). After a round with the endpoint,
// the next round waits until every lead's event has arrived, so no round inherits another's deliveries.
let hookedLeads = 0
const cpuPerLead = { none: [], one: [] }
async function rate(key) {
  const before = cpuNow()
  const file = join(work, 'load.json')
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
  const opts = { url: `${url}/api/v1/leads`, method: 'POST', headers, body: lead(0), seconds: SECONDS }
  writeFileSync(file, JSON.stringify(opts))
  const load = spawn(process.execPath, ['bench/load.mjs', `@${file}`], { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  load.stdout.on('data', (d) => {
    out += d
  })
  load.stderr.on('data', (d) => {
    err += d
  })
  const status = await new Promise((ok) => load.on('close', ok))
  if (status !== 0) throw new Error(`load failed: ${err}`)
  const result = JSON.parse(out.trim().split('\n').at(-1))
  if (key === hooked) hookedLeads += result.all[201] ?? 0
  const deadline = performance.now() + 60_000
  while (arrived.size < hookedLeads && performance.now() < deadline) await sleep(20)
  const after = cpuNow()
  const leads = result.all[201] ?? 1
  const per = Object.fromEntries(Object.keys(after).map((k) => [k, spent(before[k], after[k]) / leads]))
  cpuPerLead[key === hooked ? 'one' : 'none'].push(per)
  return result.rps
}

// CPU time (µs) so far of the service, of the PostgreSQL server's processes (Linux, a local server: every process
// named postgres but the client backends of other databases, which other work on the machine may be using) and of
// this process (the receiver). The round's delivery work is counted until its last event.
function cpuNow() {
  const ticks = (pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      return { comm: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), us: (+fields[11] + +fields[12]) * 1e4 }
    } catch {
      return { comm: '', us: 0 }
    }
  }
  const pg = new Map()
  if (existsSync('/proc/self/stat'))
    for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
      const t = ticks(pid)
      if (t.comm === 'postgres' && ours(pid)) pg.set(pid, t.us)
    }
  const own = process.cpuUsage()
  return { service: ticks(studio.pid).us, postgres: pg, receiver: own.user + own.system }
}
// A client backend's title names its database ("postgres: 15/main: USER DB HOST(PORT) STATE").
function ours(pid) {
  try {
    const title = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
    const backend = /: \S+ (\S+) (?:\[local\]|\S+\(\d+\))/.exec(title)
    return !backend || backend[1] === benchDb
  } catch {
    return false
  }
}
// PostgreSQL's time is counted per process: a backend that ended during the round takes its whole past with it
// (the sum of every process went negative so), one that started during it counts from 0.
function spent(before, after) {
  if (typeof after === 'number') return after - before
  let us = 0
  for (const [pid, t] of after) us += t - (before.get(pid) ?? 0)
  return us
}
const medianOf = (rounds, k) => median(rounds.map((r) => r[k]))

// The floor of a delivery's CPU on the sending side (bench/bare-sender.mjs): undici POSTing signed envelopes to the
// same receiver, 16 at a time, with no database. A child process, so that this one's receiver answers meanwhile.
async function bareSenderCpu() {
  const child = spawn(process.execPath, ['bench/bare-sender.mjs', hook, '5000'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  let out = ''
  child.stdout.on('data', (d) => {
    out += d
  })
  const status = await new Promise((ok) => child.on('close', ok))
  if (status !== 0) throw new Error('bench/bare-sender.mjs failed')
  return JSON.parse(out.trim().split('\n').at(-1)).cpuUsPerPost
}

try {
  log(`events: ${RATE} leads/s for ${SECONDS} s…`)
  const warmUp = await steady(1) // the service's JIT, its connections to the receiver: not counted
  const delays = await steady(SECONDS)
  hookedLeads = warmUp.length + delays.length
  const lost = [...warmUp, ...delays].filter((d) => !Number.isFinite(d)).length
  const none = []
  const one = []
  for (let round = 0; round < ROUNDS; round++) {
    none.push(await rate(quiet))
    one.push(await rate(hooked))
  }
  const ratio = median(one) / median(none)
  const rows = [
    ['lead 201 → webhook arrival p50 ms (200 leads/s)', percentile(delays, 0.5).toFixed(1), 'target < 100'],
    ['lead 201 → webhook arrival p99 ms (200 leads/s)', percentile(delays, 0.99).toFixed(1), lost ? 'LOST!' : ''],
    [
      'POST /leads/s, one endpoint / none (c=20)',
      `${median(one).toFixed(0)} / ${median(none).toFixed(0)} = ${ratio.toFixed(2)}`,
      hookedLeads > arrived.size ? `${hookedLeads - arrived.size} events LOST!` : '',
    ],
  ]
  const pass = [percentile(delays, 0.5) < 100, lost === 0 && hookedLeads <= arrived.size]
  if (existsSync('/proc/self/stat')) {
    for (const k of ['service', 'postgres', 'receiver'])
      rows.push([
        `CPU µs per lead, ${k}: none → one endpoint`,
        `${medianOf(cpuPerLead.none, k).toFixed(0)} → ${medianOf(cpuPerLead.one, k).toFixed(0)}`,
        '',
      ])
    // Cheap deliveries (issue 42): PostgreSQL's CPU per lead with one endpoint at most 3× its CPU with none, and the
    // service's CPU per delivery (what one endpoint adds to a lead) at most half its CPU for the lead itself.
    const [pgNone, pgOne] = [cpuPerLead.none, cpuPerLead.one].map((r) => medianOf(r, 'postgres'))
    const [svcNone, svcOne] = [cpuPerLead.none, cpuPerLead.one].map((r) => medianOf(r, 'service'))
    const pgRatio = pgOne / pgNone
    const deliveryRatio = (svcOne - svcNone) / svcNone
    rows.push(['PostgreSQL CPU per lead, one endpoint / none', pgRatio.toFixed(2), 'target ≤ 3.00'])
    rows.push(['service CPU per delivery / per lead', deliveryRatio.toFixed(2), 'target ≤ 0.50'])
    // What the target asks against what a bare sender spends: a delivery cannot cost less than its POST.
    const floor = await bareSenderCpu()
    rows.push([
      'CPU µs per POST, a bare undici sender (the floor)',
      `${floor.toFixed(0)} = ${(floor / svcNone).toFixed(2)} of a lead`,
      `service per delivery: ${(svcOne - svcNone).toFixed(0)}`,
    ])
    pass.push(pgRatio <= 3, deliveryRatio <= 0.5)
  }
  console.log(`\nEvents (${dbEnv.DATABASE_URL ? 'external PostgreSQL' : 'embedded PGlite'})`)
  for (const [what, value, note] of rows) console.log(`${what.padEnd(50)} ${value.padStart(22)}  ${note}`)
  console.log(`events: ${pass.filter(Boolean).length}/${pass.length} targets met`)
} finally {
  studio.kill('SIGTERM')
  await new Promise((ok) => studio.once('exit', ok))
  receiver.close()
  if (admin) {
    await admin.unsafe(`drop database if exists ${benchDb} with (force)`)
    await admin.end()
  }
  rmSync(work, { recursive: true, force: true })
}
